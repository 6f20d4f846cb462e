//! The Xiang footprint over chunks: each chunk keeps its reuse sums, its lines' first positions
//! and last positions; the merge resolves reuses that cross a boundary and shifts positions.

use super::Chunked;
use crate::models::hotl::{Footprint, FootprintAnalysis};
use crate::reuse::Options;

/// The footprint by chunks; the result equals [`FootprintAnalysis`]'s.
#[derive(Clone, Debug)]
pub struct FootprintPlan {
    pub(super) options: Options,
    /// The listed windows, sorted and deduplicated (as the analysis keeps them).
    pub(super) windows: Vec<u64>,
}

impl FootprintPlan {
    /// As [`FootprintAnalysis::new`]: errors on a window of 0.
    pub fn new(options: Options, windows: &[u64]) -> crate::Result<FootprintPlan> {
        FootprintAnalysis::new(options, windows)?;
        let mut windows = windows.to_vec();
        windows.sort_unstable();
        windows.dedup();
        Ok(FootprintPlan { options, windows })
    }
}

impl Chunked for FootprintPlan {
    type Worker = FootprintAnalysis;
    type Partial = FootprintAnalysis;
    type Output = Footprint;

    fn worker(&self, _start: u64) -> FootprintAnalysis {
        FootprintAnalysis::for_chunk(self.options, &self.windows)
            .expect("the windows were checked by FootprintPlan::new")
    }

    fn seal(&self, w: FootprintAnalysis) -> FootprintAnalysis {
        w
    }

    fn merge(&self, acc: &mut FootprintAnalysis, next: FootprintAnalysis) {
        acc.absorb(next);
    }

    fn finish(&self, acc: FootprintAnalysis) -> Footprint {
        acc.finish()
    }
}
