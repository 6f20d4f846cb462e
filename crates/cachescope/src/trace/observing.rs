//! A reader that shows every batch it reads to an analysis on the way: the sharing detector
//! and the threads' reuse samplers below the sampled stage (`report --sampled`), and the
//! multi-core machine fed by round-robin dealing (`crate::cores`). One type for all of them,
//! put in front of a trace's reader with [`super::Trace::wrap`].

use std::sync::{Arc, Mutex};

use super::{AccessReader, Diagnostics};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;

/// Reads `inner` and shows each batch to `analysis`, then passes it on unchanged.
pub struct Observing<A> {
    inner: Box<dyn AccessReader>,
    analysis: Arc<Mutex<A>>,
}

impl<A> Observing<A> {
    /// `inner` read through `analysis` (shared: the caller takes what it measured at the end).
    pub fn new(inner: Box<dyn AccessReader>, analysis: Arc<Mutex<A>>) -> Observing<A> {
        Observing { inner, analysis }
    }
}

impl<A: Analysis + Send> AccessReader for Observing<A> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        let n = self.inner.read_batch(batch)?;
        self.analysis
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .observe(batch);
        Ok(n)
    }
    fn diagnostics(&self) -> Diagnostics {
        self.inner.diagnostics()
    }
    fn reuse_profile(&mut self) -> Option<crate::sampling::Profile> {
        self.inner.reuse_profile()
    }
    fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        self.inner.thread_reuses()
    }
    fn elide_fetches(&mut self) {
        self.inner.elide_fetches()
    }
    fn sample_itself(&mut self, options: &crate::spatial::SpatialOptions) -> bool {
        self.inner.sample_itself(options)
    }
}
