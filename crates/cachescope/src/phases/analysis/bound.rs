//! The bounded timeline: the splitter merges the intervals' counts at the cuts past
//! [`PhaseOptions::max_intervals`] (`intervals::bound`); the signatures and the ground truth
//! follow here once the batch is through (module `phases::merge` says what a merged interval
//! holds).

use super::*;

impl PhaseAnalysis {
    /// After a batch (every builder has closed the same intervals), or at the end: merges the
    /// rows of every signature and of the ground truth as the splitter merged its counts.
    pub(super) fn bound(&mut self) {
        for op in self.splitter.take_merges() {
            let (from, pairs) = (op.from, op.pairs);
            if let Some(s) = &mut self.setvectors {
                s.merge_pairs(from, pairs);
            }
            if let Some(s) = &mut self.activity {
                s.merge_pairs(from, pairs);
            }
            if let Some(s) = &mut self.reuse {
                s.merge_pairs(from, pairs);
            }
            if let Some(s) = &mut self.wavelet {
                s.merge_pairs(from, pairs);
            }
            self.truth.merge_pairs(from, pairs);
        }
    }

    /// At the end, once every builder closed the last interval: merges the waiting pair if
    /// its second half came.
    pub(super) fn bound_last(&mut self) {
        self.splitter.bound_last();
        self.bound();
    }
}
