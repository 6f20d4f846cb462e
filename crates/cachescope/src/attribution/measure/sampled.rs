//! Feeding [`Attribution`] a sampled stream ([`crate::spatial`], docs/sampled.md): each
//! sampled reference is measured at its place in the full stream (the records before it,
//! instruction fetches included), so allocations and frees apply when the program made them,
//! and each batch's span moves the position and the instruction count to its end. The cache
//! the caller gives is then a miniature of the one attributed, and the report's counts stand
//! for the sampled lines only: the caller scales them by the inverse of the rate
//! (`crate::report::sampled`).

use super::Attribution;
use crate::batch::{Batch, Sampling};

impl Attribution<'_> {
    /// [`crate::analysis::Analysis::observe`] of a sampled batch.
    pub(super) fn observe_sampled(&mut self, batch: &Batch, s: &Sampling) {
        let only = self.only.as_ref().map(|(t, _)| *t);
        for (run, t) in batch.thread_runs() {
            if let Some((_, seen)) = &mut self.only {
                seen.insert(t);
            }
            if only.is_some_and(|o| o != t) {
                continue;
            }
            for i in run {
                self.position = s.data_before[i] + s.instrs_before[i];
                self.apply_due();
                let kind = batch.kinds[i];
                self.reference(batch.addrs[i], batch.sizes[i], batch.pcs[i], kind);
            }
        }
        let span = s.total_span();
        self.instructions_seen += span.instrs;
        self.records_seen += span.data() + span.instrs;
        self.position = self.records_seen;
        self.instructions = self.instructions_seen;
    }
}
