//! [`TwoLevelLru`]: the exact two-level simulation of [`TwoLevelAnalysis`] (a fully
//! associative LRU L1 feeding fully associative LRU L2s that see only its misses), from stack
//! distances instead of one cache per level.
//!
//! A fully associative LRU cache of `C` lines hits exactly when the reference's stack distance
//! is below `C` (Mattson et al. 1970; docs/definitions.md). So the L1's misses are the
//! references whose distance (in the whole stream) is at least the L1's lines, or that have
//! none; and every L2 size is answered by one stack distance in the stream of L1 misses. A pass
//! that already computes the stack distances ([`super::ThreeCSweep`]) hands them over, so the
//! L1 costs a comparison and the L2s one stack-distance computation per L1 miss, instead of
//! one hash-map cache per level.
//!
//! On a large footprint nearly every reference misses the L1, and each L1 miss looks up two
//! tables with one entry per line (the L2 stack and each line's last L2 time), both cache
//! misses. So the L1 misses are queued and taken 32 at a time: every slot of the chunk is
//! prefetched first, then the chunk is processed, so the misses overlap.
//!
//! [`TwoLevelAnalysis`]: crate::models::l2::TwoLevelAnalysis

use crate::LineAddr;
use crate::reuse::table::LineTable;
use crate::reuse::{Layout, LogHistogram, Mrc, MrcPoint, StackDistance};

/// L1 misses per chunk of L2 work: enough misses in flight at once, few enough to stay cached.
const CHUNK: usize = 32;

/// The two-level LRU simulation fed stack distances; see the module documentation.
#[derive(Clone, Debug)]
pub struct TwoLevelLru {
    line_size: u64,
    l1_lines: u64,
    l2_sizes: Vec<u64>,
    l2_lines: Vec<u64>,
    l2_misses: Vec<u64>,
    /// Stack distances in the stream of L1 misses.
    l2: StackDistance,
    /// Line → index of its last L2 reference (for the L2 reuse distances); charged to the
    /// [`crate::budget`] as it grows.
    last_l2: LineTable,
    /// L1 misses not yet passed to the L2s (fewer than `CHUNK` between calls).
    pending: Vec<u64>,
    refs: u64,
    l2_refs: u64,
    reuse: LogHistogram,
    /// Lines taken out of `last_l2` by [`TwoLevelLru::forget`]: still cold misses.
    forgotten: u64,
}

impl TwoLevelLru {
    /// An L1 of `l1_lines` lines and one L2 per size of `l2_sizes_bytes` (rounded down to
    /// lines of `line_size` bytes), as [`crate::models::l2::TwoLevelAnalysis::new`] with LRU.
    pub fn new(line_size: u64, l1_lines: u64, l2_sizes_bytes: &[u64]) -> TwoLevelLru {
        TwoLevelLru {
            line_size,
            l1_lines,
            l2_sizes: l2_sizes_bytes.to_vec(),
            l2_lines: l2_sizes_bytes.iter().map(|s| s / line_size).collect(),
            l2_misses: vec![0; l2_sizes_bytes.len()],
            l2: StackDistance::new(),
            last_l2: LineTable::default(),
            pending: Vec::with_capacity(CHUNK),
            refs: 0,
            l2_refs: 0,
            reuse: LogHistogram::new(Layout::DEFAULT),
            forgotten: 0,
        }
    }

    /// Takes every line for which `keep(line)` is false out of the L2s' stack and the last
    /// references (a sampled stream's dropped lines, which never come back: no reuse is lost,
    /// and they still count among the cold misses); the L2 stack distances after it count the
    /// other lines only, as [`StackDistance::forget`] says.
    pub fn forget(&mut self, mut keep: impl FnMut(u64) -> bool) {
        self.flush();
        self.l2.forget(&mut keep);
        let forgotten = &mut self.forgotten;
        self.last_l2.retain(|line, _| {
            let k = keep(line);
            *forgotten += u64::from(!k);
            k
        });
    }

    /// Lines the L2s' tables hold (the tests' bound on them).
    pub fn held_lines(&self) -> usize {
        self.last_l2.len().max(self.l2.distinct_lines() as usize)
    }

    /// One data reference to `line`, whose LRU stack distance in the whole stream is
    /// `distance` (`None`: its first reference). An L1 miss reaches the L2s within the next 32
    /// calls or at [`TwoLevelLru::flush`].
    #[inline]
    pub fn access(&mut self, line: u64, distance: Option<u64>) {
        self.refs += 1;
        if distance.is_some_and(|d| d < self.l1_lines) {
            return;
        }
        self.pending.push(line);
        if self.pending.len() == CHUNK {
            self.flush();
        }
    }

    /// Passes the queued L1 misses to the L2s: their table slots first, all at once, then
    /// each in order.
    pub fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for &l in &pending {
            self.last_l2.prefetch(l);
        }
        self.l2.warm_slots(&pending);
        self.l2.warm_live(&pending);
        for &line in &pending {
            let now = self.l2_refs;
            self.l2_refs += 1;
            if let Some(prev) = self.last_l2.replace(line, now) {
                self.reuse.record(now - prev - 1);
            }
            let d = self.l2.access(LineAddr(line));
            for (&lines, m) in self.l2_lines.iter().zip(&mut self.l2_misses) {
                *m += u64::from(d.is_none_or(|d| d >= lines));
            }
        }
        self.pending = pending;
        self.pending.clear();
    }

    /// The counts so far, as [`crate::models::l2::TwoLevelAnalysis::finish`] gives them.
    pub fn finish(&self) -> TwoLevelResult {
        if !self.pending.is_empty() {
            // Not flushed since the last access: count the queue on a copy.
            let mut copy = self.clone();
            copy.flush();
            return copy.finish();
        }
        TwoLevelResult {
            line_size: self.line_size,
            policy: "lru".into(),
            l1_lines: self.l1_lines,
            refs: self.refs,
            l1_misses: self.l2_refs,
            cold: self.last_l2.len() as u64 + self.forgotten,
            l2_sizes_bytes: self.l2_sizes.clone(),
            l2_misses: self.l2_misses.clone(),
            l2_reuse: self.reuse.clone(),
        }
    }
}

/// What a two-level simulation counted ([`TwoLevelAnalysis`](crate::models::l2::TwoLevelAnalysis) or [`TwoLevelLru`]). Here, below
/// the models, so that the simulators and the L2 model share it without importing each other.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TwoLevelResult {
    /// Line size in bytes.
    pub line_size: u64,
    /// The L2 policy: `lru` or `random`.
    pub policy: String,
    /// L1 lines.
    pub l1_lines: u64,
    /// Data references.
    pub refs: u64,
    /// L1 misses = L2 references.
    pub l1_misses: u64,
    /// Distinct lines: the cold misses of both levels.
    pub cold: u64,
    /// The L2 sizes, as given.
    pub l2_sizes_bytes: Vec<u64>,
    /// L2 misses per size, cold included.
    pub l2_misses: Vec<u64>,
    /// Exact L2 reuse distances (L2 references in between) of the `l1_misses − cold` L2 reuses.
    pub l2_reuse: LogHistogram,
}

impl TwoLevelResult {
    /// The local L2 miss ratios (per L2 reference), `miss_ratio` with cold misses and
    /// `miss_ratio_warm` without; method `two-level`. All 0 when nothing reached the L2.
    pub fn mrc(&self) -> Mrc {
        let refs = self.l1_misses.max(1) as f64;
        let points = self
            .l2_sizes_bytes
            .iter()
            .zip(&self.l2_misses)
            .map(|(&size_bytes, &m)| MrcPoint {
                size_bytes,
                lines: size_bytes / self.line_size,
                miss_ratio: Some(m as f64 / refs),
                miss_ratio_warm: m.saturating_sub(self.cold) as f64 / refs,
            })
            .collect();
        Mrc {
            method: "two-level".into(),
            policy: self.policy.clone(),
            line_size: self.line_size,
            points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::analysis::Analysis;
    use crate::batch::Batch;
    use crate::models::l2::TwoLevelAnalysis;
    use crate::sim::Policy;
    use proptest::prelude::*;

    proptest! {
        /// Fed reference by reference, flushed at arbitrary points or not at all before
        /// `finish`, the counts are TwoLevelAnalysis's (LRU).
        #[test]
        fn equals_two_level_analysis_whatever_the_flushes(
            trace in proptest::collection::vec((0u64..500, any::<bool>()), 0..2000),
            l1_lines in 1u64..50,
        ) {
            let l2_sizes = [64 * 8, 64 * 64, 64 * 200];
            let mut fast = TwoLevelLru::new(64, l1_lines, &l2_sizes);
            let mut stack = StackDistance::new();
            for &(line, flush) in &trace {
                fast.access(line, stack.access(LineAddr(line)));
                if flush {
                    fast.flush();
                }
            }
            let batch: Batch = trace.iter().map(|&(l, _)| Access::load(l * 64, 4)).collect();
            let mut slow = TwoLevelAnalysis::new(64, l1_lines, &l2_sizes, Policy::Lru).unwrap();
            slow.observe(&batch);
            prop_assert_eq!(fast.finish(), slow.finish());
        }
    }
}
