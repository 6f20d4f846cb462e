//! Exact LRU stack distances in one pass: [`StackDistance`] per reference,
//! [`StackDistanceAnalysis`] for the histogram, [`StackDistances`] for the miss-ratio curve.
//!
//! The stack distance `sd` of a reuse is the number of distinct other lines referenced since the
//! line's previous reference (docs/definitions.md); a fully-associative LRU cache of `C` lines
//! hits iff `sd < C` (Mattson et al. 1970), so one histogram of `sd` gives the LRU miss ratio of
//! every cache size at once: `misses(C) = cold + #{reuses with sd ≥ C}`.
//!
//! Each line's most recent reference holds a timestamp; a table ([`LineTable`]) finds the line's
//! timestamp `j`, and [`LiveSet`] counts the live timestamps after `j`, which is `sd`.
//! Timestamps are compacted as the trace streams, so memory grows with distinct lines only:
//! 21–43 bytes of table per line (16-byte slots, 3/8 to 3/4 full) and under 1 byte of
//! timestamp structures; 33 bytes per line measured at 1 Mi lines.
//!
//! The analysis takes references in chunks of 32: it first loads every table slot of the chunk,
//! then the timestamp words they point to, so those cache misses overlap (a reference's table
//! lookup misses the cache at a million lines, and this is what bounds throughput), then
//! processes the chunk with its data in cache.

use super::histogram::{AtLeast, LogHistogram};
use super::mrc::{Mrc, MrcPoint};
use super::table::LineTable;
use super::timestamps::{LiveSet, MIN_CAPACITY};
use super::{Options, for_each_chunk};
use crate::access::LineAddr;
use crate::analysis::Analysis;
use crate::batch::Batch;

/// Stack distances of a stream of line references, one call per reference.
#[derive(Clone, Debug)]
pub struct StackDistance {
    /// Line → timestamp of its most recent reference.
    last: LineTable,
    live: LiveSet,
}

impl Default for StackDistance {
    fn default() -> Self {
        StackDistance::new()
    }
}

impl StackDistance {
    /// An empty stack.
    pub fn new() -> StackDistance {
        StackDistance::with_min_capacity(MIN_CAPACITY)
    }

    /// With a timestamp space of `min_capacity` (tests use a small one to compact often).
    pub(super) fn with_min_capacity(min_capacity: u64) -> StackDistance {
        StackDistance {
            last: LineTable::default(),
            live: LiveSet::new(min_capacity),
        }
    }

    /// References `line`: its stack distance, or `None` for a first reference (a cold miss).
    #[inline]
    pub fn access(&mut self, line: LineAddr) -> Option<u64> {
        if self.live.is_full() {
            self.live.compact(self.last.values_mut());
        }
        // The reference takes timestamp `now` whether it is a reuse or not.
        match self.last.replace(line.0, self.live.now()) {
            Some(j) => Some(self.live.reuse(j)),
            None => {
                self.live.insert();
                None
            }
        }
    }

    /// Prefetches the home table slot of every line of `lines`: one tight loop of independent
    /// prefetches, so that the chunk's cache misses are all in flight at once.
    #[inline]
    pub(crate) fn warm_slots(&self, lines: &[u64]) {
        for &l in lines {
            self.last.prefetch(l);
        }
    }

    /// Loads the timestamp words that the slots of `lines` lead to (after
    /// [`StackDistance::warm_slots`]). Re-reading the slots here measured faster (benches/reuse.rs,
    /// uniform: about 24.5 against 22.7 M references/s) than keeping them in an array from the
    /// first loop, and faster than loading chunk k + 1's slots before processing chunk k.
    #[inline]
    pub(crate) fn warm_live(&self, lines: &[u64]) {
        let mut acc = 0u64;
        for &l in lines {
            acc ^= self.live.touch(self.last.touch(l));
        }
        std::hint::black_box(acc);
    }

    /// Takes every line for which `keep(line)` is false out of the stack, as if it had never
    /// been referenced: the distances after it count the other lines only (a sampled stream's
    /// dropped lines, [`crate::spatial::Forgetting`]).
    pub fn forget(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let live = &mut self.live;
        self.last.retain(|line, j| {
            let k = keep(line);
            if !k {
                live.remove(j);
            }
            k
        });
    }

    /// Distinct lines referenced so far.
    pub fn distinct_lines(&self) -> u64 {
        self.live.live()
    }

    /// Every line referenced so far, least recently referenced first: replaying them in this
    /// order into another stack leaves these lines on top of it in this stack's order (the
    /// chunk merge of `crate::parallel`). O(lines · log lines).
    pub fn lines_by_recency(&self) -> Vec<u64> {
        let mut v: Vec<(u64, u64)> = self.last.entries().map(|(l, t)| (t, l)).collect();
        v.sort_unstable();
        v.into_iter().map(|(_, l)| l).collect()
    }

    /// Heap bytes held (the map's table and the timestamp structures).
    pub fn heap_bytes(&self) -> usize {
        self.last.heap_bytes() + self.live.heap_bytes()
    }
}

/// Builds the stack-distance histogram of a trace's references (see [`Options`] for which).
#[derive(Clone, Debug)]
pub struct StackDistanceAnalysis {
    options: Options,
    stack: StackDistance,
    histogram: LogHistogram,
    refs: u64,
    cold: u64,
}

impl StackDistanceAnalysis {
    /// An analysis with `options`.
    pub fn new(options: Options) -> StackDistanceAnalysis {
        StackDistanceAnalysis {
            options,
            stack: StackDistance::new(),
            histogram: LogHistogram::new(options.layout),
            refs: 0,
            cold: 0,
        }
    }

    /// The stack itself (distinct lines, memory).
    pub fn stack(&self) -> &StackDistance {
        &self.stack
    }

    /// The histogram so far.
    pub fn finish(&self) -> StackDistances {
        StackDistances {
            line_size: self.options.line_size.bytes(),
            refs: self.refs,
            cold: self.cold,
            histogram: self.histogram.clone(),
        }
    }
}

impl Analysis for StackDistanceAnalysis {
    fn observe(&mut self, batch: &Batch) {
        self.observe_each(batch, |_, _, _| {});
    }
}

impl StackDistanceAnalysis {
    /// Observes `batch` and calls `each(stack, line, sd)` for every counted reference, in order
    /// (`None`: a first reference; `stack` has taken the reference), so that another analysis
    /// can use the distances without computing them again ([`crate::sim::ThreeCSweep`]).
    #[inline]
    pub(crate) fn observe_each(
        &mut self,
        batch: &Batch,
        mut each: impl FnMut(&StackDistance, u64, Option<u64>),
    ) {
        let options = self.options;
        for_each_chunk(batch, &options, |chunk| {
            // Load the chunk's table slots, then the timestamps they lead to, so that their
            // cache misses overlap; then process it with its data in cache.
            self.stack.warm_slots(chunk);
            self.stack.warm_live(chunk);
            self.refs += chunk.len() as u64;
            for &l in chunk {
                let d = self.stack.access(LineAddr(l));
                match d {
                    Some(sd) => self.histogram.record(sd),
                    None => self.cold += 1,
                }
                each(&self.stack, l, d);
            }
        });
    }
}

/// The stack-distance histogram of a trace, and the exact LRU miss-ratio curve it gives.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StackDistances {
    /// Line size in bytes.
    pub line_size: u64,
    /// References counted (data references, plus instruction fetches when included).
    pub refs: u64,
    /// First references (cold misses), which is also the number of distinct lines.
    pub cold: u64,
    /// Stack distances of the other `refs − cold` references.
    pub histogram: LogHistogram,
}

impl StackDistances {
    /// Misses of a fully-associative LRU cache of `lines` lines, cold misses included:
    /// `cold + #{sd ≥ lines}`. Exact when `lines ≤` the layout's exact limit or a bin boundary,
    /// or when the cache holds every distinct line (no stack distance reaches `cold`);
    /// otherwise bounded (see [`super::histogram`]).
    pub fn misses(&self, lines: u64) -> AtLeast {
        if self.holds_every_reuse(lines) {
            return AtLeast {
                low: self.cold,
                high: self.cold,
                estimate: self.cold as f64,
            };
        }
        let a = self.histogram.at_least(lines);
        AtLeast {
            low: a.low + self.cold,
            high: a.high + self.cold,
            estimate: a.estimate + self.cold as f64,
        }
    }

    /// True when a cache of `lines` lines holds every distinct line and no recorded distance
    /// starts a bin at or past them: then only cold misses remain. A trace's own distances stay
    /// below its distinct lines (`cold`); a part of a trace measured in a shared stack (one
    /// bucket's references, `attribution`) may reach past its own, which the bins show.
    fn holds_every_reuse(&self, lines: u64) -> bool {
        lines >= self.cold
            && self
                .histogram
                .bins()
                .last()
                .is_none_or(|b| b.start < self.cold)
    }

    /// The LRU miss-ratio curve at `sizes_bytes` (each cache holds `size / line_size` lines,
    /// rounded down). Both ratios are fractions of all counted references; `miss_ratio_warm`
    /// leaves out cold misses. Between bin boundaries above the exact limit the count is
    /// interpolated ([`AtLeast::estimate`]); from the distinct lines up only cold misses remain
    /// (the bin holding the size may hold distances below it). An empty trace has ratios 0.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        let tail = self.histogram.tail();
        let refs = self.refs.max(1) as f64;
        let points = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / self.line_size;
                let warm = if self.holds_every_reuse(lines) {
                    0.0
                } else {
                    tail.at_least(lines).estimate
                };
                MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some((warm + self.cold as f64) / refs),
                    miss_ratio_warm: warm / refs,
                }
            })
            .collect();
        Mrc {
            method: "exact".into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points,
        }
    }
}
