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

mod beside;
use beside::Beside;

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

/// The budget's rule: counts that have read `spent` references may go on at position `i`
/// under `(per reference, base)`.
fn within(spent: u64, i: u64, (per_ref, base): (u64, u64)) -> bool {
    spent <= per_ref * i + base
}

/// The ring of the last references' lines; see the module documentation (`sampling/windows.rs`).
#[derive(Debug)]
pub struct Windows {
    /// `lines[p % ring]`: the line of the reference at position `p`.
    lines: Vec<u64>,
    ring: u64,
    /// The set a count fills, emptied after it.
    set: LineSet,
    /// References the counts have read so far, and may read: `(per reference, base)`.
    spent: u64,
    budget: (u64, u64),
    /// The counts made on a thread of their own ([`Windows::beside`]): the ring and the set
    /// are then left empty.
    beside: Option<Beside>,
}

/// Only the ring's counts are cloned: the report's stage makes the one counting beside, and
/// never clones it.
impl Clone for Windows {
    fn clone(&self) -> Windows {
        assert!(
            self.beside.is_none(),
            "the windows counted beside are not cloned"
        );
        Windows {
            lines: self.lines.clone(),
            ring: self.ring,
            set: self.set.clone(),
            spent: self.spent,
            budget: self.budget,
            beside: None,
        }
    }
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
            beside: None,
        }
    }

    /// The default ring, its windows counted on a thread beside the caller's (in the
    /// caller's when no thread starts): [`Windows::measure`] then only asks, and
    /// [`Windows::end`] gives the counts.
    pub fn beside() -> Windows {
        match Beside::start(RING) {
            Some(b) => Windows {
                lines: Vec::new(),
                ring: RING,
                set: LineSet::new(0),
                spent: 0,
                budget: (BUDGET_PER_REF, BUDGET_BASE),
                beside: Some(b),
            },
            None => Windows::default(),
        }
    }

    /// The reference at `pos` (positions consecutive from 1) touches `line`.
    #[inline(always)]
    pub fn access(&mut self, line: u64, pos: u64) {
        match &mut self.beside {
            None => self.lines[(pos & (self.ring - 1)) as usize] = line,
            Some(b) => b.push(line),
        }
    }

    /// Pushes `(j, distance)` onto `measured` for the reuse from `j` to `i` when
    /// [`Windows::distinct_between`] counts it; beside, asks for it, for [`Windows::end`].
    pub fn measure(&mut self, j: u64, i: u64, measured: &mut Vec<(u64, u32)>) {
        if self.beside.is_none() {
            if let Some(d) = self.distinct_between(j, i) {
                measured.push((j, d as u32));
            }
        } else if self.take_budget(j, i) {
            self.beside.as_mut().expect("beside").ask(j, i);
        }
    }

    /// Pushes the counts made beside onto `measured`, in the order asked, once they are all
    /// made; nothing when counted in the caller's thread.
    pub fn end(&mut self, measured: &mut Vec<(u64, u32)>) {
        if let Some(b) = &mut self.beside {
            measured.extend(b.end());
        }
    }

    /// Whether counts asked are still being made beside ([`Windows::end`] not called).
    pub fn counting(&self) -> bool {
        self.beside.as_ref().is_some_and(Beside::counting)
    }

    /// Whether the window from `j` to `i` is counted: within the ring and the budget, which
    /// it then spends.
    fn take_budget(&mut self, j: u64, i: u64) -> bool {
        if i <= j || i - j > self.ring || !within(self.spent, i, self.budget) {
            return false;
        }
        self.spent += i - j - 1;
        true
    }

    /// The distinct lines referenced strictly between positions `j` and `i`, asked before the
    /// reference at `i` is passed to [`Windows::access`]: `None` when the window is longer
    /// than the ring, or the counts have read their budget (`BUDGET_PER_REF`).
    pub fn distinct_between(&mut self, j: u64, i: u64) -> Option<u64> {
        debug_assert!(self.beside.is_none(), "counted beside: `measure`");
        if !self.take_budget(j, i) {
            return None;
        }
        let (from, len) = (((j + 1) & (self.ring - 1)) as usize, (i - j - 1) as usize);
        let first = len.min(self.lines.len() - from);
        Some(
            self.set
                .count(&[&self.lines[from..from + first], &self.lines[..len - first]]),
        )
    }

    /// Whether counts that have read `spent` references may go on at position `i` under the
    /// default budget (the tool's records read back, `record/tool_sampled.rs`: the same rule).
    pub(crate) fn within_budget(spent: u64, i: u64) -> bool {
        within(spent, i, (BUDGET_PER_REF, BUDGET_BASE))
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let beside = self
            .beside
            .as_ref()
            .map_or(0, |_| Beside::heap_bytes(self.ring));
        self.lines.capacity() * 8 + self.set.heap_bytes() + beside
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        /// Counted beside, the sampler's profile is the one counted in its own thread: the
        /// same distances of the same samples, over streams of several blocks whose windows
        /// reach back across them, at a rate that samples a few in a hundred.
        #[test]
        fn counted_beside_the_profile_is_the_same(
            seed in any::<u64>(),
            lines in 100u64..30_000,
            refs in 1usize..120_000,
        ) {
            use crate::analysis::Analysis;
            use crate::sampling::{Sampler, SamplerOptions};
            let line = |k: usize| crate::rng::splitmix64(seed ^ k as u64) % lines;
            let batches: Vec<crate::Batch> = (0..refs)
                .map(|k| crate::Access::load(line(k) * 64, 4))
                .collect::<Vec<_>>()
                .chunks(crate::batch::BATCH_LEN)
                .map(|c| c.iter().copied().collect())
                .collect();
            let options = SamplerOptions { rate: 0.03, seed, ..SamplerOptions::default() };
            let mut here = Sampler::new(options).unwrap().with_windows();
            let mut beside = Sampler::new(options).unwrap().with_windows_beside();
            for b in &batches {
                here.observe(b);
                beside.observe(b);
            }
            beside.end_windows();
            let (want, got) = (here.finish(), beside.finish());
            prop_assert!(want.measured() > 0 || refs < 1000);
            prop_assert_eq!(got, want);
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
