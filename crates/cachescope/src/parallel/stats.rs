//! Trace statistics over chunks: counts add, line sets unite.

use super::Chunked;
use crate::access::LineSize;
use crate::stats::{StatsAnalysis, TraceStats};

/// [`StatsAnalysis`] by chunks.
#[derive(Clone, Copy, Debug)]
pub struct StatsPlan {
    /// Line size for distinct lines.
    pub line_size: LineSize,
}

impl Chunked for StatsPlan {
    type Worker = StatsAnalysis;
    type Partial = StatsAnalysis;
    type Output = TraceStats;

    fn worker(&self, _start: u64) -> StatsAnalysis {
        StatsAnalysis::new(self.line_size)
    }

    fn seal(&self, w: StatsAnalysis) -> StatsAnalysis {
        w
    }

    fn merge(&self, acc: &mut StatsAnalysis, next: StatsAnalysis) {
        acc.merge(next);
    }

    fn finish(&self, acc: StatsAnalysis) -> TraceStats {
        acc.finish()
    }
}
