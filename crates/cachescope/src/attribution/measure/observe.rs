//! Feeding [`Attribution`] a batch: the records of the thread it follows, with the events
//! applied as they fall due, record by record or from the batch's data index.

use super::Attribution;
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;

impl Analysis for Attribution<'_> {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            return self.observe_sampled(batch, s);
        }
        // Call events place and take away the frames' locals (`function:local` buckets)
        // between the records they fall between.
        self.data_cursor = 0;
        let mut from = 0;
        for e in batch.calls() {
            let at = e.at as usize;
            if at > from {
                self.observe_records(batch, from..at);
                from = at;
            }
            self.buckets.apply_call(batch, e);
        }
        if from < batch.len() || batch.is_empty() {
            self.observe_records(batch, from..batch.len());
        }
        self.buckets.batch_done(batch);
    }
}

impl Attribution<'_> {
    /// The records `range` of `batch` (no call event among them), of the followed thread only
    /// when there is one.
    fn observe_records(&mut self, batch: &Batch, range: std::ops::Range<usize>) {
        let Some((only, seen)) = &mut self.only else {
            self.observe_range(batch, range);
            return;
        };
        let only = *only;
        let mut skipped = 0;
        for (run, t) in batch.thread_runs() {
            let run = run.start.max(range.start)..run.end.min(range.end);
            if run.is_empty() {
                continue;
            }
            seen.insert(t);
            if t != only {
                skipped += run.len() as u64;
            }
        }
        if skipped == 0 {
            self.observe_range(batch, range);
            return;
        }
        for (run, t) in batch.thread_runs() {
            let run = run.start.max(range.start)..run.end.min(range.end);
            if run.is_empty() {
                continue;
            }
            if t == only {
                self.observe_range(batch, run);
            } else {
                // Another thread's records: due events are applied before the next kept one.
                self.position += run.len() as u64;
            }
        }
    }

    /// Simulates and counts the records `range` of `batch`, applying events as they fall due.
    fn observe_range(&mut self, batch: &Batch, range: std::ops::Range<usize>) {
        if let (None, Some(at)) = (&self.per_pc, batch.data_positions()) {
            // The indexed data references within `range` (a batch cut at its call events, a
            // few dozen records apart on a recorded sqlite3: found from where the last ended).
            let from = seek(at, self.data_cursor, range.start);
            let to = seek(at, from, range.end);
            self.data_cursor = to;
            self.observe_indexed(batch, range, &at[from..to]);
            return;
        }
        let n = range.end;
        let mut i = range.start;
        while i < n {
            self.apply_due();
            let stop = self.next_event_before(i, n);
            for j in i..stop {
                match batch.kinds[j] {
                    AccessKind::Instr => {
                        self.instructions += 1;
                        if let Some(m) = &mut self.per_pc {
                            m.entry(batch.addrs[j]).or_default().ir += 1;
                        }
                    }
                    // A modify is one lookup, counted as a read (as Cachegrind counts it).
                    kind => self.reference(batch.addrs[j], batch.sizes[j], batch.pcs[j], kind),
                }
            }
            self.position += (stop - i) as u64;
            i = stop;
        }
    }

    /// Where the records from `i` (at the current position) up to `n` stop for the pending
    /// event: the index of the record it is due before, or `n`.
    fn next_event_before(&self, i: usize, n: usize) -> usize {
        self.events.stop(self.position, i, n)
    }

    /// [`Attribution::observe_range`] over `range` of a batch from its indexed data references
    /// there (`at`, their places in it): the same references and events in the same order,
    /// without a test of every record's kind. Instruction fetches only count, unless
    /// per-instruction counts are kept (then the caller takes the record-by-record path).
    fn observe_indexed(&mut self, batch: &Batch, range: std::ops::Range<usize>, at: &[u32]) {
        let n = range.end;
        let (mut i, mut j) = (range.start, 0);
        while i < n {
            self.apply_due();
            let stop = self.next_event_before(i, n);
            let from = j;
            while j < at.len() && (at[j] as usize) < stop {
                let p = at[j] as usize;
                let kind = batch.kinds[p];
                self.reference(batch.addrs[p], batch.sizes[p], batch.pcs[p], kind);
                j += 1;
            }
            self.instructions += (stop - i - (j - from)) as u64;
            self.position += (stop - i) as u64;
            i = stop;
        }
    }
}

/// The first index of `at` (ascending) whose position is at least `x`: searched from `k` on,
/// in steps that double, when every position before `k` is below `x` (the ranges of a batch
/// come in order), else over all of `at`.
fn seek(at: &[u32], k: usize, x: usize) -> usize {
    let below = |i: usize| (at[i] as usize) < x;
    let k = k.min(at.len());
    if k > 0 && !below(k - 1) {
        return at.partition_point(|&p| (p as usize) < x);
    }
    let (mut lo, mut step) = (k, 1);
    while lo + step <= at.len() && below(lo + step - 1) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(at.len());
    lo + at[lo..hi].partition_point(|&p| (p as usize) < x)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn seek_is_the_partition_point(
            mut at in prop::collection::vec(0u32..500, 0..200),
            k in 0usize..220,
            x in 0usize..520,
        ) {
            at.sort_unstable();
            let want = at.partition_point(|&p| (p as usize) < x);
            prop_assert_eq!(super::seek(&at, k, x), want);
        }
    }
}
