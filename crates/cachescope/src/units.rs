//! Units as people write and read them: byte counts (`32K`, `8MiB`, powers of 1024), counts
//! (`1M` = 1000000), and the ways sizes, counts and rates are printed. One place for the
//! simulator's geometries, the command line, the report and the Python package.
//!
//! A leaf module: it depends on nothing else in the crate (its parse errors become
//! [`crate::Error::InvalidParameter`] through `From`), so [`crate::error`] and
//! [`crate::budget`] can both use it.

use std::fmt;

/// Why a byte count or a count did not parse. Displays as the reason alone; converted into
/// [`crate::Error`] it reads `invalid {what}: {reason}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What was being parsed (`size`, `line`, `count`).
    pub what: &'static str,
    /// The reason, quoting the text.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// The bytes `s` names: a number with an optional K, M or G (powers of 1024; `KB`, `KiB`, a
/// bare `B` too), or why not (`what` names the parameter in the error).
pub fn parse_bytes(s: &str, what: &'static str) -> Result<u64, ParseError> {
    let bad = |message: String| ParseError { what, message };
    let t = s.trim();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = t.split_at(digits);
    let n: u64 = number.parse().map_err(|_| {
        bad(format!(
            "{s:?} is not a size; expected a number with an optional K, M or G, e.g. 64, 32K, 8MiB"
        ))
    })?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        u => {
            return Err(bad(format!(
                "{s:?}: unknown unit {u:?}; expected K, M or G (powers of 1024)"
            )));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| bad(format!("{s:?} is too large")))
}

/// The count `s` names: a number with an optional K, M or G (powers of 1000: `1M` = 1000000).
pub fn parse_count(s: &str) -> Result<u64, ParseError> {
    let bad = |message: String| ParseError {
        what: "count",
        message,
    };
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t, 1),
    };
    let n: u64 = num.parse().map_err(|_| {
        bad(format!(
            "{s:?} is not a count; expected e.g. 1000, 64K or 2M"
        ))
    })?;
    n.checked_mul(mult)
        .ok_or_else(|| bad(format!("{s:?} is too large")))
}

/// How many digits [`format_bytes`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// This many decimals in every unit above bytes: `1.5 KiB`, `20.0 MiB` with 1.
    Decimals(usize),
    /// Three significant digits: `1.50 KiB`, `20.0 MiB`, `300 GiB` (the CLI's summaries).
    ThreeDigits,
}

/// `bytes` in binary units: whole bytes below 1 KiB (`512 B`), else KiB, MiB, GiB or TiB with
/// the digits `precision` says.
pub fn format_bytes(bytes: u64, precision: Precision) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        return format!("{bytes} B");
    }
    let digits = match precision {
        Precision::Decimals(d) => d,
        Precision::ThreeDigits if v >= 100.0 => 0,
        Precision::ThreeDigits if v >= 10.0 => 1,
        Precision::ThreeDigits => 2,
    };
    format!("{v:.digits$} {}", UNITS[unit])
}

/// A cache size as the size flags write it, for table columns: `32K`, `64M`, `100B`; a size
/// that is not a whole number of its unit keeps two decimals (`1.50K`, `1.25M`).
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let v = bytes as f64 / unit as f64;
            return if bytes % unit == 0 {
                format!("{}{name}", bytes / unit)
            } else {
                format!("{v:.2}{name}").replace(".00", "")
            };
        }
    }
    format!("{bytes}B")
}

/// A byte size on a plot axis (any real value): `32K`, `1.5K`, `64B`, `1G`; one decimal when
/// not whole in its unit.
pub fn axis_bytes(b: f64) -> String {
    const UNITS: [(f64, &str); 4] = [
        (1e0, "B"),
        (1024.0, "K"),
        (1048576.0, "M"),
        (1073741824.0, "G"),
    ];
    let mut out = format!("{b:.0}B");
    for (unit, name) in UNITS {
        if b >= unit {
            let v = b / unit;
            out = if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0}{name}")
            } else {
                format!("{v:.1}{name}")
            };
        }
    }
    out
}

/// `1234567` → `1,234,567`: counts on the terminal and in the report, so both agree.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, plural unless the count is 1: `1 thread`, `3 threads`,
/// `1,024 cores` (the count as [`thousands`] writes it; the plural adds an `s`).
pub fn count_of(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// A rate of references per second: `850 refs/s`, `12.3 K refs/s`, `45.6 M refs/s`.
pub fn rate(refs: u64, seconds: f64) -> String {
    let r = refs as f64 / seconds.max(1e-9);
    if r >= 1e6 {
        format!("{:.1} M refs/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} K refs/s", r / 1e3)
    } else {
        format!("{r:.0} refs/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_their_nouns() {
        assert_eq!(count_of(1, "thread"), "1 thread");
        assert_eq!(count_of(0, "core"), "0 cores");
        assert_eq!(count_of(1234, "line"), "1,234 lines");
    }

    #[test]
    fn sizes_with_units() {
        for (s, n) in [
            ("32768", 32768),
            ("32K", 32768),
            ("32KiB", 32768),
            ("8M", 8 << 20),
        ] {
            assert_eq!(parse_bytes(s, "size").unwrap(), n);
        }
        assert_eq!(parse_bytes(" 1g ", "size").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("64B", "size").unwrap(), 64);
        assert!(parse_bytes("1.5K", "size").is_err());
        assert!(parse_bytes("K", "size").is_err());
        assert!(
            parse_bytes("3T", "size")
                .unwrap_err()
                .to_string()
                .contains("unknown unit")
        );
        assert!(parse_bytes("99999999999999999999", "size").is_err());
        assert!(
            parse_bytes("17179869184G", "size")
                .unwrap_err()
                .to_string()
                .contains("too large")
        );
        let e: crate::Error = parse_bytes("12Q", "size").unwrap_err().into();
        assert_eq!(
            e.to_string(),
            "invalid size: \"12Q\": unknown unit \"q\"; expected K, M or G (powers of 1024)"
        );
    }

    #[test]
    fn counts_with_decimal_units() {
        assert_eq!(parse_count("1000").unwrap(), 1000);
        assert_eq!(parse_count("64K").unwrap(), 64_000);
        assert_eq!(parse_count("2m").unwrap(), 2_000_000);
        assert_eq!(parse_count(" 3G ").unwrap(), 3_000_000_000);
        assert_eq!(
            parse_count("1X").unwrap_err().to_string(),
            "\"1X\" is not a count; expected e.g. 1000, 64K or 2M"
        );
        assert!(parse_count("M").is_err());
        assert!(
            parse_count("99999999999G")
                .unwrap_err()
                .to_string()
                .contains("too large")
        );
    }

    #[test]
    fn bytes_in_binary_units() {
        let one = |b| format_bytes(b, Precision::Decimals(1));
        assert_eq!(one(512), "512 B");
        assert_eq!(one(1536), "1.5 KiB");
        assert_eq!(one(20 << 20), "20.0 MiB");
        assert_eq!(one(3 << 50), "3072.0 TiB");
        let three = |b| format_bytes(b, Precision::ThreeDigits);
        assert_eq!(three(512), "512 B");
        assert_eq!(three(1536), "1.50 KiB");
        assert_eq!(three(20 << 20), "20.0 MiB");
        assert_eq!(three(300 << 30), "300 GiB");
        assert_eq!(three((1 << 20) - 1), "1024 KiB");
    }

    #[test]
    fn size_labels_and_axes() {
        assert_eq!(size_label(32768), "32K");
        assert_eq!(size_label(1536), "1.50K");
        assert_eq!(size_label(100), "100B");
        assert_eq!(size_label(64 << 20), "64M");
        assert_eq!(size_label(5 << 29), "2.50G");
        assert_eq!(axis_bytes(32768.0), "32K");
        assert_eq!(axis_bytes(1536.0), "1.5K");
        assert_eq!(axis_bytes(64.0), "64B");
        assert_eq!(axis_bytes(1073741824.0), "1G");
    }

    #[test]
    fn thousands_separators_and_rates() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(rate(45_600_000, 1.0), "45.6 M refs/s");
        assert_eq!(rate(12_345, 1.0), "12.3 K refs/s");
        assert_eq!(rate(500, 2.0), "250 refs/s");
    }
}
