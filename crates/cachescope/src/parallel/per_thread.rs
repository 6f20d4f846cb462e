//! Per-thread views of any [`Chunked`] plan, by composition: [`PerThreadPlan`] runs one
//! instance of a plan per thread of the trace in the same pass, and [`Both`] runs two plans
//! side by side (the whole trace and its threads, say), so no analysis needs a thread
//! parameter of its own (docs/threads.md).

use std::collections::BTreeMap;

use super::Chunked;
use crate::access::ThreadId;
use crate::analysis::{Analysis, PerThread};
use crate::batch::Batch;

/// `plan` applied to each thread's references alone: its output per thread, in thread order,
/// each equal to the plan's output over the trace read with
/// [`Trace::only_thread`](crate::trace::Trace::only_thread).
#[derive(Clone, Debug)]
pub struct PerThreadPlan<P>(pub P);

impl<P: Chunked + Clone + Send + 'static> Chunked for PerThreadPlan<P> {
    type Worker = PerThread<P::Worker>;
    type Partial = BTreeMap<ThreadId, P::Partial>;
    type Output = Vec<(ThreadId, P::Output)>;

    fn worker(&self, start: u64) -> PerThread<P::Worker> {
        let plan = self.0.clone();
        // A thread's first chunk need not be the trace's: `start` only tells a plan that
        // earlier chunks may exist, which stays true for each thread.
        PerThread::new(move |_| plan.worker(start))
    }

    fn seal(&self, w: PerThread<P::Worker>) -> Self::Partial {
        w.into_parts()
            .into_iter()
            .map(|(t, worker)| (t, self.0.seal(worker)))
            .collect()
    }

    fn merge(&self, acc: &mut Self::Partial, next: Self::Partial) {
        for (t, part) in next {
            match acc.get_mut(&t) {
                Some(a) => self.0.merge(a, part),
                None => {
                    acc.insert(t, part);
                }
            }
        }
    }

    fn finish(&self, acc: Self::Partial) -> Self::Output {
        acc.into_iter()
            .map(|(t, part)| (t, self.0.finish(part)))
            .collect()
    }
}

/// Two plans over the same pass.
#[derive(Clone, Debug)]
pub struct Both<A, B>(pub A, pub B);

/// The workers of [`Both`].
#[derive(Debug)]
pub struct BothWorkers<A, B>(A, B);

impl<A: Analysis, B: Analysis> Analysis for BothWorkers<A, B> {
    fn observe(&mut self, batch: &Batch) {
        self.0.observe(batch);
        self.1.observe(batch);
    }
}

impl<A: Chunked, B: Chunked> Chunked for Both<A, B> {
    type Worker = BothWorkers<A::Worker, B::Worker>;
    type Partial = (A::Partial, B::Partial);
    type Output = (A::Output, B::Output);

    fn worker(&self, start: u64) -> Self::Worker {
        BothWorkers(self.0.worker(start), self.1.worker(start))
    }

    fn seal(&self, w: Self::Worker) -> Self::Partial {
        (self.0.seal(w.0), self.1.seal(w.1))
    }

    fn merge(&self, acc: &mut Self::Partial, next: Self::Partial) {
        self.0.merge(&mut acc.0, next.0);
        self.1.merge(&mut acc.1, next.1);
    }

    fn finish(&self, acc: Self::Partial) -> Self::Output {
        (self.0.finish(acc.0), self.1.finish(acc.1))
    }
}
