//! The push side of the pipeline: analyses observe batches, in trace order. The pass layer
//! ([`crate::pass`]) reads the trace and feeds them; each analysis has its own `finish`-style
//! method returning its own result type, called after the pass.

use crate::batch::Batch;

/// Something computed over a trace in one streaming pass.
pub trait Analysis {
    /// Observes the next batch of accesses, in trace order.
    fn observe(&mut self, batch: &Batch);
}

impl<A: Analysis + ?Sized> Analysis for &mut A {
    fn observe(&mut self, batch: &Batch) {
        (**self).observe(batch)
    }
}

impl<A: Analysis + ?Sized> Analysis for Box<A> {
    fn observe(&mut self, batch: &Batch) {
        (**self).observe(batch)
    }
}

mod per_thread;

pub use per_thread::PerThread;

/// An analysis that could not be made (a per-thread instance whose spill file could not be
/// created, say) observes nothing: its error is the caller's when it asks for the result.
impl<A: Analysis> Analysis for Result<A, crate::Error> {
    fn observe(&mut self, batch: &Batch) {
        if let Ok(a) = self {
            a.observe(batch)
        }
    }
}
