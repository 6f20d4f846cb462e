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
