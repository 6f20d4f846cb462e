//! Beyond the paper: a miss-ratio curve per bucket. One exact LRU stack over every data
//! reference; each reference's stack distance goes into its bucket's histogram, so a bucket's
//! misses in a fully-associative LRU cache of `C` lines are `cold + #{sd ≥ C}` of its own
//! references (Mattson et al. 1970), and the buckets' curves add up to the program's.

use crate::access::LineAddr;
use crate::reuse::{Layout, LogHistogram, StackDistance, StackDistances};

/// Stack distances split by bucket.
#[derive(Clone, Debug, Default)]
pub(super) struct BucketMrc {
    stack: StackDistance,
    per: Vec<StackDistances>,
    line_size: u64,
}

impl BucketMrc {
    pub(super) fn new(line_size: u64) -> BucketMrc {
        BucketMrc {
            stack: StackDistance::new(),
            per: Vec::new(),
            line_size,
        }
    }

    #[inline]
    pub(super) fn access(&mut self, line: u64, bucket: u32) {
        let b = bucket as usize;
        if b >= self.per.len() {
            let empty = StackDistances {
                line_size: self.line_size,
                refs: 0,
                cold: 0,
                histogram: LogHistogram::new(Layout::DEFAULT),
            };
            self.per.resize(b + 1, empty);
        }
        let d = &mut self.per[b];
        d.refs += 1;
        match self.stack.access(LineAddr(line)) {
            Some(sd) => d.histogram.record(sd),
            None => d.cold += 1,
        }
    }

    /// Per raw bucket id (missing ids had no references).
    pub(super) fn into_parts(self) -> Vec<StackDistances> {
        self.per
    }
}
