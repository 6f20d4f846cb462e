//! Per-thread views by composition agree with reading one thread alone: for random threaded
//! traces, [`PerThreadPlan`] over the whole trace (any thread count and segment length) gives
//! each thread exactly what the plan gives over [`Trace::only_thread`], the in-order
//! [`PerThread`] does the same for ordered analyses, and every method's per-thread curve equals
//! its curve of the thread alone.

use cachescope::analysis::PerThread;
use cachescope::method::{self, Method, MrcOptions};
use cachescope::parallel::{Both, PerThreadPlan, ReuseTimePlan, StackDistancePlan, StatsPlan};
use cachescope::pass::{Analyses, Pass, Plan};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::trace::{AccessReader, Trace};
use cachescope::{Access, AccessKind, Batch, Source, ThreadId};
use proptest::prelude::*;

/// Hands out `(thread, access)` pairs in batches of `len`.
struct Threaded {
    refs: Vec<(ThreadId, Access)>,
    at: usize,
    len: usize,
}

impl AccessReader for Threaded {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        batch.clear();
        let end = (self.at + self.len).min(self.refs.len());
        for &(t, a) in &self.refs[self.at..end] {
            batch.set_thread(t);
            batch.push(a);
        }
        self.at = end;
        Ok(batch.len())
    }
}

fn trace(refs: &[(ThreadId, Access)], len: usize) -> Trace {
    let reader = Threaded {
        refs: refs.to_vec(),
        at: 0,
        len: len.max(1),
    };
    Trace::from_reader(Box::new(reader), Source::Memory)
}

fn alone(refs: &[(ThreadId, Access)], t: ThreadId, len: usize) -> Trace {
    let mut tr = trace(refs, len);
    tr.only_thread(t);
    tr
}

/// Threads 1-3 in runs, each with a working set of its own and some shared lines.
fn threaded() -> impl Strategy<Value = Vec<(ThreadId, Access)>> {
    let kind = prop::sample::select(AccessKind::ALL.to_vec());
    let one = (1u32..4, 0u64..300, kind, 1usize..40);
    proptest::collection::vec(one, 0..60).prop_map(|runs| {
        let mut v = Vec::new();
        for (i, (t, base, kind, n)) in runs.into_iter().enumerate() {
            for k in 0..n as u64 {
                let line = if k % 3 == 0 {
                    k % 7
                } else {
                    1000 * u64::from(t) + (base + k * i as u64) % 200
                };
                v.push((
                    t,
                    Access {
                        addr: line * 64 + k % 64,
                        size: 4,
                        kind,
                        pc: Some(0x400 + k),
                    },
                ));
            }
        }
        v
    })
}

fn threads_of(refs: &[(ThreadId, Access)]) -> Vec<ThreadId> {
    let set: std::collections::BTreeSet<ThreadId> = refs.iter().map(|r| r.0).collect();
    set.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn per_thread_plans_equal_each_thread_read_alone(
        refs in threaded(), len in 1usize..50, workers in 1usize..4, segment in 1u64..300,
    ) {
        let options = Options::default();
        let stats = StatsPlan { line_size: options.line_size };
        let both = Both(PerThreadPlan(StackDistancePlan { options }), PerThreadPlan(stats));
        let mut pass = Pass::new(workers).segment(segment);
        let (sd, st) = pass.run(&mut trace(&refs, len), Plan(&both)).unwrap();
        let rt = pass.run(&mut trace(&refs, len), Plan(&PerThreadPlan(ReuseTimePlan { options }))).unwrap();
        let ids = threads_of(&refs);
        prop_assert_eq!(sd.iter().map(|x| x.0).collect::<Vec<_>>(), ids.clone());
        for (k, &t) in ids.iter().enumerate() {
            let one = Pass::new(1).run(&mut alone(&refs, t, len), Plan(&StackDistancePlan { options })).unwrap();
            prop_assert_eq!(&sd[k].1, &one);
            let one = Pass::new(1).run(&mut alone(&refs, t, len), Plan(&stats)).unwrap();
            prop_assert_eq!(&st[k].1, &one);
            let one = Pass::new(1).run(&mut alone(&refs, t, len), Plan(&ReuseTimePlan { options })).unwrap();
            prop_assert_eq!(&rt[k].1, &one);
        }
        // The threads' references add up to the trace's.
        let total: u64 = st.iter().map(|(_, s)| s.refs + s.instructions).sum();
        prop_assert_eq!(total, refs.len() as u64);
    }

    #[test]
    fn an_ordered_analysis_per_thread_sees_each_thread_alone(refs in threaded(), len in 1usize..50) {
        let options = Options::default();
        let mut per = PerThread::new(move |_| StackDistanceAnalysis::new(options));
        Pass::new(2).run(&mut trace(&refs, len), Analyses(&mut [&mut per])).unwrap();
        for (t, a) in per.into_parts() {
            let mut one = StackDistanceAnalysis::new(options);
            Pass::new(1).run(&mut alone(&refs, t, len), Analyses(&mut [&mut one])).unwrap();
            prop_assert_eq!(a.finish(), one.finish());
        }
    }
}

#[test]
fn every_method_per_thread_equals_the_thread_alone() {
    let refs: Vec<(ThreadId, Access)> = (0..60_000u64)
        .map(|i| {
            let t = 1 + ((i / 700) % 3) as u32;
            let line = u64::from(t) * 100_000 + (i * 7919) % (200 * u64::from(t * t));
            (t, Access::load(line * 64, 8))
        })
        .collect();
    let sizes = vec![4096, 16384, 65536];
    let methods = [
        (Method::Exact, None),
        (Method::Exact, Some(method::CurvePolicy::Random)),
        (Method::Exact, Some(method::CurvePolicy::Opt)),
        (Method::Exact, Some(method::CurvePolicy::Fifo)),
        (Method::Statstack, None),
        (Method::Statcache, None),
        (Method::Hotl, None),
        (Method::HotlRt, None),
        (Method::Mini, None),
    ];
    for (m, policy) in methods {
        let opts = MrcOptions {
            method: m,
            policy,
            sizes: sizes.clone(),
            rate: 0.05,
            ..MrcOptions::default()
        };
        let per = method::mrc_per_thread(&mut trace(&refs, 999), &opts, &mut Pass::new(2)).unwrap();
        assert_eq!(per.iter().map(|r| r.thread).collect::<Vec<_>>(), [1, 2, 3]);
        for r in &per {
            let one =
                method::mrc(&mut alone(&refs, r.thread, 999), &opts, &mut Pass::new(2)).unwrap();
            assert_eq!(r.run.mrc, one.mrc, "{m:?} {policy:?} thread {}", r.thread);
            let expected = refs.iter().filter(|x| x.0 == r.thread).count() as u64;
            assert_eq!(r.refs, expected);
        }
    }
}

#[test]
fn a_thread_that_is_not_there_is_named_with_those_that_are() {
    let refs = [(1, Access::load(0, 1)), (4, Access::load(64, 1))];
    let mut tr = alone(&refs, 2, 10);
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let e = Pass::new(1)
        .run(&mut tr, Analyses(&mut [&mut sd]))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("thread 2 does not appear in <memory>"),
        "{e}"
    );
    assert!(e.to_string().contains("threads 1, 4"), "{e}");
}
