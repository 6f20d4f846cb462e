//! [`Watchpoints`]: the active watchpoints, a map line → sampled position behind a bitmap
//! filter that answers "certainly not watched" with one bit test.
//!
//! A line's filter bit is chosen by multiplicative hashing of the address of its first byte,
//! `(line·line_size)·φ·2^64`, keeping bits 32 and up under a mask: the per-reference test is
//! then `addr & !(line_size − 1)`, a multiply, a constant shift, a mask and a bit test, with no
//! shift by a variable amount. The filter has at least [`MIN_BITS`] bits and
//! [`BITS_PER_WATCH`] per watchpoint (up to 2^32 bits), so a reference to an unwatched line
//! tests a set bit with probability at most 1/[`BITS_PER_WATCH`] (for lines spread evenly by
//! the hash).
//!
//! Bits are exact: a bit is set iff a live watchpoint maps to it. Removing a watchpoint clears
//! its bit unless another one shares it; the rare shared bits are counted in a small map. (A
//! first version left removed bits set until a periodic rebuild: on a Zipf stream the hot
//! lines, sampled most often, kept their stale bits and 17 % of references went to the map.)
//!
//! Tuning (benches/sampling.rs, rate 10^−4): 256 bits per watchpoint; 64 Ki bits (8 KiB) is the
//! smallest filter, small enough to stay in the L1 cache next to the batch being read.

use hashbrown::HashMap;

/// Smallest filter: 2^16 bits (8 KiB).
const MIN_BITS_LOG2: u32 = 16;

/// Smallest filter, in bits.
pub(super) const MIN_BITS: u64 = 1 << MIN_BITS_LOG2;

/// Largest filter: 2^32 bits (the hash keeps 32 bits).
const MAX_BITS: u64 = 1 << 32;

/// Filter bits per active watchpoint (at least, up to [`MAX_BITS`]).
pub(super) const BITS_PER_WATCH: u64 = 256;

/// 2^64 / φ, odd: the multiplier of Fibonacci hashing.
const FIB: u64 = 0x9e37_79b9_7f4a_7c15;

/// The filter half of [`Watchpoints`], borrowed for a run of tests.
#[derive(Clone, Copy, Debug)]
pub(super) struct Filter<'a> {
    bits: &'a [u64],
    /// Filter bits − 1.
    mask: u64,
}

impl Filter<'_> {
    /// False if no watched line starts at `key` (a line's first byte address); true if one may.
    #[inline(always)]
    pub fn test(&self, key: u64) -> bool {
        let i = slot(key, self.mask);
        self.bits[(i >> 6) as usize] & (1 << (i & 63)) != 0
    }
}

/// The filter bit of the line starting at byte `key`.
#[inline(always)]
fn slot(key: u64, mask: u64) -> u64 {
    (key.wrapping_mul(FIB) >> 32) & mask
}

/// The active watchpoints; see the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Watchpoints {
    /// One bit per filter slot.
    bits: Vec<u64>,
    /// Filter bits − 1.
    mask: u64,
    /// log2 of the line size: a line's key is `line << line_shift`.
    line_shift: u32,
    /// Watched line → 1-based position of the sample that set the watchpoint.
    map: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// Filter slot → live watchpoints on it beyond the first (only slots shared by two or more).
    shared: HashMap<u64, u32, foldhash::fast::RandomState>,
}

impl Watchpoints {
    /// No watchpoint, for lines of `2^line_shift` bytes.
    pub fn new(line_shift: u32) -> Watchpoints {
        Watchpoints {
            bits: vec![0; (MIN_BITS / 64) as usize],
            mask: MIN_BITS - 1,
            line_shift,
            map: HashMap::default(),
            shared: HashMap::default(),
        }
    }

    /// The filter, to test references by the address of their line's first byte.
    #[inline(always)]
    pub fn filter(&self) -> Filter<'_> {
        Filter {
            bits: &self.bits,
            mask: self.mask,
        }
    }

    /// Removes the watchpoint on `line`, returning the position of the sample that set it.
    #[inline]
    pub fn take(&mut self, line: u64) -> Option<u64> {
        let j = self.map.remove(&line)?;
        let i = slot(line << self.line_shift, self.mask);
        match self.shared.get_mut(&i) {
            Some(1) => {
                self.shared.remove(&i);
            }
            Some(more) => *more -= 1,
            None => self.bits[(i >> 6) as usize] &= !(1 << (i & 63)),
        }
        Some(j)
    }

    /// Sets a watchpoint on `line` for the sample at `position`; the line must not be watched.
    pub fn insert(&mut self, line: u64, position: u64) {
        let old = self.map.insert(line, position);
        debug_assert!(old.is_none(), "a line has at most one watchpoint");
        let bits = self.mask + 1;
        if self.map.len() as u64 * BITS_PER_WATCH > bits && bits < MAX_BITS {
            self.rebuild(2 * bits);
        } else {
            self.set(line);
        }
    }

    /// Sets `line`'s bit, or counts it as shared if it is set already.
    fn set(&mut self, line: u64) {
        let i = slot(line << self.line_shift, self.mask);
        let word = &mut self.bits[(i >> 6) as usize];
        if *word & (1 << (i & 63)) != 0 {
            *self.shared.entry(i).or_insert(0) += 1;
        } else {
            *word |= 1 << (i & 63);
        }
    }

    /// Resizes the filter to `bits` bits and sets the bits of the watchpoints again.
    fn rebuild(&mut self, bits: u64) {
        self.mask = bits - 1;
        self.bits.clear();
        self.bits.resize((bits / 64) as usize, 0);
        self.shared.clear();
        let lines: Vec<u64> = self.map.keys().copied().collect();
        for line in lines {
            self.set(line);
        }
    }

    /// Keeps only the watchpoints `(line, position)` for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64, u64) -> bool) {
        self.map.retain(|&l, &mut p| keep(l, p));
        self.rebuild(self.mask + 1);
    }

    /// Active watchpoints: (line, sampled position), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&l, &p)| (l, p))
    }

    /// Number of active watchpoints.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Filter size in bits.
    #[cfg(test)]
    pub fn filter_bits(&self) -> u64 {
        self.mask + 1
    }

    /// Set filter bits.
    #[cfg(test)]
    pub fn bits_set(&self) -> u64 {
        self.bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Heap bytes held (filter and maps).
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.map.allocation_size() + self.shared.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True when `line`'s filter bit is set.
    fn maybe(w: &Watchpoints, line: u64) -> bool {
        w.filter().test(line << 6)
    }

    #[test]
    fn bits_are_exact_across_growth_and_removals() {
        let mut w = Watchpoints::new(6);
        // Many lines, so that the filter grows and some bits are shared.
        let lines: Vec<u64> = (0..3000u64).map(|i| i * 7919 + (i << 40)).collect();
        for (i, &l) in lines.iter().enumerate() {
            w.insert(l, i as u64 + 1);
            assert!(maybe(&w, l));
        }
        assert!(w.filter_bits() >= 3000 * BITS_PER_WATCH);
        let shared: u32 = w.shared.values().sum();
        assert_eq!(w.bits_set() + u64::from(shared), 3000);
        for (i, &l) in lines.iter().enumerate().filter(|(i, _)| i % 10 != 0) {
            assert_eq!(w.take(l), Some(i as u64 + 1));
            assert_eq!(w.take(l), None);
        }
        assert_eq!(w.len(), 300);
        for (i, &l) in lines.iter().enumerate() {
            if i % 10 == 0 {
                assert!(maybe(&w, l), "live watchpoint {l} must pass");
            }
        }
        let shared: u32 = w.shared.values().sum();
        assert_eq!(w.bits_set() + u64::from(shared), 300);
        for &l in lines.iter().step_by(10) {
            w.take(l);
        }
        assert_eq!((w.bits_set(), w.shared.len()), (0, 0));
    }

    #[test]
    fn shared_bits_survive_the_removal_of_one_owner() {
        let mut w = Watchpoints::new(6);
        // Find two lines on the same bit of the smallest filter.
        let a = 1u64;
        let i = slot(a << 6, w.mask);
        let b = (2..).find(|&l| slot(l << 6, w.mask) == i).unwrap();
        w.insert(a, 1);
        w.insert(b, 2);
        assert_eq!(w.take(a), Some(1));
        assert!(maybe(&w, b));
        assert_eq!(w.take(b), Some(2));
        assert!(!maybe(&w, b) && !maybe(&w, a));
    }

    #[test]
    fn false_positives_stay_below_the_design_bound() {
        let mut w = Watchpoints::new(6);
        for l in 0..1000u64 {
            w.insert(l * 1_000_003, l);
        }
        // Unwatched lines: a sequential stream, the worst case for a weak hash.
        let probes = 1_000_000u64;
        let hits = (1u64 << 30..(1 << 30) + probes)
            .filter(|&l| maybe(&w, l))
            .count() as f64;
        assert!(
            hits / (probes as f64) < 2.0 / BITS_PER_WATCH as f64,
            "{hits} false positives"
        );
    }
}
