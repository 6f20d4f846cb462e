//! [`Windows`]: the exact stack distance of a short reuse, for the reuse samples of a sampler
//! that reads the full stream (the sampled report on a trace: docs/sampled.md, "Reuse windows
//! measured").
//!
//! StatStack estimates a reuse's stack distance from its reuse time, and at a sharp
//! working-set cliff that estimate is biased (it places the cliff early); the reuse samples'
//! exact distances read the LRU curve within about 0.1 pp where StatStack's err by up to 10
//! (docs/accuracy/sampled.md, "What remains"). A ring holds the lines of the last [`RING`]
//! references (one store a reference); a reuse within the ring is measured when it happens,
//! by counting the distinct lines of the ring's stretch between its two references. Only the
//! sampled reuses are counted, so the counting costs the sum of their reuse times, a fraction
//! of a reference's worth per reference on long programs (docs/accuracy/sampled.md); a table
//! of every line's latest position, updated at each reference, cost 20 ns a reference on a
//! recorded sqlite3. Memory: the ring and the set a count uses, whatever the footprint.

use super::line_set::LineSet;

/// References the ring covers: reuses of at most this many references are measured. 64 Ki
/// measured as well as the whole sample on the nine programs of docs/accuracy/sampled.md
/// (0.049 pp against 0.038 for every reuse measured and 0.053 at 16 Ki).
pub const RING: u64 = 1 << 16;

/// The references the counts may read, at most: this many a reference so far, and
/// [`BUDGET_BASE`]. Past it the sample keeps StatStack's estimate. The sampled report's sampler
/// draws every reference at first and thins its samples as the run grows (`Sampler::floored`),
/// so the counts read most at the start: the base covers that (gzip, 36 M references, reads
/// about 43 M in all; a budget of 4 a reference and 2^22 stopped its counts early and left
/// its cliff 0.2 pp off where every count reads it 0.05, `scripts/sampled-accuracy.sh`'s gzip
/// trace, seed 1). A short trace sampled at a high rate (the threads example: 0.6 M
/// references, a sample every 16) would otherwise read hundreds a reference.
pub const BUDGET_PER_REF: u64 = 16;
/// See [`BUDGET_PER_REF`]: about a second of counting.
pub const BUDGET_BASE: u64 = 1 << 26;
/// [`BUDGET_BASE`] for a sampler told the run's length ahead (`Sampler::expect_refs`), which
/// keeps only the final rate's samples from the start, so its counts are not front-loaded:
/// about 60 ms of counting. On the threads example (0.6 M references, every sample's window
/// long) 2^26 read for a second and measured its LRU curve no closer (0.137/0.201/0.116 pp
/// on seeds 1-3 against 0.137/0.201/0.117, docs/sampled.md).
pub const BUDGET_BASE_AHEAD: u64 = 1 << 22;

/// The budget's rule: counts that have read `spent` references may go on at position `i`
/// under `(per reference, base)`.
fn within(spent: u64, i: u64, (per_ref, base): (u64, u64)) -> bool {
    spent <= per_ref * i + base
}

/// The ring of the last references' lines; see the module documentation (`sampling/windows.rs`).
#[derive(Clone, Debug)]
pub struct Windows {
    /// `lines[p % ring]`: the line of the reference at position `p`.
    lines: Vec<u64>,
    ring: u64,
    /// The set a count fills, emptied after it.
    set: LineSet,
    /// References the counts have read so far, and may read: `(per reference, base)`.
    spent: u64,
    budget: (u64, u64),
}

impl Default for Windows {
    fn default() -> Self {
        Windows::with_ring(RING)
    }
}

impl Windows {
    /// A ring of `ring` references (a power of two).
    pub fn with_ring(ring: u64) -> Windows {
        assert!(ring.is_power_of_two(), "ring {ring}");
        Windows {
            lines: vec![0; ring as usize],
            ring,
            set: LineSet::new(ring as usize),
            spent: 0,
            budget: (BUDGET_PER_REF, BUDGET_BASE),
        }
    }

    /// The reference at `pos` (positions consecutive from 1) touches `line`.
    #[inline(always)]
    pub fn access(&mut self, line: u64, pos: u64) {
        self.lines[(pos & (self.ring - 1)) as usize] = line;
    }

    /// The distinct lines referenced strictly between positions `j` and `i`, asked before the
    /// reference at `i` is passed to [`Windows::access`]: `None` when the window is longer
    /// than the ring, or the counts have read their budget (`BUDGET_PER_REF`).
    pub fn distinct_between(&mut self, j: u64, i: u64) -> Option<u64> {
        if i <= j || i - j > self.ring || !within(self.spent, i, self.budget) {
            return None;
        }
        self.spent += i - j - 1;
        let (from, len) = (((j + 1) & (self.ring - 1)) as usize, (i - j - 1) as usize);
        let first = len.min(self.lines.len() - from);
        Some(
            self.set
                .count([&self.lines[from..from + first], &self.lines[..len - first]]),
        )
    }

    /// Whether counts that have read `spent` references may go on at position `i` under the
    /// default budget (the tool's records read back, `record/tool_sampled.rs`: the same rule).
    pub(crate) fn within_budget(spent: u64, i: u64) -> bool {
        within(spent, i, (BUDGET_PER_REF, BUDGET_BASE))
    }

    /// The budget of a sampler told the run's length ahead ([`BUDGET_BASE_AHEAD`]).
    pub(crate) fn told_ahead(&mut self) {
        self.budget.1 = BUDGET_BASE_AHEAD;
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.lines.capacity() * 8 + self.set.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// At every reuse, the count equals the distinct lines between its two references
        /// counted by brute force; `None` past the ring.
        #[test]
        fn counts_the_distinct_lines_between_a_reuse(
            lines in proptest::collection::vec(0u64..40, 1..1500),
            ring_log in 6u32..9,
        ) {
            let ring = 1u64 << ring_log;
            let mut w = Windows::with_ring(ring);
            let mut last: std::collections::HashMap<u64, u64> = Default::default();
            for (k, &l) in lines.iter().enumerate() {
                let i = k as u64 + 1;
                if let Some(&j) = last.get(&l) {
                    let between: std::collections::HashSet<u64> =
                        lines[j as usize..(i - 1) as usize].iter().copied().collect();
                    let want = (i - j <= ring).then_some(between.len() as u64);
                    prop_assert_eq!(w.distinct_between(j, i), want, "j {} i {}", j, i);
                }
                w.access(l, i);
                last.insert(l, i);
            }
        }
    }

    proptest! {
        /// A sampler with windows at rate 1 measures every reuse within the ring, each at its
        /// brute-force stack distance.
        #[test]
        fn the_sampler_measures_every_short_reuse(
            lines in proptest::collection::vec(0u64..50, 1..2000),
        ) {
            use crate::analysis::Analysis;
            use crate::sampling::{Sampler, SamplerOptions};
            let batch: crate::Batch =
                lines.iter().map(|&l| crate::Access::load(l * 64, 4)).collect();
            let options = SamplerOptions { rate: 1.0, ..SamplerOptions::default() };
            let mut s = Sampler::new(options).unwrap().with_windows();
            s.observe(&batch);
            let p = s.finish();
            for x in p.samples() {
                let Some(d) = x.distance() else { continue };
                let (j, i) = (x.position, x.position + d + 1);
                let between: std::collections::HashSet<u64> =
                    lines[j as usize..(i - 1) as usize].iter().copied().collect();
                prop_assert_eq!(p.measured_distance(j), Some(between.len() as u64));
            }
        }
    }

    #[test]
    fn counting_stops_at_its_budget() {
        let mut w = Windows::with_ring(64);
        w.budget = (4, 10_000);
        for i in 1..=100u64 {
            w.access(i, i);
        }
        // Each count of the window (36, 100) reads 63 references; the budget at position
        // 100 is 4 · 100 + 10 000 of them.
        let budget = 4 * 100 + 10_000;
        let counts = (0..=budget / 63 + 1)
            .take_while(|_| w.distinct_between(36, 100) == Some(63))
            .count() as u64;
        assert_eq!(counts, budget / 63 + 1);
        assert_eq!(w.distinct_between(36, 100), None);
    }

    #[test]
    fn told_ahead_the_counts_start_from_a_smaller_base() {
        // At position 2^16 + 1, windows of 2^16 − 1 references: the base's worth of them.
        let (i, len) = ((1u64 << 16) + 1, (1u64 << 16) - 1);
        let counts = |w: &mut Windows| {
            (0..)
                .take_while(|_| w.distinct_between(1, i).is_some())
                .count() as u64
        };
        let mut w = Windows::default();
        w.told_ahead();
        assert_eq!(
            counts(&mut w),
            (BUDGET_PER_REF * i + BUDGET_BASE_AHEAD) / len + 1
        );
        assert_eq!(
            counts(&mut Windows::default()),
            (BUDGET_PER_REF * i + BUDGET_BASE) / len + 1
        );
    }

    #[test]
    fn a_window_wraps_around_the_ring() {
        let mut w = Windows::with_ring(64);
        for i in 1..=10_000u64 {
            w.access(i % 50, i);
        }
        // 63 references between: every one of the 50 lines.
        assert_eq!(w.distinct_between(10_001 - 64, 10_001), Some(50));
        assert_eq!(w.distinct_between(10_001 - 20, 10_001), Some(19));
        assert_eq!(w.distinct_between(10_001 - 65, 10_001), None);
    }
}
