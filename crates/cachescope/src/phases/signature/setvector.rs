//! Setvectors (Zwick et al. §3): for every set `s` of the L2, the number of distinct lines of the
//! interval that map to `s` (distinct keys, i.e. tags, in that set), saturated at `2^n − 1`:
//!
//! `S_s = { a/r : a in the interval, set(a) = s }`, `s_s = min(2^n − 1, |S_s|)`,
//!
//! with `r` the line size and `set(a) = (a / r) mod sets` (the same mapping as
//! [`Geometry::set_of`]). Lines are counted afresh in every interval. The method clusters the
//! vector's Euclidean magnitude `|s| = (Σ s_s²)^½` (§5.1), on the scale of
//! [`log_scale`](super::log_scale).
//!
//! Of a stream whose lines were sampled at rate `R` (a hash of the line, docs/sampled.md;
//! [`Setvectors::sampled`]) each set's count `c_s` is binomial, `E[c_s²] = R²·N_s² +
//! R(1 − R)·N_s` with `N_s` the full stream's lines in the set, so the plain magnitude holds
//! a noise term that dwarfs the footprint when an interval has a few sampled lines (at
//! `R = 0.01`, a set of 100 lines has one). The magnitude is then
//! `(Σ c_s² − (1 − R)·c_s)^½` (each term `c_s·(c_s − 1 + R)` is at least 0), whose square is
//! unbiased for `R²·Σ N_s²`: the full stream's magnitude scaled by the rate. At `R = 1` it is
//! the plain magnitude. It weighs an interval's sampled lines by how many share a set: one
//! line alone in its set counts `R`, not 1, so a bulk of intervals holding 0 or 1 sampled
//! line stays together instead of being split on that noise (docs/accuracy/sampled.md).
//!
//! Cost per data reference: a probe of a 1024-entry direct-mapped filter of lines already
//! counted in this interval, and on a filter miss an insert into an open-addressing set of the
//! interval's lines (`IntervalSet`). References go through in chunks of 32: first every
//! chunk's home slot is loaded, so their cache misses overlap, then the chunk is inserted (as
//! the stack-distance tables do). Memory: 8-byte slots, 1.6 to 3.2 per line of the interval
//! with the most distinct lines; 4 bytes per set; and per interval one `f64` (plus one byte per
//! set when the vectors are kept).

use crate::phases::merge;
use crate::sim::Geometry;

/// Entries of the filter of recently counted lines: 8 KiB, inside any L1 data cache. Measured
/// (benches/phases.rs): 256, 1024 and 4096 within noise on `phases`; 1024 best on `zipf`, by
/// less than the machine's noise.
const RECENT: usize = 1024;

/// References handled per chunk (see the module documentation).
const CHUNK: usize = 32;

/// The set of one interval's lines: open addressing with linear probing over 8-byte slots
/// holding `line + 1` (0 is a free slot; the one line that would wrap to 0 has its own flag).
/// Grows (doubling) past 5/8 full; emptied by zeroing the table at each interval's end (in
/// `zipf`, 2 MiB per 250 000 references: 8 bytes per reference, a sequential write far cheaper
/// than the probes). Compact on purpose: at 144 000 lines per interval (`zipf`,
/// benches/phases.rs) the table is 2 MiB, and 16-byte slots (line and generation, never zeroed)
/// measured half as fast.
#[derive(Clone, Debug)]
pub(super) struct IntervalSet {
    slots: Vec<u64>,
    bits: u32,
    len: usize,
    /// Whether `u64::MAX` (stored as 0) is in the set.
    has_max: bool,
}

impl IntervalSet {
    /// Slots of an empty set: 2^12.
    const MIN_BITS: u32 = 12;

    pub(super) fn new() -> IntervalSet {
        IntervalSet {
            slots: vec![0; 1 << Self::MIN_BITS],
            bits: Self::MIN_BITS,
            len: 0,
            has_max: false,
        }
    }

    /// Home slot of stored key `key`: Fibonacci hashing, the top `bits` bits of `key · 2^64/φ`.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.bits)) as usize
    }

    /// Loads the home slots of `lines` (independent loads whose misses overlap).
    #[inline]
    pub(super) fn touch(&self, lines: &[u64]) {
        let mut acc = 0u64;
        for &l in lines {
            acc ^= self.slots[self.home(l.wrapping_add(1))];
        }
        std::hint::black_box(acc);
    }

    /// Adds `line`; true if it was not in the set.
    #[inline]
    pub(super) fn insert(&mut self, line: u64) -> bool {
        let key = line.wrapping_add(1);
        if key == 0 {
            return !std::mem::replace(&mut self.has_max, true);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s == key {
                return false;
            }
            if s == 0 {
                self.slots[i] = key;
                self.len += 1;
                if 8 * self.len > 5 * self.slots.len() {
                    self.grow();
                }
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table.
    fn grow(&mut self) {
        let old = std::mem::replace(&mut self.slots, vec![0; 2 << self.bits]);
        self.bits += 1;
        let mask = self.slots.len() - 1;
        for key in old.into_iter().filter(|&k| k != 0) {
            let mut i = self.home(key);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = key;
        }
    }

    /// Empties the set, keeping its capacity.
    pub(super) fn clear(&mut self) {
        self.slots.fill(0);
        self.len = 0;
        self.has_max = false;
    }

    /// Lines in the set.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len + usize::from(self.has_max)
    }
}

/// Builds one setvector per interval from the data addresses pushed to it.
#[derive(Clone, Debug)]
pub struct Setvectors {
    shift: u32,
    set_mask: u64,
    max: u32,
    /// Distinct lines seen in the current interval.
    seen: IntervalSet,
    /// `recent[line % RECENT] == line` proves the line was counted in this interval; an entry
    /// that cannot be a line of its slot (`slot + 1`) means empty.
    recent: Box<[u64]>,
    counts: Vec<u32>,
    ways: u32,
    /// `1 − R` of a stream sampled at rate `R` (0 for a full stream).
    noise: f64,
    magnitudes: Vec<f64>,
    vectors: Option<Vec<u8>>,
}

fn empty_recent() -> Box<[u64]> {
    (0..RECENT as u64).map(|s| s + 1).collect()
}

impl Setvectors {
    /// Setvectors of `l2`, saturating at `2^bits − 1` (`bits` from 1 to 8); `keep_vectors`
    /// stores each interval's vector (one byte per set), otherwise only its magnitude.
    pub fn new(l2: Geometry, bits: u32, keep_vectors: bool) -> Setvectors {
        debug_assert!((1..=8).contains(&bits));
        Setvectors {
            shift: l2.line_size().shift(),
            set_mask: l2.sets() - 1,
            max: (1 << bits) - 1,
            seen: IntervalSet::new(),
            recent: empty_recent(),
            counts: vec![0; l2.sets() as usize],
            ways: l2.assoc(),
            noise: 0.0,
            magnitudes: Vec::new(),
            vectors: keep_vectors.then(Vec::new),
        }
    }

    /// The same for a stream of the lines sampled at `rate` (in (0, 1]): each magnitude
    /// estimates the full stream's times the rate (see the module documentation). The kept
    /// vectors stay the sampled counts.
    pub fn sampled(mut self, rate: f64) -> Setvectors {
        debug_assert!(rate > 0.0 && rate <= 1.0);
        self.noise = 1.0 - rate.clamp(0.0, 1.0);
        self
    }

    /// Adds the data references at byte addresses `addrs` to the current interval.
    pub fn push(&mut self, addrs: &[u64]) {
        let mut fresh = [0u64; CHUNK];
        for chunk in addrs.chunks(CHUNK) {
            // Lines the filter does not know yet (branch-free append).
            let mut n = 0;
            for &a in chunk {
                let line = a >> self.shift;
                let slot = &mut self.recent[line as usize % RECENT];
                fresh[n] = line;
                n += usize::from(*slot != line);
                *slot = line;
            }
            self.seen.touch(&fresh[..n]);
            for &line in &fresh[..n] {
                if self.seen.insert(line) {
                    self.counts[(line & self.set_mask) as usize] += 1;
                }
            }
        }
    }

    /// Ends the current interval: stores its setvector and starts an empty one.
    pub fn end_interval(&mut self) {
        let (mut squares, mut lines) = (0u64, 0u64);
        let max = self.max;
        if let Some(v) = &mut self.vectors {
            v.extend(self.counts.iter().map(|&c| c.min(max) as u8));
        }
        for c in &mut self.counts {
            let s = u64::from((*c).min(max));
            squares += s * s;
            lines += s;
            *c = 0;
        }
        // A full stream's noise is 0: the plain magnitude, to the bit.
        let square = squares as f64 - self.noise * lines as f64;
        self.magnitudes.push(square.max(0.0).sqrt());
        self.seen.clear();
        for (slot, r) in self.recent.iter_mut().enumerate() {
            *r = slot as u64 + 1;
        }
    }

    /// Ways of the L2 (the unit of a setvector element on the log scale).
    pub fn ways(&self) -> u32 {
        self.ways
    }

    /// Number of sets (elements per setvector).
    pub fn sets(&self) -> usize {
        self.counts.len()
    }

    /// Magnitude `|s|` of each finished interval's setvector.
    pub fn magnitudes(&self) -> &[f64] {
        &self.magnitudes
    }

    /// The setvector of finished interval `i`, if vectors are kept.
    pub fn vector(&self, i: usize) -> Option<&[u8]> {
        let n = self.counts.len();
        self.vectors.as_ref()?.get(i * n..(i + 1) * n)
    }

    /// Every kept setvector, interval after interval (one byte per set), if kept.
    pub fn vectors(&self) -> Option<&[u8]> {
        self.vectors.as_deref()
    }

    /// Merges finished intervals in pairs, each into their mean ([`crate::phases::merge`]).
    pub(crate) fn merge_pairs(&mut self, from: usize, pairs: usize) {
        merge::merge_pairs(&mut self.magnitudes, 1, from, pairs, merge::mean_f64);
        let w = self.counts.len();
        if let Some(v) = &mut self.vectors {
            merge::merge_pairs(v, w, from, pairs, merge::mean_u8);
        }
    }
}
