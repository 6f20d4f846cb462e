//! [`Geometry`]: a validated cache shape (size, ways, line size → sets), and its parser.
//!
//! A cache of `size` bytes with `assoc` ways and `line`-byte lines has
//! `sets = size / (assoc × line)`, any whole number: a power of two is indexed by the line
//! address's low bits, any other count by its remainder ([`SetIndex`]), as a 30 MiB 12-way L3
//! (40,960 sets) needs. A fully associative cache is the one-set case (`assoc = size / line`,
//! any number of lines). Every impossible shape is rejected here, before any work, with a
//! message that names shapes that would work.

use std::fmt;
use std::str::FromStr;

use super::set_index::SetIndex;
use crate::access::LineSize;
use crate::error::{Error, Result};

/// Most lines a simulated cache may hold: 2^31 (128 GiB of 64-byte lines).
pub const MAX_LINES: u64 = 1 << 31;

/// A validated cache shape. Build it with [`Geometry::new`], [`Geometry::fully_associative`]
/// or [`Geometry::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    size_bytes: u64,
    assoc: u32,
    sets: u64,
    line_size: LineSize,
    index: SetIndex,
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        name: "cache geometry",
        message,
    }
}

/// `bytes` as `32768 (32K)`, or just the number when it is not a whole number of KiB.
fn human(bytes: u64) -> String {
    for (shift, unit) in [(30, 'G'), (20, 'M'), (10, 'K')] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{bytes} ({}{unit})", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// The valid sizes (whole multiples of `unit`, one set's bytes) just below and above `size`.
fn nearby_sizes(size: u64, unit: u64) -> String {
    let below = size / unit * unit;
    let above = below.saturating_add(unit);
    if below >= unit && below != size {
        format!("{}, {}", human(below), human(above))
    } else {
        human(above)
    }
}

/// Associativities that divide `lines` into whole sets, the four nearest to `assoc`.
fn nearby_assocs(lines: u64, assoc: u32) -> String {
    let mut all: Vec<u64> = Vec::new();
    let mut d = 1;
    while d * d <= lines {
        if lines % d == 0 {
            all.extend([d, lines / d]);
        }
        d += 1;
    }
    all.retain(|&a| a <= u64::from(u32::MAX));
    all.sort_by_key(|&a| (a.abs_diff(u64::from(assoc)), a));
    all.dedup();
    all.truncate(4);
    all.sort_unstable();
    let list: Vec<String> = all.iter().map(u64::to_string).collect();
    list.join(", ")
}

impl Geometry {
    /// A cache of `size_bytes` bytes, `assoc` ways and `line_size`-byte lines. Valid when the
    /// line size is a power of two, `assoc ≥ 1`, and `size_bytes / (assoc × line_size)` is a
    /// whole number of sets, power of two or not (1 included: `assoc = size_bytes / line_size`
    /// is fully associative), with at most [`MAX_LINES`] lines.
    pub fn new(size_bytes: u64, assoc: u32, line_size: u64) -> Result<Geometry> {
        let line = LineSize::new(line_size).map_err(|_| {
            let below = if line_size > 1 {
                1u64 << (63 - line_size.leading_zeros())
            } else {
                1
            };
            invalid(format!(
                "line size {line_size} B is not a power of two between 1 and 1073741824 \
                 (nearest: {}{})",
                below,
                if below < 1 << 30 {
                    format!(", {}", below * 2)
                } else {
                    String::new()
                }
            ))
        })?;
        if assoc == 0 {
            return Err(invalid(
                "0 ways: a cache has at least one way (1 = direct mapped)".into(),
            ));
        }
        let way_bytes = u64::from(assoc) * line_size;
        if size_bytes == 0 {
            return Err(invalid(format!(
                "size 0: sizes that work with {assoc} ways and {line_size}-B lines: {}",
                nearby_sizes(0, way_bytes)
            )));
        }
        if size_bytes % line_size != 0 {
            return Err(invalid(format!(
                "{size_bytes} bytes is not a whole number of {line_size}-B lines ({:.2} lines); \
                 sizes that work with {assoc} ways and {line_size}-B lines: {}",
                size_bytes as f64 / line_size as f64,
                nearby_sizes(size_bytes, way_bytes)
            )));
        }
        let lines = size_bytes / line_size;
        if lines > MAX_LINES {
            return Err(invalid(format!(
                "{} lines of {line_size} B is more than the 2^31 lines a simulated cache may hold",
                lines
            )));
        }
        let sets_exact = size_bytes as f64 / way_bytes as f64;
        if u64::from(assoc) > lines {
            return Err(invalid(format!(
                "{assoc} ways × {line_size} B = {way_bytes} bytes do not fit in {size_bytes} \
                 bytes; sizes that work with {assoc} ways and {line_size}-B lines: {}",
                nearby_sizes(size_bytes, way_bytes)
            )));
        }
        if lines % u64::from(assoc) != 0 {
            return Err(invalid(format!(
                "{size_bytes} bytes / ({assoc} ways × {line_size} B) = {sets_exact:.2} sets; \
                 sizes that work with {assoc} ways and {line_size}-B lines: {}; \
                 ways that work with {size_bytes} bytes: {}",
                nearby_sizes(size_bytes, way_bytes),
                nearby_assocs(lines, assoc)
            )));
        }
        let sets = lines / u64::from(assoc);
        Ok(Geometry {
            size_bytes,
            assoc,
            sets,
            line_size: line,
            index: SetIndex::new(sets),
        })
    }

    /// A fully associative cache (one set) of `size_bytes` bytes: any whole number of lines.
    pub fn fully_associative(size_bytes: u64, line_size: u64) -> Result<Geometry> {
        let line = LineSize::new(line_size)?;
        if size_bytes == 0 || size_bytes % line.bytes() != 0 {
            return Err(invalid(format!(
                "{size_bytes} bytes is not a whole, positive number of {line_size}-B lines"
            )));
        }
        let lines = size_bytes / line.bytes();
        let assoc = u32::try_from(lines.min(MAX_LINES + 1)).unwrap_or(u32::MAX);
        Geometry::new(size_bytes, assoc, line_size)
    }

    /// Parses `SIZE,ASSOC,LINE`, e.g. `32K,8,64`, `8M,16,64` or `1M,full,64`. SIZE and LINE are
    /// bytes with an optional `K`, `M` or `G` suffix (powers of 1024; `KiB`, `KB` and a trailing
    /// `B` are accepted too, in any case); ASSOC is a number of ways or `full`.
    pub fn parse(text: &str) -> Result<Geometry> {
        let bad = |what: String| {
            invalid(format!(
                "{what} in {text:?}: expected SIZE,ASSOC,LINE like 32K,8,64 (SIZE and LINE in \
                 bytes with an optional K, M or G suffix, powers of 1024; ASSOC a number of \
                 ways or `full`)"
            ))
        };
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        let [size, assoc, line] = fields[..] else {
            return Err(bad(format!("{} fields", fields.len())));
        };
        let size_bytes = crate::units::parse_bytes(size, "size")
            .map_err(|_| bad(format!("size {size:?} is not a byte count")))?;
        let line_bytes = crate::units::parse_bytes(line, "line")
            .map_err(|_| bad(format!("line {line:?} is not a byte count")))?;
        if assoc.eq_ignore_ascii_case("full") {
            return Geometry::fully_associative(size_bytes, line_bytes);
        }
        let ways: u32 = assoc
            .parse()
            .map_err(|_| bad(format!("associativity {assoc:?} is not a number or `full`")))?;
        Geometry::new(size_bytes, ways, line_bytes)
    }

    /// Total size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Ways per set.
    pub fn assoc(&self) -> u32 {
        self.assoc
    }

    /// Number of sets (any whole number; see [`Geometry::set_index`]).
    pub fn sets(&self) -> u64 {
        self.sets
    }

    /// The line size.
    pub fn line_size(&self) -> LineSize {
        self.line_size
    }

    /// Lines the cache holds: `sets × assoc`.
    pub fn lines(&self) -> u64 {
        self.sets * u64::from(self.assoc)
    }

    /// True for one set (every line may go anywhere).
    pub fn is_fully_associative(&self) -> bool {
        self.sets == 1
    }

    /// How a line address picks its set: the low bits, or the remainder when the set count
    /// is not a power of two.
    #[inline]
    pub fn set_index(&self) -> SetIndex {
        self.index
    }

    /// The set a line address maps to ([`SetIndex::of`]).
    #[inline]
    pub fn set_of(&self, line: u64) -> u64 {
        self.index.of(line)
    }
}

impl FromStr for Geometry {
    type Err = Error;

    fn from_str(s: &str) -> Result<Geometry> {
        Geometry::parse(s)
    }
}

impl fmt::Display for Geometry {
    /// `32 KiB, 8-way, 64 B lines` (or `direct mapped`, `fully associative`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.size_bytes;
        match [(30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|&(shift, _)| s >= 1 << shift && s % (1 << shift) == 0)
        {
            Some((shift, unit)) => write!(f, "{} {unit}, ", s >> shift)?,
            None => write!(f, "{s} B, ")?,
        }
        if self.sets == 1 && self.assoc > 1 {
            write!(f, "fully associative, ")?;
        } else if self.assoc == 1 {
            write!(f, "direct mapped, ")?;
        } else {
            write!(f, "{}-way, ", self.assoc)?;
        }
        write!(f, "{} B lines", self.line_size.bytes())
    }
}

impl serde::Serialize for Geometry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Geometry", 4)?;
        st.serialize_field("size_bytes", &self.size_bytes)?;
        st.serialize_field("assoc", &self.assoc)?;
        st.serialize_field("line_size", &self.line_size.bytes())?;
        st.serialize_field("sets", &self.sets)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<Geometry>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn valid_shapes() {
        let g = Geometry::new(32768, 8, 64).unwrap();
        assert_eq!((g.sets(), g.lines(), g.assoc()), (64, 512, 8));
        assert_eq!(g.to_string(), "32 KiB, 8-way, 64 B lines");
        let fa = Geometry::fully_associative(6 * 64, 64).unwrap();
        assert!(fa.is_fully_associative());
        assert_eq!((fa.assoc(), fa.lines()), (6, 6));
        assert_eq!(fa.to_string(), "384 B, fully associative, 64 B lines");
        assert_eq!(
            Geometry::new(4096, 1, 64).unwrap().to_string(),
            "4 KiB, direct mapped, 64 B lines"
        );
    }

    #[test]
    fn any_whole_number_of_sets() {
        // The 30 MiB 12-way L3 and Intel's 12 MiB 16-way LL.
        let g = Geometry::parse("30M,12,64").unwrap();
        assert_eq!((g.sets(), g.lines()), (40_960, 491_520));
        assert_eq!(g.set_of(40_960 + 7), 7);
        assert_eq!(Geometry::new(12 << 20, 16, 64).unwrap().sets(), 12_288);
        assert_eq!(Geometry::new(3 * 64, 1, 64).unwrap().set_of(5), 2);
        // Powers of two still take the low bits.
        assert_eq!(Geometry::parse("32K,8,64").unwrap().set_of(0xffff), 63);
    }

    #[test]
    fn parses_units_and_full() {
        assert_eq!(
            Geometry::parse("32K,8,64").unwrap(),
            Geometry::new(32768, 8, 64).unwrap()
        );
        assert_eq!(
            " 8MiB , 16 , 64B ".parse::<Geometry>().unwrap(),
            Geometry::new(8 << 20, 16, 64).unwrap()
        );
        assert_eq!(Geometry::parse("1g,16,128").unwrap().size_bytes(), 1 << 30);
        let fa = Geometry::parse("96K,full,64").unwrap();
        assert_eq!((fa.sets(), fa.assoc()), (1, 1536));
    }

    #[test]
    fn rejects_bad_text() {
        for bad in [
            "32K,8",
            "32K,8,64,1",
            "32Q,8,64",
            "32K,x,64",
            "",
            "32K,8,-64",
        ] {
            let m = message(Geometry::parse(bad));
            assert!(m.contains("expected SIZE,ASSOC,LINE"), "{bad}: {m}");
        }
    }

    #[test]
    fn impossible_shapes_say_what_would_work() {
        assert_eq!(
            message(Geometry::new(32768, 6, 64)),
            "invalid cache geometry: 32768 bytes / (6 ways × 64 B) = 85.33 sets; sizes that \
             work with 6 ways and 64-B lines: 32640, 33024; ways that work with \
             32768 bytes: 1, 2, 4, 8"
        );
        // 30 MiB / (7 × 64 B) is not whole: the nearest whole shapes are named.
        let m = message(Geometry::new(30 << 20, 7, 64));
        assert!(m.contains("70217.14 sets"), "{m}");
        assert!(m.contains("31457216, 31457664"), "{m}");
        assert!(
            m.contains("ways that work with 31457280 bytes: 4, 5, 6, 8"),
            "{m}"
        );
        assert!(message(Geometry::new(32768, 0, 64)).contains("at least one way"));
        assert!(message(Geometry::new(32768, 8, 48)).contains("nearest: 32, 64"));
        assert!(message(Geometry::new(32016, 8, 64)).contains("500.25 lines"));
        assert!(message(Geometry::new(256, 8, 64)).contains("do not fit"));
        assert!(message(Geometry::new(0, 8, 64)).contains("size 0"));
        assert!(message(Geometry::new(1 << 40, 1, 64)).contains("2^31"));
    }
}
