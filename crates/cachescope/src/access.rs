//! The trace model: one memory access, its kind, and the mapping from byte addresses to cache lines.
//!
//! Conventions follow docs/definitions.md: a reference maps to the line of its first byte;
//! simulators that mimic Cachegrind also touch the next line when an access straddles a boundary
//! (see [`LineSize::lines_touched`]).

use std::fmt;

/// What an access does. Instruction fetches are kept apart from data references: most analyses
/// look only at data ([`AccessKind::is_data`]), unified caches and interval counting use both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum AccessKind {
    /// A data read.
    Load = 0,
    /// A data write.
    Store = 1,
    /// A read-modify-write of the same location (Valgrind's `M`); one reference.
    Modify = 2,
    /// An instruction fetch.
    Instr = 3,
}

impl AccessKind {
    /// All kinds, in their numeric order.
    pub const ALL: [AccessKind; 4] = [Self::Load, Self::Store, Self::Modify, Self::Instr];

    /// True for loads, stores and modifies.
    #[inline]
    pub fn is_data(self) -> bool {
        self != AccessKind::Instr
    }

    /// The kind with numeric code `code` (the `repr(u8)` value), if any.
    #[inline]
    pub fn from_code(code: u8) -> Option<AccessKind> {
        match code {
            0 => Some(Self::Load),
            1 => Some(Self::Store),
            2 => Some(Self::Modify),
            3 => Some(Self::Instr),
            _ => None,
        }
    }

    /// How many of `kinds` are of each kind, indexed by code. One branch-free pass: four 16-bit
    /// counters packed in a word, summed over chunks too short to overflow them (a per-kind
    /// `+= 1` in memory is a chain of dependent stores when kinds repeat, several times slower).
    pub fn count(kinds: &[AccessKind]) -> [u64; 4] {
        let mut counts = [0; 4];
        for chunk in kinds.chunks(usize::from(u16::MAX)) {
            let packed: u64 = chunk.iter().map(|&k| 1u64 << (16 * k as u32)).sum();
            for (i, c) in counts.iter_mut().enumerate() {
                *c += (packed >> (16 * i)) & 0xFFFF;
            }
        }
        counts
    }

    /// Lower-case name, as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Load => "load",
            Self::Store => "store",
            Self::Modify => "modify",
            Self::Instr => "instr",
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The thread that made a reference: the recording's own numbering, from 1 in order of
/// creation (Valgrind's thread ids). Formats that hold one stream read as [`MAIN_THREAD`];
/// docs/threads.md says what a thread id is and is not.
pub type ThreadId = u32;

/// The thread of every reference of a single-stream trace, and of a recording's first thread.
pub const MAIN_THREAD: ThreadId = 1;

/// One memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Byte address of the first byte touched.
    pub addr: u64,
    /// Bytes touched (at least 1; formats that give no size use 1).
    pub size: u32,
    /// Load, store, modify or instruction fetch.
    pub kind: AccessKind,
    /// Address of the instruction that made the access, where the format gives it
    /// (for a lackey data access: the preceding `I` line; for an instruction fetch: itself).
    pub pc: Option<u64>,
}

impl Access {
    /// A data load of `size` bytes at `addr` with no known instruction address.
    pub fn load(addr: u64, size: u32) -> Access {
        Access {
            addr,
            size,
            kind: AccessKind::Load,
            pc: None,
        }
    }

    /// A data store of `size` bytes at `addr` with no known instruction address.
    pub fn store(addr: u64, size: u32) -> Access {
        Access {
            addr,
            size,
            kind: AccessKind::Store,
            pc: None,
        }
    }
}

/// A cache-line address: a byte address shifted right by log2 of the line size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineAddr(pub u64);

/// A validated cache-line size: a power of two between 1 byte and 1 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineSize {
    shift: u32,
}

impl LineSize {
    /// The default, 64 bytes.
    pub const DEFAULT: LineSize = LineSize { shift: 6 };

    /// 4 KiB, x86-64's base page: the granule of the page-level analyses ([`crate::tlb`]).
    pub const PAGE_4K: LineSize = LineSize { shift: 12 };

    /// Validates `bytes`: it must be a power of two from 1 to 2^30.
    pub fn new(bytes: u64) -> Result<LineSize, crate::Error> {
        if bytes == 0 || !bytes.is_power_of_two() || bytes > 1 << 30 {
            return Err(crate::Error::InvalidParameter {
                name: "line size",
                message: format!("{bytes} is not a power of two between 1 and 1073741824 bytes"),
            });
        }
        Ok(LineSize {
            shift: bytes.trailing_zeros(),
        })
    }

    /// The size in bytes.
    #[inline]
    pub fn bytes(self) -> u64 {
        1 << self.shift
    }

    /// log2 of the size in bytes.
    #[inline]
    pub fn shift(self) -> u32 {
        self.shift
    }

    /// The line holding byte `addr`.
    #[inline]
    pub fn line_of(self, addr: u64) -> LineAddr {
        LineAddr(addr >> self.shift)
    }

    /// The first and last line an access of `size` bytes at `addr` touches (equal unless it
    /// straddles a boundary; Cachegrind's model never touches more than two, neither does ours:
    /// an access larger than a line is treated as touching the first and the last).
    #[inline]
    pub fn lines_touched(self, addr: u64, size: u32) -> (LineAddr, LineAddr) {
        let last = addr.saturating_add(u64::from(size.max(1)) - 1);
        (self.line_of(addr), self.line_of(last))
    }
}

impl Default for LineSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for LineSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_size_validation() {
        assert!(LineSize::new(0).is_err());
        assert!(LineSize::new(48).is_err());
        assert!(LineSize::new(1 << 31).is_err());
        assert_eq!(LineSize::new(1).unwrap().shift(), 0);
        assert_eq!(LineSize::new(64).unwrap(), LineSize::DEFAULT);
    }

    #[test]
    fn straddling_access_touches_two_lines() {
        let ls = LineSize::new(64).unwrap();
        assert_eq!(ls.lines_touched(60, 4), (LineAddr(0), LineAddr(0)));
        assert_eq!(ls.lines_touched(62, 4), (LineAddr(0), LineAddr(1)));
        assert_eq!(ls.lines_touched(64, 0), (LineAddr(1), LineAddr(1)));
        assert_eq!(
            ls.lines_touched(u64::MAX, 8),
            (ls.line_of(u64::MAX), ls.line_of(u64::MAX))
        );
    }

    #[test]
    fn kind_codes_round_trip() {
        for k in AccessKind::ALL {
            assert_eq!(AccessKind::from_code(k as u8), Some(k));
        }
        assert_eq!(AccessKind::from_code(4), None);
    }

    #[test]
    fn count_equals_one_at_a_time() {
        // Long runs of one kind cross the 65,535-access chunks whose packed counters must not
        // overflow; the mixed tail checks every kind's field.
        let mut kinds = vec![AccessKind::Instr; 200_000];
        kinds.extend((0..1000u32).map(|i| AccessKind::ALL[(i * i % 7 % 4) as usize]));
        let mut naive = [0u64; 4];
        for &k in &kinds {
            naive[k as usize] += 1;
        }
        assert_eq!(AccessKind::count(&kinds), naive);
        assert_eq!(AccessKind::count(&[]), [0; 4]);
    }
}
