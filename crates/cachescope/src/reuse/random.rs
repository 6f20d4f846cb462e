//! [`RandomReplacementAnalysis`]: fully-associative random-replacement caches of several sizes,
//! simulated side by side in the same pass.
//!
//! Random replacement has no stack property, so no single histogram gives its miss ratio at
//! every size: each requested size gets its own cache (a `Vec` of resident lines and a map line →
//! slot). A miss in a full cache evicts a uniformly chosen slot. The result is **one seeded
//! realisation** of the random process, not its expectation (StatCache models the expectation):
//! a different seed gives a slightly different curve, and a curve need not fall monotonically
//! with size. The cache of `L` lines draws victims from its own [`Pcg64`] whose state comes from
//! the seed through SplitMix64 and whose stream is `L`, using only `next_u64` (and Lemire's
//! multiply-shift for the range), so a seed gives the same curve on every platform and `rand`
//! version.
//!
//! Until a cache of `L` lines first has to evict, it holds every line seen so far and misses
//! exactly on first references; so it is only built, from the first `L` distinct lines in order
//! of first reference, when line `L + 1` arrives, with the same contents and the same victims as
//! if it had been simulated from the start. Caches larger than the trace's footprint cost nothing.
//!
//! Lines are numbered in order of first reference (one shared table), so a cache keeps its
//! resident lines as a bitset over those numbers: a lookup is one bit test, not a hash probe.
//! Cost: once built, one bit test per reference per size, and a random draw, a slot write and
//! two bit flips per miss. Memory per built cache: 8 bytes per line of capacity and one bit per
//! distinct line of the trace; shared: the table of lines seen (21–43 bytes per line).

use rand::Rng;
use rand_pcg::Pcg64;

use super::mrc::{Mrc, MrcPoint};
use super::table::LineTable;
use super::{Options, data_lines};
use crate::analysis::Analysis;
use crate::batch::Batch;

/// One fully-associative random-replacement cache, over line numbers (order of first reference).
#[derive(Clone, Debug)]
struct RandomCache {
    size_bytes: u64,
    lines: u64,
    /// False while the cache has never had to evict (it holds every line seen so far).
    built: bool,
    /// Resident line numbers; a victim is a random index.
    slots: Vec<u64>,
    /// Bit `n` is set when line number `n` is resident.
    resident: Vec<u64>,
    rng: Pcg64,
    misses: u64,
}

impl RandomCache {
    /// Makes the cache hold lines `0..n` (the first `n` distinct lines, in order).
    fn build(&mut self, n: u64) {
        self.slots = (0..n).collect();
        self.resident = vec![0; (n as usize).div_ceil(64)];
        for id in 0..n {
            self.set(id, true);
        }
        self.built = true;
    }

    #[inline]
    fn is_resident(&self, id: u64) -> bool {
        self.resident
            .get((id >> 6) as usize)
            .is_some_and(|w| w >> (id & 63) & 1 == 1)
    }

    #[inline]
    fn set(&mut self, id: u64, on: bool) {
        let w = (id >> 6) as usize;
        if w >= self.resident.len() {
            // Line numbers only grow: grow geometrically.
            self.resident.resize(w + 1 + w / 2, 0);
        }
        let bit = 1u64 << (id & 63);
        if on {
            self.resident[w] |= bit;
        } else {
            self.resident[w] &= !bit;
        }
    }

    #[inline]
    fn access(&mut self, id: u64) {
        if self.lines == 0 {
            self.misses += 1;
            return;
        }
        if self.is_resident(id) {
            return;
        }
        self.misses += 1;
        if (self.slots.len() as u64) < self.lines {
            self.slots.push(id);
        } else {
            let victim = below(&mut self.rng, self.lines) as usize;
            let old = std::mem::replace(&mut self.slots[victim], id);
            self.set(old, false);
        }
        self.set(id, true);
    }
}

/// SplitMix64's output function, to spread a small seed over the PCG state.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in `0..n` (n ≥ 1) by Lemire's multiply-shift (bias below n/2^64).
#[inline]
fn below(rng: &mut Pcg64, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// Simulates one random-replacement cache per requested size; see the module documentation.
#[derive(Clone, Debug)]
pub struct RandomReplacementAnalysis {
    options: Options,
    /// Line → its number, in order of first reference.
    seen: LineTable,
    /// Distinct lines so far (the next line number).
    distinct: u64,
    refs: u64,
    caches: Vec<RandomCache>,
    /// The current batch's line numbers, so each cache runs through them with its bits hot.
    lines: Vec<u64>,
    /// Whether each of `lines` is a first reference.
    first: Vec<bool>,
}

impl RandomReplacementAnalysis {
    /// Caches of `sizes_bytes` (each holds `size / line_size` lines, rounded down), victims
    /// drawn from generators seeded with `seed`. The layout in `options` is not used.
    pub fn new(options: Options, sizes_bytes: &[u64], seed: u64) -> RandomReplacementAnalysis {
        let state = (u128::from(splitmix64(seed)) << 64) | u128::from(splitmix64(!seed));
        let caches = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / options.line_size.bytes();
                RandomCache {
                    size_bytes,
                    lines,
                    built: false,
                    slots: Vec::new(),
                    resident: Vec::new(),
                    rng: Pcg64::new(state, u128::from(lines)),
                    misses: 0,
                }
            })
            .collect();
        RandomReplacementAnalysis {
            options,
            seen: LineTable::default(),
            distinct: 0,
            refs: 0,
            caches,
            lines: Vec::new(),
            first: Vec::new(),
        }
    }

    /// Builds every cache from the start instead of when it first evicts (for tests).
    #[cfg(test)]
    fn build_all(&mut self) {
        self.caches.iter_mut().for_each(|c| c.build(0));
    }

    /// The curve so far: method `exact`, policy `random`, one point per size in the order given.
    pub fn finish(&self) -> Mrc {
        let refs = self.refs.max(1) as f64;
        let cold = self.distinct;
        Mrc {
            method: "exact".into(),
            policy: "random".into(),
            line_size: self.options.line_size.bytes(),
            points: self
                .caches
                .iter()
                .map(|c| MrcPoint {
                    size_bytes: c.size_bytes,
                    lines: c.lines,
                    miss_ratio: Some(c.misses as f64 / refs),
                    miss_ratio_warm: (c.misses - cold) as f64 / refs,
                })
                .collect(),
        }
    }
}

impl Analysis for RandomReplacementAnalysis {
    fn observe(&mut self, batch: &Batch) {
        let distinct_before = self.distinct;
        self.lines.clear();
        self.first.clear();
        for line in data_lines(batch, &self.options) {
            let (id, first) = match self.seen.get(line.0) {
                Some(id) => (id, false),
                None => {
                    let id = self.distinct;
                    self.seen.replace(line.0, id);
                    self.distinct += 1;
                    (id, true)
                }
            };
            self.lines.push(id);
            self.first.push(first);
        }
        self.run_caches(distinct_before);
    }
}

impl RandomReplacementAnalysis {
    /// Takes the next references as line numbers given in order of first reference (a number
    /// never seen is the next one), as [`crate::opt::SpilledIds`] holds them: the same misses
    /// as [`Analysis::observe`] on the references they number, without looking lines up.
    pub fn observe_numbered(&mut self, ids: &[u32]) {
        let distinct_before = self.distinct;
        self.lines.clear();
        self.first.clear();
        for &id in ids {
            let id = u64::from(id);
            let first = id == self.distinct;
            self.distinct += u64::from(first);
            self.lines.push(id);
            self.first.push(first);
        }
        self.run_caches(distinct_before);
    }

    /// Runs every cache through `self.lines`.
    fn run_caches(&mut self, distinct_before: u64) {
        self.refs += self.lines.len() as u64;
        for c in &mut self.caches {
            let mut start = 0;
            if !c.built {
                // Run while the cache can take every new line: until a first reference finds
                // it full. Up to there it misses exactly on first references.
                let mut distinct = distinct_before;
                while start < self.lines.len() && !(self.first[start] && distinct == c.lines) {
                    distinct += u64::from(self.first[start]);
                    start += 1;
                }
                c.misses += distinct - distinct_before;
                if start == self.lines.len() {
                    continue;
                }
                c.build(c.lines);
            }
            for &line in &self.lines[start..] {
                c.access(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use proptest::prelude::*;

    proptest! {
        /// Building a cache when it first evicts gives the same misses as simulating it from
        /// the first reference, across batch boundaries.
        #[test]
        fn lazy_building_changes_nothing(
            trace in proptest::collection::vec(0u64..60, 0..600),
            split in 0usize..600,
            seed in any::<u64>(),
        ) {
            let sizes: Vec<u64> = (0..70).map(|l| l * 64).collect();
            let split = split.min(trace.len());
            let batches: Vec<Batch> = [&trace[..split], &trace[split..]]
                .iter()
                .map(|part| part.iter().map(|&l| Access::load(l * 64, 8)).collect())
                .collect();
            let mut lazy = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
            let mut eager = lazy.clone();
            eager.build_all();
            for b in &batches {
                lazy.observe(b);
                eager.observe(b);
            }
            prop_assert_eq!(lazy.finish(), eager.finish());
        }

        /// Line numbers in order of first reference give the misses the lines give.
        #[test]
        fn numbered_lines_equal_lines(
            trace in proptest::collection::vec(0u64..60, 0..600),
            split in 0usize..600,
            seed in any::<u64>(),
        ) {
            let sizes: Vec<u64> = (0..70).map(|l| l * 64).collect();
            let mut number = std::collections::HashMap::new();
            let ids: Vec<u32> = trace
                .iter()
                .map(|l| {
                    let next = number.len() as u32;
                    *number.entry(*l).or_insert(next)
                })
                .collect();
            let split = split.min(trace.len());
            let mut by_line = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
            let mut by_number = by_line.clone();
            for part in [&trace[..split], &trace[split..]] {
                by_line.observe(&part.iter().map(|&l| Access::load(l * 64, 8)).collect());
            }
            by_number.observe_numbered(&ids[..split]);
            by_number.observe_numbered(&ids[split..]);
            prop_assert_eq!(by_line.finish(), by_number.finish());
        }
    }
}
