//! Feeding [`Attribution`] a sampled stream ([`crate::spatial`], docs/sampled.md): each
//! sampled reference is measured at its place in the full stream (the records before it,
//! instruction fetches included), so allocations and frees apply when the program made them,
//! and each batch's span moves the position and the instruction count to its end. The cache
//! the caller gives is then a miniature of the one attributed, and the report's counts stand
//! for the sampled lines only: the caller scales them by the inverse of the rate
//! (`crate::report::sampled`).
//!
//! A miniature has a power of two of sets, `sets · rate` rounded down, so it stands for a
//! cache of `sets_mini / rate` sets, smaller than the one attributed (400 sets for 512 at rate
//! 0.01): its misses scaled by `1 / rate` overstate the cache's. [`Attribution::sub_sampled`]
//! keeps only the sampled lines under the lower rate `sets_mini / sets` (the same hash, a lower
//! limit: a subset of the sample), at which the miniature stands for the cache exactly, as
//! Waldspurger et al.'s miniature simulations do.

use super::Attribution;
use crate::Result;
use crate::access::LineSize;
use crate::batch::{Batch, Sampling};
use crate::spatial::Limit;

/// The lower limit a sampled stream's lines are kept under, and the filter's line shift.
#[derive(Clone, Copy, Debug)]
pub(super) struct SubSample {
    limit: Limit,
    shift: u32,
}

impl Attribution<'_> {
    /// [`crate::analysis::Analysis::observe`] of a sampled batch.
    pub(super) fn observe_sampled(&mut self, batch: &Batch, s: &Sampling) {
        if let Some(p) = &mut self.per_structure {
            p.partial |= s.limit() != Limit::ALL || s.limit_falls();
        }
        let only = self.only.as_ref().map(|(t, _)| *t);
        for (run, t) in batch.thread_runs() {
            if let Some((_, seen)) = &mut self.only {
                seen.insert(t);
            }
            if only.is_some_and(|o| o != t) {
                continue;
            }
            for i in run {
                if let Some(sub) = self.sub
                    && !sub.limit.admits(s.hash().of(batch.addrs[i] >> sub.shift))
                {
                    continue;
                }
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

impl<'e> Attribution<'e> {
    /// Measures, of a sampled stream filtered at `line_size`, only the lines its hash admits at
    /// `rate` (at most the stream's rate): a subset of the sample at that rate.
    pub fn sub_sampled(mut self, rate: f64, line_size: LineSize) -> Result<Attribution<'e>> {
        self.sub = Some(SubSample {
            limit: Limit::from_rate(rate)?,
            shift: line_size.shift(),
        });
        Ok(self)
    }

    /// The rate [`Attribution::sub_sampled`] keeps lines at, if it was asked.
    pub fn sub_rate(&self) -> Option<f64> {
        self.sub.map(|s| s.limit.rate())
    }
}
