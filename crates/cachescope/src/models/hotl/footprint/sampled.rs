//! The footprint of a sampled stream ([`crate::spatial`], docs/sampled.md).
//!
//! Every term of the Xiang formula is a sum over lines (first and last positions) or over
//! their reuses, and `m` counts lines: so over a uniform sample of lines at rate `R`, with each
//! reference placed at its position in the full stream and `n` the full stream's data
//! references, the sampled sums and `m` over `R` estimate the whole's, and `fp(w)` with them.
//! The reuse-time histograms scale the same way. The sums are scaled once, at the end, by the
//! last batch's rate (when a fixed-size sample's limit falls, the lines that left keep what
//! they contributed; docs/sampled.md). The table forgets those lines as the other tables of
//! the sampled analyses do ([`crate::spatial::Forgetting`]), their last positions kept apart,
//! compactly ([`super::forgotten`]), so the sums are the same as keeping them all.

use super::{FootprintAnalysis, WindowSums};
use crate::batch::{Batch, Sampling};

impl FootprintAnalysis {
    /// Records each access of a sampled batch at its position in the full stream, and moves
    /// the count of references to the end of the batch's span.
    pub(super) fn observe_sampled(&mut self, batch: &Batch, s: &Sampling) {
        self.close_run();
        let shift = self.options.line_size.shift();
        // A line referenced again at once (most of a sampled stream's references where a
        // stack line is sampled) reuses the position held here; the table takes the run's
        // last position when the run ends: `(line, position, whether the table holds an
        // earlier one)`.
        let mut run: Option<(u64, u64, bool)> = None;
        for (&a, &before) in batch.addrs.iter().zip(&s.data_before) {
            let (line, p) = (a >> shift, before + 1);
            match run {
                Some((l, q, _)) if l == line => {
                    self.reuse.record(p - q);
                    run = Some((line, p, true));
                    continue;
                }
                Some((l, q, true)) => _ = self.table.replace(l, q),
                _ => {}
            }
            match self.table.replace(line, p) {
                Some(j) => self.reuse.record(p - j),
                None => self.first.record(p),
            }
            run = Some((line, p, false));
        }
        if let Some((l, q, stale)) = run {
            if stale {
                self.table.replace(l, q);
            }
            self.prev = l;
        }
        self.now += s.span.iter().map(|t| t.data()).sum::<u64>();
        self.rate = s.rate();
        let (hash, limit) = (s.hash(), s.limit());
        if self.forgetting.due(limit, self.table.len()) {
            let mut gone = Vec::new();
            self.table.retain(|line, p| {
                let keep = limit.admits(hash.of(line));
                if !keep {
                    gone.push(p);
                }
                keep
            });
            self.forgotten.add(gone);
            self.forgetting.swept(limit, self.table.len());
        }
    }

    /// Lines the table holds (the tests' bound on it).
    #[cfg(test)]
    pub(crate) fn held_lines(&self) -> usize {
        self.table.len()
    }

    /// The first positions' sums and the distinct lines, scaled as [`FootprintAnalysis::scaled`].
    pub(super) fn first_and_distinct(&self) -> (WindowSums, u64) {
        let mut first = self.first.clone();
        if self.rate < 1.0 {
            first.scale(1.0 / self.rate);
            let distinct = (self.distinct_lines() as f64 / self.rate).round() as u64;
            return (first, distinct);
        }
        (first, self.distinct_lines())
    }

    /// `reuse` and `last` scaled by the inverse of the sample's rate (unchanged for a full
    /// stream).
    pub(super) fn scaled(
        &self,
        mut reuse: WindowSums,
        mut last: WindowSums,
    ) -> (WindowSums, WindowSums) {
        if self.rate < 1.0 {
            reuse.scale(1.0 / self.rate);
            last.scale(1.0 / self.rate);
        }
        (reuse, last)
    }
}
