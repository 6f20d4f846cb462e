//! Byte counts as people write them: `32768`, `32K`, `32KiB`, `8M`, `1g`, `64B` (powers of
//! 1024). One parser for the simulator's geometries, the command line and the Python package.

use crate::error::{Error, Result};

/// The bytes `s` names, or why not (`what` names the parameter in the error).
pub fn parse_bytes(s: &str, what: &'static str) -> Result<u64> {
    let bad = |message: String| Error::InvalidParameter {
        name: what,
        message,
    };
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

#[cfg(test)]
mod tests {
    use super::parse_bytes;

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
    }
}
