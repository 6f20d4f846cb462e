//! The bounded timeline's schedule ([`crate::phases::merge`]), decided by the splitter at the
//! cut that opens each interval: which finished intervals merge and from which interval on
//! the length doubles. Decided there, and not once per batch, the timeline is a function of
//! the stream alone, whatever the batches (a sampled batch spans hundreds of intervals of the
//! full stream: merged after the batch, the intervals it closed past the cap would be merged
//! as means instead of cut at the doubled length, and where the length doubles would move
//! with the batch's end). The signatures follow with [`Splitter::take_merges`].

use super::Splitter;

/// One merge of the finished rows `from + 2k`, `from + 2k + 1` (`k < pairs`) into row
/// `from + k`, the rows after them following ([`crate::phases::merge::merge_pairs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergeOp {
    pub(crate) from: usize,
    pub(crate) pairs: usize,
}

/// The cap and the merges made so far.
#[derive(Clone, Debug, Default)]
pub(super) struct Bound {
    /// At most this many finished intervals (`None`: unbounded).
    cap: Option<usize>,
    /// The first of two intervals of the old length still to merge.
    pending: Option<usize>,
    /// Times the length doubled.
    merged: u32,
    /// Merges of the counts not yet applied to the signatures.
    ops: Vec<MergeOp>,
}

impl Bound {
    pub(super) fn new(cap: Option<usize>) -> Bound {
        Bound {
            cap,
            ..Bound::default()
        }
    }
}

impl Splitter {
    /// Keeps at most `cap` finished intervals (and the pair that waits and the open one):
    /// past it, the finished ones merge in pairs and the intervals after them are cut twice
    /// as long.
    pub fn bounded(mut self, cap: Option<usize>) -> Splitter {
        self.bound = Bound::new(cap);
        self
    }

    /// Times the interval length doubled.
    pub fn merged(&self) -> u32 {
        self.bound.merged
    }

    /// The merges made since the last call, in order, for the signatures' rows to follow:
    /// each touches only rows finished when it was made, so applying them after a whole
    /// batch gives the rows applying them at their cut would.
    pub(crate) fn take_merges(&mut self) -> impl Iterator<Item = MergeOp> + use<'_> {
        self.bound.ops.drain(..)
    }

    /// Merges the counts' rows and logs the merge.
    fn merge_logged(&mut self, from: usize, pairs: usize, double_from: Option<usize>) {
        self.merge_pairs(from, pairs, double_from);
        self.bound.ops.push(MergeOp { from, pairs });
    }

    /// At the cut that opened an interval: merges the pair waiting for its second half once
    /// it is finished, and past the cap every finished pair.
    pub(super) fn bound_at_cut(&mut self) {
        let Some(cap) = self.bound.cap else {
            return;
        };
        // Every interval started but the open one is finished.
        let finished = self.counts.len() - 1;
        if let Some(p) = self.bound.pending {
            if finished < p + 2 {
                return;
            }
            self.merge_logged(p, 1, None);
            self.bound.pending = None;
        }
        let finished = self.counts.len() - 1;
        if finished > cap {
            // The rows left after the pairs: a lone finished one (odd count) and the open one,
            // or the open one and the next, both of the old length: they make the pair that
            // waits; the intervals after it are cut twice as long.
            let half = finished / 2;
            self.merge_logged(0, half, Some(half + 2));
            self.bound.pending = Some(half);
            self.bound.merged += 1;
        }
    }

    /// At the end, once the last interval is closed: merges the waiting pair if its second
    /// half came (the last interval may be short, as without merges).
    pub(crate) fn bound_last(&mut self) {
        if let Some(p) = self.bound.pending.take()
            && self.counts.len() >= p + 2
        {
            self.merge_logged(p, 1, None);
        }
    }
}
