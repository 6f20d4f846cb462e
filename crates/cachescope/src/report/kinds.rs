//! [`KindCounts`]: the accesses of each kind, all the trace summary needs beyond the distinct
//! data lines, which the report's stack distances already count (a line's first reference is
//! the one without a distance). `crate::stats::StatsAnalysis` would also keep sets of the
//! data and instruction lines: a hash insertion per access, instruction fetches included, for
//! numbers the report does not show.

use crate::analysis::Analysis;
use crate::{AccessKind, Batch, ThreadId};

use super::model::TraceSummary;

/// Accesses per kind (load, store, modify, instruction fetch), and the threads met (a few runs
/// per batch to look at: what decides whether the report has a threads section).
#[derive(Clone, Debug, Default)]
pub struct KindCounts([u64; 4], Vec<ThreadId>);

impl KindCounts {
    /// The threads whose references were seen, in order.
    pub fn threads(&self) -> Vec<ThreadId> {
        let mut t = self.1.clone();
        t.sort_unstable();
        t
    }

    /// The summary, given the distinct data lines and the line size in bytes.
    pub fn summary(&self, distinct_lines: u64, line_size: u64) -> TraceSummary {
        let [loads, stores, modifies, instructions] = self.0;
        TraceSummary {
            refs: loads + stores + modifies,
            loads,
            stores,
            modifies,
            instructions,
            distinct_lines,
            bytes_touched: distinct_lines * line_size,
        }
    }
}

impl Analysis for KindCounts {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            // A sampled stream's counts are its spans': the full stream's.
            for t in &s.span {
                let counts = [t.loads, t.stores, t.modifies, t.instrs];
                for (total, n) in self.0.iter_mut().zip(counts) {
                    *total += n;
                }
                if !self.1.contains(&t.thread) {
                    self.1.push(t.thread);
                }
            }
            return;
        }
        for (total, n) in self.0.iter_mut().zip(AccessKind::count(&batch.kinds)) {
            *total += n;
        }
        if !batch.is_empty() {
            for (_, t) in batch.thread_runs() {
                if !self.1.contains(&t) {
                    self.1.push(t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Access;

    #[test]
    fn counts_each_kind_and_sizes_the_footprint() {
        let mut c = KindCounts::default();
        let instr = Access {
            kind: crate::AccessKind::Instr,
            ..Access::load(0x40, 4)
        };
        let batch: Batch = [
            Access::load(0, 8),
            Access::store(64, 8),
            instr,
            Access::load(128, 4),
        ]
        .into_iter()
        .collect();
        c.observe(&batch);
        let s = c.summary(3, 64);
        assert_eq!(
            (s.refs, s.loads, s.stores, s.modifies, s.instructions),
            (3, 2, 1, 0, 1)
        );
        assert_eq!((s.distinct_lines, s.bytes_touched), (3, 192));
    }
}
