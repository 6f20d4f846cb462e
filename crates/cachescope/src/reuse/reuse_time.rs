//! Reuse times in one pass: [`ReuseTime`] per reference, [`ReuseTimeAnalysis`] for the
//! histograms, [`ReuseTimes`] for the result.
//!
//! The reuse time of the reference at position `i` whose line was last referenced at `j` is
//! `rt = i − j ≥ 1` (docs/definitions.md; StatCache's reuse distance is `rt − 1`, see
//! [`super::statcache_distance`]). Besides the reuse-time histogram the analysis keeps what the
//! Xiang footprint formula needs: the histogram of first-reference positions `f` (1-based) and,
//! at [`ReuseTimeAnalysis::finish`], of `l = n + 1 − (position of the line's last reference)`.
//!
//! Memory: one table entry per distinct line (line → last position; 21–43 bytes per line, see
//! `table.rs`), looked up a chunk at a time as in [`super::StackDistanceAnalysis`].

use super::histogram::LogHistogram;
use super::table::LineTable;
use super::{Options, for_each_chunk};
use crate::access::LineAddr;
use crate::analysis::Analysis;
use crate::batch::Batch;

/// Reuse times of a stream of line references, one call per reference.
#[derive(Clone, Debug, Default)]
pub struct ReuseTime {
    /// Line → 1-based position of its most recent reference.
    last: LineTable,
    /// References so far (the position of the latest).
    now: u64,
}

impl ReuseTime {
    /// No references yet.
    pub fn new() -> ReuseTime {
        ReuseTime::default()
    }

    /// No references yet, with room for `lines` lines before the table grows.
    pub(crate) fn with_lines(lines: usize) -> ReuseTime {
        ReuseTime {
            last: LineTable::with_lines(lines),
            now: 0,
        }
    }

    /// References `line` at the next position: its reuse time, or `None` for a first reference.
    #[inline]
    pub fn access(&mut self, line: LineAddr) -> Option<u64> {
        self.now += 1;
        self.last.replace(line.0, self.now).map(|j| self.now - j)
    }

    /// Prefetches every line's slot, so that the cache misses of a run of references overlap
    /// before [`ReuseTime::access`] needs them.
    #[inline]
    pub(crate) fn warm(&self, lines: &[u64]) {
        for &l in lines {
            self.last.prefetch(l);
        }
    }

    /// References so far.
    pub fn position(&self) -> u64 {
        self.now
    }

    /// Distinct lines referenced so far.
    pub fn distinct_lines(&self) -> u64 {
        self.last.len() as u64
    }

    /// Every `(line, 1-based position of its most recent reference)`, in no particular order.
    pub fn last_references(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.last.entries()
    }

    /// The 1-based position of `line`'s most recent reference, if it was referenced.
    pub(crate) fn last_of(&self, line: u64) -> Option<u64> {
        self.last.get(line)
    }

    /// Sets `line`'s most recent reference to `position` without counting a reference; returns
    /// the position it had (the chunk merge of `crate::parallel`).
    pub(crate) fn set_last(&mut self, line: u64, position: u64) -> Option<u64> {
        self.last.replace(line, position)
    }

    /// Moves the position on by `n` references without recording any (the chunk merge).
    pub(crate) fn advance(&mut self, n: u64) {
        self.now += n;
    }

    /// The 1-based position of every line's most recent reference, in no particular order.
    pub fn last_positions(&self) -> impl Iterator<Item = u64> + '_ {
        self.last.values()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.last.heap_bytes()
    }
}

/// Builds the reuse-time histograms of a trace's references (see [`Options`] for which).
#[derive(Clone, Debug)]
pub struct ReuseTimeAnalysis {
    options: Options,
    times: ReuseTime,
    reuse_time: LogHistogram,
    first: LogHistogram,
}

impl ReuseTimeAnalysis {
    /// An analysis with `options`.
    pub fn new(options: Options) -> ReuseTimeAnalysis {
        ReuseTimeAnalysis {
            options,
            times: ReuseTime::new(),
            reuse_time: LogHistogram::new(options.layout),
            first: LogHistogram::new(options.layout),
        }
    }

    /// The per-reference state (distinct lines, memory).
    pub fn times(&self) -> &ReuseTime {
        &self.times
    }

    /// The histograms so far; O(distinct lines) for the last-reference histogram.
    pub fn finish(&self) -> ReuseTimes {
        let n = self.times.position();
        let mut last = LogHistogram::new(self.options.layout);
        for p in self.times.last_positions() {
            last.record(n + 1 - p);
        }
        ReuseTimes {
            line_size: self.options.line_size.bytes(),
            refs: n,
            distinct_lines: self.times.distinct_lines(),
            reuse_time: self.reuse_time.clone(),
            first: self.first.clone(),
            last,
        }
    }
}

impl Analysis for ReuseTimeAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for_each_chunk(batch, &self.options, |chunk| {
            self.times.warm(chunk);
            for &l in chunk.iter() {
                match self.times.access(LineAddr(l)) {
                    Some(rt) => self.reuse_time.record(rt),
                    None => self.first.record(self.times.position()),
                }
            }
        });
    }
}

/// Reuse-time histograms of a trace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReuseTimes {
    /// Line size in bytes.
    pub line_size: u64,
    /// References counted, `n`.
    pub refs: u64,
    /// Distinct lines, `m` (= first references = cold misses).
    pub distinct_lines: u64,
    /// Reuse times `rt = i − j` of the `n − m` reuses.
    pub reuse_time: LogHistogram,
    /// 1-based position `f` of each line's first reference.
    pub first: LogHistogram,
    /// `l = n + 1 − (position of the line's last reference)` for each line.
    pub last: LogHistogram,
}
