//! Stack reuse-distance histograms (Beyls & D'Hollander, as used by Zwick et al. §2.3): per
//! interval, the distribution of the stack distances of its data references.
//!
//! Convention (docs/definitions.md): the stack distance `sd` of a reference is the number of
//! distinct *other* lines referenced since the previous reference to its line (`sd ≥ 0`; an
//! LRU cache of `C` lines hits iff `sd < C`), at the L2's line size, measured over the whole
//! trace (the stack is not reset between intervals). Bins are powers of two:
//!
//! | bin | references with |
//! |---|---|
//! | 0 | `sd = 0` |
//! | `b`, 1 … 31 | `2^(b−1) ≤ sd < 2^b` |
//! | 32 | `sd ≥ 2^31` |
//! | 33 ([`COLD_BIN`]) | a first reference (infinite distance) |
//!
//! Each interval's histogram is divided by its number of data references, so intervals of
//! different lengths compare (the vector sums to 1; an interval without data is all zeros).
//! The dimension reduction from exact distances to 34 log-scale bins is ours; the paper does not
//! say how it binned them.
//!
//! The distances come from [`StackDistanceAnalysis`] (its chunked, prefetching path: about 3×
//! faster than calling [`crate::reuse::StackDistance::access`] per reference at a million
//! lines), whose cumulative histogram is read at each interval's end; an interval's counts are
//! the difference from the previous reading. Its [`LogHistogram`](crate::reuse::LogHistogram) bins never straddle a power of
//! two, so each falls in exactly one bin here. A pass that computes the same distances for
//! something else (the report's 3C sweep) hands them over instead
//! (`ReuseHistograms::fed`, `push_distances`, crate-internal): the bins are the same.

use crate::access::{AccessKind, LineSize};
use crate::analysis::Analysis;
use crate::batch::{Batch, NO_PC};
use crate::reuse::{Layout, Options, StackDistanceAnalysis};

/// Bins of a reuse-distance histogram.
pub const REUSE_BINS: usize = 34;

/// The bin of first references.
pub const COLD_BIN: usize = REUSE_BINS - 1;

/// The bin of a reference with stack distance `sd` (`None`: a first reference).
#[inline]
pub fn reuse_bin(sd: Option<u64>) -> usize {
    match sd {
        None => COLD_BIN,
        Some(0) => 0,
        Some(d) => (1 + d.ilog2() as usize).min(COLD_BIN - 1),
    }
}

/// Builds one normalized stack-distance histogram per interval.
#[derive(Clone, Debug)]
pub struct ReuseHistograms {
    /// Its own distances; `None` when they are fed ([`ReuseHistograms::fed`]).
    stack: Option<StackDistanceAnalysis>,
    /// Cumulative counts per bin of the distances fed.
    fed: [u64; REUSE_BINS],
    /// The addresses of one `push`, as loads.
    scratch: Batch,
    /// Cumulative counts per bin at the end of the previous interval.
    previous: [u64; REUSE_BINS],
    vectors: Vec<f32>,
}

impl ReuseHistograms {
    /// Histograms of stack distances between lines of `line_size` bytes.
    pub fn new(line_size: LineSize) -> ReuseHistograms {
        ReuseHistograms {
            stack: Some(StackDistanceAnalysis::new(Options {
                line_size,
                include_instructions: false,
                // The smallest exact region: 34 KiB of bins up to distance 2^40.
                layout: Layout::new(Layout::MIN_EXACT_BITS).expect("the minimum is valid"),
            })),
            fed: [0; REUSE_BINS],
            scratch: Batch::new(),
            previous: [0; REUSE_BINS],
            vectors: Vec::new(),
        }
    }

    /// Histograms of stack distances computed elsewhere, handed over by
    /// [`ReuseHistograms::push_distances`] (at the line size the caller chose); `push` panics.
    pub(crate) fn fed() -> ReuseHistograms {
        ReuseHistograms {
            stack: None,
            fed: [0; REUSE_BINS],
            scratch: Batch::new(),
            previous: [0; REUSE_BINS],
            vectors: Vec::new(),
        }
    }

    /// Adds the data references at byte addresses `addrs` to the current interval.
    ///
    /// # Panics
    /// On histograms made by `ReuseHistograms::fed` (crate-internal), which have no stack of their own.
    pub fn push(&mut self, addrs: &[u64]) {
        let stack = self
            .stack
            .as_mut()
            .expect("fed histograms take distances (push_distances), not addresses");
        for part in addrs.chunks(crate::batch::BATCH_LEN) {
            self.scratch.clear();
            for &a in part {
                self.scratch.push_raw(a, 1, AccessKind::Load, NO_PC);
            }
            stack.observe(&self.scratch);
        }
    }

    /// Adds references of the current interval by their stack distances (`None`: a first
    /// reference), for histograms made by [`ReuseHistograms::fed`].
    pub(crate) fn push_distances(&mut self, distances: &[Option<u64>]) {
        for &d in distances {
            self.fed[reuse_bin(d)] += 1;
        }
    }

    /// Ends the current interval: stores its histogram as fractions of its references.
    pub fn end_interval(&mut self) {
        let now = match &self.stack {
            Some(stack) => {
                let s = stack.finish();
                let mut now = [0u64; REUSE_BINS];
                now[COLD_BIN] = s.cold;
                for b in s.histogram.bins() {
                    now[reuse_bin(Some(b.start))] += b.count;
                }
                now
            }
            None => self.fed,
        };
        let counts: Vec<u64> = now.iter().zip(&self.previous).map(|(n, p)| n - p).collect();
        self.previous = now;
        let total: u64 = counts.iter().sum();
        let scale = if total == 0 { 0.0 } else { 1.0 / total as f64 };
        self.vectors
            .extend(counts.iter().map(|&c| (c as f64 * scale) as f32));
    }

    /// The normalized histogram of finished interval `i`.
    pub fn histogram(&self, i: usize) -> Option<&[f32]> {
        self.vectors.get(i * REUSE_BINS..(i + 1) * REUSE_BINS)
    }

    /// Every finished histogram, interval after interval.
    pub fn histograms(&self) -> &[f32] {
        &self.vectors
    }

    /// Merges finished intervals in pairs, each into their mean ([`crate::phases::merge`]).
    pub(crate) fn merge_pairs(&mut self, from: usize, pairs: usize) {
        let v = &mut self.vectors;
        crate::phases::merge::merge_pairs(
            v,
            REUSE_BINS,
            from,
            pairs,
            crate::phases::merge::mean_f32,
        );
    }

    /// Distinct lines seen so far (the memory of the stack grows with them).
    pub fn distinct_lines(&self) -> u64 {
        match &self.stack {
            Some(stack) => stack.stack().distinct_lines(),
            // Every distinct line had one first reference.
            None => self.fed[COLD_BIN],
        }
    }
}
