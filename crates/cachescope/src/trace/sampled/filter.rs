//! The stage's filter over a full batch ([`SpatialStage::filter_into`]): each run of one
//! thread's accesses hashed, its admitted data references kept, its counts added to the
//! sampled batch's span.
//!
//! Two walks over the batch. While call events pass, the batch is walked step by step
//! ([`Batch::steps`]): each call event is passed with its thread's counts and last fetch
//! ([`super::places::CallPlaces`]), so the runs between calls are counted apart and their last
//! fetches found. Once no call event can pass any more (the stream's first has passed under
//! [`crate::trace::Trace::sampled_first_call_only`], as `report --sampled` without
//! `--sampled-calls` reads), the call events are skipped and each thread's run is filtered
//! whole: the spans add up the same, and a recorded sqlite3, a call every few dozen
//! references, no longer pays a run's setup, a scan for its last fetch and a prefetch per
//! call.

use super::{OUT_CALLS, OUT_LEN, SpatialStage};
use crate::access::{AccessKind, ThreadId};
use crate::batch::{Batch, Step, ThreadSpan};

/// Call events ahead of the one being passed whose run's last fetch is prefetched.
const FETCH_AHEAD: usize = 4;

/// Admitted data references ahead of the one being filtered whose columns are prefetched.
const KEPT_AHEAD: usize = 4;

impl SpatialStage {
    /// Filters the current full batch from `self.at` into `out`; true when `out` is full (of
    /// accesses, or of call events) and the filter stopped just before a sampled reference
    /// (`self.at` is then its index).
    pub(super) fn filter_into(&mut self, out: &mut Batch) -> bool {
        if self.full.sampling().is_some() {
            return self.refilter_into(out);
        }
        // Out of `self` while its runs are filtered (the filter's state is `self`'s); the
        // allocation goes back below.
        let full = std::mem::take(&mut self.full);
        let places = full.data_positions().expect("indexed above");
        // The first data reference at or after `at`.
        let mut k = places.partition_point(|&p| (p as usize) < self.at);
        let stopped = if self.first_call_only && self.first_call_passed {
            self.filter_runs(&full, out, &mut k)
        } else {
            self.filter_steps(&full, out, &mut k)
        };
        self.at = stopped.unwrap_or(full.len());
        self.full = full;
        stopped.is_some()
    }

    /// [`SpatialStage::filter_into`] when no call event passes any more: one thread's run at a
    /// time, call events skipped. Returns where it stopped, if it did.
    fn filter_runs(&mut self, full: &Batch, out: &mut Batch, k: &mut usize) -> Option<usize> {
        for (run, thread) in full.thread_runs() {
            let lo = run.start.max(self.at);
            if lo >= run.end {
                continue;
            }
            let (stopped, _) = self.filter_run(full, out, lo, run.end, thread, k);
            if stopped.is_some() {
                return stopped;
            }
        }
        None
    }

    /// [`SpatialStage::filter_into`] step by step: call events pass, each with its thread's
    /// place (the runs between them counted apart). Returns where it stopped, if it did.
    fn filter_steps(&mut self, full: &Batch, out: &mut Batch, k: &mut usize) -> Option<usize> {
        let mut call = 0;
        for step in full.steps() {
            let (run, thread) = match step {
                Step::Accesses(run, thread) => (run, thread),
                Step::Call(e) => {
                    // The fetch before a call a few ahead, which the run before that call
                    // reads as its last: a line the decoding core wrote, not yet in this one's
                    // caches (its load was a third of the stage's time on a recorded sqlite3).
                    if let Some(ahead) = full.calls().get(call + FETCH_AHEAD)
                        && let Some(a) = full.addrs.get((ahead.at as usize).wrapping_sub(1))
                    {
                        crate::prefetch::prefetch(a);
                    }
                    // Call events pass unfiltered, each with its thread's place.
                    if call >= self.next_call {
                        if !(self.first_call_only && self.first_call_passed) {
                            let place = self.calls.place(e.thread);
                            out.push_sampled_call(e.thread, e.op, place);
                            self.first_call_passed = true;
                        }
                        self.next_call += 1;
                    }
                    call += 1;
                    continue;
                }
            };
            let (lo, hi) = (run.start.max(self.at), run.end);
            if lo >= hi {
                continue;
            }
            // The run's last fetch, for the call events to come (a scan back: usually its
            // last access), loaded before the filter's loop so that its cache miss (the batch
            // was decoded on another core) overlaps the hashing.
            let last_fetch = |end: usize| {
                (lo..end)
                    .rev()
                    .find(|&i| full.kinds[i] == AccessKind::Instr)
                    .map(|i| full.addrs[i])
            };
            let mut run_fetch = last_fetch(hi);
            let (stopped, run_span) = self.filter_run(full, out, lo, hi, thread, k);
            // Each thread's counts and last fetch, for the call events to come.
            if let Some(end) = stopped {
                run_fetch = last_fetch(end);
            }
            self.calls.count(&run_span, run_fetch);
            if stopped.is_some() {
                return stopped;
            }
        }
        None
    }

    /// Filters accesses `lo..hi` of `full`, all `thread`'s with no call event among them, into
    /// `out`, `k` the index among the batch's data references of the first at or after `lo`
    /// (moved past those read), and adds what it read to the counts. Returns where it
    /// stopped (just before a sampled reference, `out` being full), if it did, and the
    /// counts of what it read.
    fn filter_run(
        &mut self,
        full: &Batch,
        out: &mut Batch,
        lo: usize,
        hi: usize,
        thread: ThreadId,
        k: &mut usize,
    ) -> (Option<usize>, ThreadSpan) {
        let (addrs, places) = (
            full.data_addrs().expect("indexed above"),
            full.data_positions().expect("indexed above"),
        );
        let mut stopped = None;
        // Index in the batch and index among the data references, at `lo`.
        let (data0, instrs0) = (self.data, self.instrs);
        let (lo_k, mut end) = (*k, hi);
        // The run's data references the limit admits now, hashed in one sweep: the limit
        // only falls, so a superset, each checked again below against the limit then.
        // Their size, kind and pc, scattered over the batch another core decoded, are
        // loaded a few candidates ahead (their loads were a quarter of the stage's time
        // on a recorded sqlite3).
        let (hash, admitted) = (self.filter.hash(), self.filter.limit());
        let columns = |k: usize| {
            let i = places[k] as usize;
            crate::prefetch::prefetch(&full.sizes[i]);
            crate::prefetch::prefetch(&full.kinds[i]);
            crate::prefetch::prefetch(&full.pcs[i]);
        };
        let cands = &mut self.cands;
        cands.clear();
        while *k < places.len() && (places[*k] as usize) < hi {
            let h = hash.of(addrs[*k] >> self.shift);
            if admitted.admits(h) {
                if cands.len() < KEPT_AHEAD {
                    columns(*k);
                }
                cands.push((*k, h));
            }
            *k += 1;
        }
        for (c, &(k, h)) in cands.iter().enumerate() {
            if let Some(&(ahead, _)) = cands.get(c + KEPT_AHEAD) {
                columns(ahead);
            }
            if self.filter.limit().admits(h) {
                let i = places[k] as usize;
                // A batch with an access (one without ends the stream) ends here once
                // full, or once it holds `OUT_CALLS` call events.
                if out.len() >= OUT_LEN || (out.calls().len() >= OUT_CALLS && !out.is_empty()) {
                    (stopped, end) = (Some(i), i);
                    break;
                }
                let before = self.filter.limit();
                let data_before = data0 + (k - lo_k) as u64;
                let instrs_before = instrs0 + (i - lo - (k - lo_k)) as u64;
                let keep = self.filter.keep_hashed(h);
                // The limit after the reference applies to it (it may have lowered it).
                if self.filter.limit() != before {
                    out.lower_limit(self.filter.limit());
                }
                if keep {
                    out.set_thread(thread);
                    out.push_sampled(
                        addrs[k],
                        full.sizes[i],
                        full.kinds[i],
                        full.pcs[i],
                        data_before,
                        instrs_before,
                    );
                }
            }
        }
        let counts = AccessKind::count(&full.kinds[lo..end]);
        let run_span = ThreadSpan {
            thread,
            loads: counts[AccessKind::Load as usize],
            stores: counts[AccessKind::Store as usize],
            modifies: counts[AccessKind::Modify as usize],
            instrs: counts[AccessKind::Instr as usize],
        };
        let span = out
            .sampling_mut()
            .expect("started sampled")
            .span_mut(thread);
        span.add(&run_span);
        self.data += counts[..3].iter().sum::<u64>();
        self.instrs += counts[AccessKind::Instr as usize];
        (stopped, run_span)
    }
}
