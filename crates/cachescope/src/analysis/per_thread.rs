//! [`PerThread`]: any analysis, one instance per thread of the trace, in one pass.
//!
//! Threads enter where data enters (each batch says whose its accesses are, see
//! [`Batch::thread_runs`]); an analysis gets a per-thread view by composition, never by a
//! thread parameter of its own. The instance of thread `t` sees exactly the references the
//! whole analysis would see over the trace read with
//! [`Trace::only_thread`](crate::trace::Trace::only_thread)`(t)`, in order, so its result is
//! the same.

use std::collections::BTreeMap;

use super::Analysis;
use crate::access::ThreadId;
use crate::batch::{Batch, Sampling};
use crate::spatial::{Limit, LineHash};

/// One `A` per thread met, made by a factory when the thread first appears.
pub struct PerThread<A> {
    make: Box<dyn FnMut(ThreadId) -> A + Send>,
    parts: BTreeMap<ThreadId, A>,
    /// One thread's run of a batch with several, copied out.
    run: Batch,
}

impl<A> PerThread<A> {
    /// An instance per thread, each made by `make(thread)`.
    pub fn new(make: impl FnMut(ThreadId) -> A + Send + 'static) -> PerThread<A> {
        PerThread {
            make: Box::new(make),
            parts: BTreeMap::new(),
            run: Batch::with_capacity(0),
        }
    }

    /// The instances, in thread order.
    pub fn into_parts(self) -> BTreeMap<ThreadId, A> {
        self.parts
    }

    /// The instance of `thread`, made now if it is new.
    fn part(&mut self, thread: ThreadId) -> &mut A {
        let make = &mut self.make;
        self.parts.entry(thread).or_insert_with(|| make(thread))
    }
}

impl<A: Analysis> Analysis for PerThread<A> {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            return self.observe_sampled(batch, s);
        }
        if batch.is_empty() {
            return;
        }
        if let Some(t) = batch.single_thread() {
            // The usual case (Valgrind switches threads rarely): no copy.
            self.part(t).observe(batch);
            return;
        }
        let mut run = std::mem::take(&mut self.run);
        for (range, t) in batch.thread_runs() {
            run.clear();
            run.extend_from_range(batch, range);
            self.part(t).observe(&run);
        }
        self.run = run;
    }
}

impl<A: Analysis> PerThread<A> {
    /// A sampled batch (docs/sampled.md): each thread's instance sees a sampled batch of its
    /// accesses, under the same limits, with the full stream's positions and the span of its
    /// own references alone (so a thread whose references were all left out of the batch
    /// still counts them).
    fn observe_sampled(&mut self, batch: &Batch, s: &Sampling) {
        let mut threads: Vec<ThreadId> = s.span.iter().map(|t| t.thread).collect();
        for (_, t) in batch.thread_runs() {
            if !threads.contains(&t) {
                threads.push(t);
            }
        }
        let mut run = std::mem::take(&mut self.run);
        for t in threads {
            let first = s.limits.first().map_or(Limit::ALL, |&(_, l)| l);
            run.start_sampled(LineHash::with_key(s.key), first);
            run.set_thread(t);
            let mut limit = first;
            for (range, u) in batch.thread_runs() {
                if u != t {
                    continue;
                }
                for i in range {
                    if s.limit_at(i) != limit {
                        limit = s.limit_at(i);
                        run.lower_limit(limit);
                    }
                    let (d, n) = (s.data_before[i], s.instrs_before[i]);
                    let (a, z, k, pc) =
                        (batch.addrs[i], batch.sizes[i], batch.kinds[i], batch.pcs[i]);
                    run.push_sampled(a, z, k, pc, d, n);
                }
            }
            if s.limit() != limit {
                run.lower_limit(s.limit());
            }
            let own = run.sampling_mut().expect("started sampled");
            own.span.push(s.thread_span(t));
            self.part(t).observe(&run);
        }
        self.run = run;
    }
}

impl<A> std::fmt::Debug for PerThread<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerThread")
            .field("threads", &self.parts.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
