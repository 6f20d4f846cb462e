//! [`CountPlan`]: the references an analysis counts (data references, or every access with
//! instruction fetches), by chunks: the `refs` of a per-thread curve.

use super::Chunked;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::Options;

/// Counts the references `options` counts.
#[derive(Clone, Copy, Debug)]
pub struct CountPlan {
    /// Whether instruction fetches count.
    pub options: Options,
}

/// A chunk's count.
#[derive(Clone, Copy, Debug)]
pub struct Count {
    include_instructions: bool,
    /// References counted so far.
    pub refs: u64,
}

impl Count {
    /// A count of the references `options` counts.
    pub fn new(options: Options) -> Count {
        Count {
            include_instructions: options.include_instructions,
            refs: 0,
        }
    }
}

impl Analysis for Count {
    fn observe(&mut self, batch: &Batch) {
        let [loads, stores, modifies, instrs] = crate::access::AccessKind::count(&batch.kinds);
        self.refs += loads + stores + modifies;
        if self.include_instructions {
            self.refs += instrs;
        }
    }
}

impl Chunked for CountPlan {
    type Worker = Count;
    type Partial = u64;
    type Output = u64;

    fn worker(&self, _start: u64) -> Count {
        Count::new(self.options)
    }

    fn seal(&self, w: Count) -> u64 {
        w.refs
    }

    fn merge(&self, acc: &mut u64, next: u64) {
        *acc += next;
    }

    fn finish(&self, acc: u64) -> u64 {
        acc
    }
}
