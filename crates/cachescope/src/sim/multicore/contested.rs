//! [`Contested`]: the lines that have moved between cores (a transfer, or another core's copy
//! invalidated by a write), which a core running ahead of another in modelled time must not
//! touch before the others catch up (`crate::interleave::Timed`): the other core may reach
//! them first. A bit per hashed line in front of the set makes the common answer, "never
//! contested", one load.

use hashbrown::HashSet;

/// Bits of the filter (a power of two): 8 KiB.
const FILTER_BITS: usize = 1 << 16;

#[derive(Clone, Debug)]
pub(super) struct Contested {
    filter: Vec<u64>,
    lines: HashSet<u64, foldhash::fast::FixedState>,
}

/// The filter bit of `line`.
#[inline]
fn bit(line: u64) -> usize {
    (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FILTER_BITS.trailing_zeros())) as usize
}

impl Contested {
    pub(super) fn new() -> Contested {
        Contested {
            filter: vec![0; FILTER_BITS / 64],
            lines: HashSet::default(),
        }
    }

    /// `line` moved between cores.
    #[inline]
    pub(super) fn insert(&mut self, line: u64) {
        let b = bit(line);
        self.filter[b / 64] |= 1 << (b % 64);
        self.lines.insert(line);
    }

    /// Whether `line` ever moved between cores.
    #[inline]
    pub(super) fn contains(&self, line: u64) -> bool {
        let b = bit(line);
        self.filter[b / 64] >> (b % 64) & 1 == 1 && self.lines.contains(&line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_was_inserted_and_nothing_else() {
        let mut c = Contested::new();
        for l in (0..5000u64).map(|k| k * 7919) {
            c.insert(l);
        }
        assert!((0..5000u64).all(|k| c.contains(k * 7919)));
        assert!(!(0..5000u64).any(|k| c.contains(k * 7919 + 1)));
    }
}
