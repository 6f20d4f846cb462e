//! The bounded timeline: finished intervals merged in pairs past
//! [`PhaseOptions::max_intervals`] (module `phases::merge` says how and what a merged
//! interval holds).

use super::*;

impl PhaseAnalysis {
    /// Merges rows `from + 2k`, `from + 2k + 1` (`k < pairs`) of every signature, the ground
    /// truth and the counts; `double_from` as for [`Splitter::merge_pairs`].
    fn merge_pairs(&mut self, from: usize, pairs: usize, double_from: Option<usize>) {
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
        self.splitter.merge_pairs(from, pairs, double_from);
    }

    /// After a batch (every builder has closed the same intervals): merges the pair waiting
    /// for its second half once it is finished, and past the cap every finished pair.
    pub(super) fn bound(&mut self) {
        let Some(cap) = self.options.max_intervals else {
            return;
        };
        // Every interval started but the open one is finished.
        let finished = self.splitter.counts().len().saturating_sub(1);
        if let Some(p) = self.pending {
            if finished < p + 2 {
                return;
            }
            self.merge_pairs(p, 1, None);
            self.pending = None;
        }
        let finished = self.splitter.counts().len().saturating_sub(1);
        if finished > cap {
            // The rows left after the pairs: a lone finished one (odd count) and the open one,
            // or the open one and the next, both of the old length: they make the pair that
            // waits; the intervals after it are cut twice as long.
            let half = finished / 2;
            self.merge_pairs(0, half, Some(half + 2));
            self.pending = Some(half);
            self.merged += 1;
        }
    }

    /// At the end, once every builder closed the last interval: merges the waiting pair if
    /// its second half came (the last interval may be short, as without merges).
    pub(super) fn bound_last(&mut self) {
        if let Some(p) = self.pending.take()
            && self.splitter.counts().len() >= p + 2
        {
            self.merge_pairs(p, 1, None);
        }
    }
}
