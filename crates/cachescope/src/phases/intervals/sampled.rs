//! Cutting a sampled stream ([`crate::spatial`], docs/sampled.md) into intervals: each
//! sampled reference carries its place in the full stream (the instruction fetches and data
//! references before it), so the cuts fall where they fall in the full stream, between two
//! sampled references too, and each batch's span moves the count on to the batch's end. An
//! interval's `data_refs` are then the sampled references in it (over the rate, the full
//! stream's); its `instructions` are exact.

use super::{Segment, Splitter, Unit};
use crate::batch::{Batch, Sampling};

impl Splitter {
    /// [`Splitter::split`] of a sampled batch.
    pub(super) fn split_sampled(
        &mut self,
        batch: &Batch,
        s: &Sampling,
        addrs: &mut Vec<u64>,
        segs: &mut Vec<Segment>,
    ) {
        let total = s.total_span();
        // A sampled stream holds no fetch: the unit is the instruction when the full stream
        // has any by the end of the first batch.
        let unit = *self.unit.get_or_insert(if total.instrs > 0 {
            Unit::Instructions
        } else {
            Unit::DataRefs
        });
        self.begin_batch(segs);
        let start = self.units_seen;
        for (i, &addr) in batch.addrs.iter().enumerate() {
            // Units counted before the reference is placed: with instructions, the fetches
            // before it (it belongs to the last of them; before any, to the first interval);
            // with data references, those before it and itself.
            let target = match unit {
                Unit::Instructions => s.instrs_before[i],
                Unit::DataRefs => s.data_before[i] + 1,
            };
            self.advance_to(target, unit, addrs.len(), segs);
            addrs.push(addr);
        }
        let end = start
            + match unit {
                Unit::Instructions => total.instrs,
                Unit::DataRefs => total.data(),
            };
        self.advance_to(end, unit, addrs.len(), segs);
        self.close_sampled(addrs.len(), segs);
    }

    /// Counts units of the full stream up to `target`, cutting columns and intervals as they
    /// pass; the data references placed so far are `addrs[..len]`.
    fn advance_to(&mut self, target: u64, unit: Unit, len: usize, segs: &mut Vec<Segment>) {
        while self.units_seen < target {
            if self.pos == self.next_cut {
                self.close_sampled(len, segs);
                let new_interval = self.cut();
                segs.push(Segment {
                    interval: self.interval,
                    column: self.column,
                    starts_interval: new_interval,
                    start: len,
                    end: len,
                });
            }
            // To the next cut or the target in one step: the cut is past `pos` after `cut`.
            let step = (self.next_cut - self.pos).min(target - self.units_seen);
            self.pos += step;
            self.units_seen += step;
            if unit == Unit::Instructions {
                let c = self.counts.last_mut().expect("an interval is open");
                c.instructions += step;
            }
        }
    }

    /// Ends the last segment at `end` and counts its sampled references in its interval.
    fn close_sampled(&mut self, end: usize, segs: &mut [Segment]) {
        let seg = segs.last_mut().expect("split opens a segment first");
        seg.end = end;
        let c = self.counts.last_mut().expect("an interval is open");
        c.data_refs += (seg.end - seg.start) as u64;
    }
}
