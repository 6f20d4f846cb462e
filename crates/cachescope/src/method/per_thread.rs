//! [`mrc_per_thread`]: a curve per thread of the trace, every method, in one pass
//! (`mrc --per-thread`). Each thread's curve is the method's curve over that thread's
//! references alone, as `mrc --thread ID` computes it: the measurements run per thread by
//! composition ([`PerThreadPlan`] for the plans that split over chunks, [`PerThread`] for the
//! ordered ones), the models then run on each thread's measurement.

use super::{Measure, Measured, MrcOptions, MrcRun, curve_from, mrc_of_profile};
use crate::access::ThreadId;
use crate::analysis::{Analysis, PerThread};
use crate::error::Result;
use crate::models::hotl;
use crate::parallel::{
    Both, Count, CountPlan, FootprintPlan, PerThreadPlan, ReuseTimePlan, StackDistancePlan, Wire,
};
use crate::pass::{Analyses, Hooks, Pass, Plan};
use crate::reuse::RandomReplacementAnalysis;
use crate::sampling::Sampler;
use crate::trace::Trace;

/// One thread's curve.
#[derive(Debug)]
pub struct ThreadRun {
    /// The thread.
    pub thread: ThreadId,
    /// The references of the thread the curve counts (data references, with instruction
    /// fetches when the options include them).
    pub refs: u64,
    /// Its curve (and profile, for a sampled method).
    pub run: MrcRun,
}

/// The per-thread curves as `mrc --per-thread --json` prints them: `mrc --json`'s fields, the
/// points of each thread under `threads`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadCurves {
    /// How the curves were obtained (as [`Mrc::method`](crate::reuse::Mrc)).
    pub method: String,
    /// The replacement policy modelled.
    pub policy: String,
    /// Line size in bytes.
    pub line_size: u64,
    /// One entry per thread, in thread order.
    pub threads: Vec<ThreadCurve>,
}

/// One thread's entry of [`ThreadCurves`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadCurve {
    /// The thread.
    pub thread: ThreadId,
    /// Its references the curve counts.
    pub refs: u64,
    /// Its curve's points, as `mrc --thread ID --json` gives them.
    pub points: Vec<crate::reuse::MrcPoint>,
}

impl ThreadCurves {
    /// The document of `runs`, curves made with `opts`.
    pub fn new(runs: &[ThreadRun], opts: &MrcOptions) -> Result<ThreadCurves> {
        let policy = opts.policy()?;
        let method = runs.first().map_or_else(
            || opts.method.name().to_string(),
            |r| r.run.mrc.method.clone(),
        );
        Ok(ThreadCurves {
            method,
            policy: runs
                .first()
                .map_or_else(|| policy.name().to_string(), |r| r.run.mrc.policy.clone()),
            line_size: opts.options.line_size.bytes(),
            threads: runs
                .iter()
                .map(|r| ThreadCurve {
                    thread: r.thread,
                    refs: r.refs,
                    points: r.run.mrc.points.clone(),
                })
                .collect(),
        })
    }
}

/// A curve per thread of `trace` by `opts.method`, in thread order, from one pass run by
/// `pass`.
pub fn mrc_per_thread<H: Hooks>(
    trace: &mut Trace,
    opts: &MrcOptions,
    pass: &mut Pass<H>,
) -> Result<Vec<ThreadRun>, H::Error> {
    let options = opts.options;
    let measure = opts.measure()?;
    let curves = |measured: Vec<(ThreadId, u64, Measured<'_>)>| -> Result<Vec<ThreadRun>> {
        measured
            .into_iter()
            .map(|(thread, refs, m)| {
                let mrc = curve_from(m, opts)?;
                let run = MrcRun {
                    mrc,
                    profile: None,
                    refs,
                };
                Ok(ThreadRun { thread, refs, run })
            })
            .collect()
    };
    let runs = match measure {
        Measure::StackDistances => {
            let per = planned(trace, pass, StackDistancePlan { options }, opts)?;
            curves(with(&per, Measured::StackDistances))?
        }
        Measure::Footprint => {
            let per = planned(trace, pass, FootprintPlan::new(options, &[])?, opts)?;
            curves(with(&per, Measured::Footprint))?
        }
        Measure::ReuseTimes => {
            let per = planned(trace, pass, ReuseTimePlan { options }, opts)?;
            curves(with(&per, Measured::ReuseTimes))?
        }
        Measure::Profile => {
            let proto = Sampler::new(opts.sampler())?;
            let per = ordered(trace, pass, opts, move |_| proto.clone())?;
            let source = trace.source().to_string();
            per.into_iter()
                .map(|(thread, refs, sampler)| {
                    let profile = sampler
                        .finish()
                        .with_source(format!("{source} thread {thread}"));
                    let run = mrc_of_profile(profile, opts)?;
                    Ok(ThreadRun { thread, refs, run })
                })
                .collect::<Result<_>>()?
        }
        Measure::LocalFootprint => {
            let per = ordered(trace, pass, opts, move |_| {
                hotl::LocalFootprintAnalysis::new(options)
            })?;
            let done: Vec<_> = per
                .into_iter()
                .map(|(t, n, a)| (t, n, a.finish()))
                .collect();
            curves(with(&done, Measured::LocalFootprint))?
        }
        Measure::Opt => {
            let per = ordered(trace, pass, opts, move |_| {
                crate::opt::OptAnalysis::new(options)
            })?;
            let mut done = Vec::new();
            for (t, n, opt) in per {
                done.push((t, n, Measured::Simulated(opt?.finish(&opts.sizes)?)));
            }
            curves(done)?
        }
        Measure::RandomReplacement => {
            super::check_random_sizes(&opts.sizes)?;
            let proto = RandomReplacementAnalysis::new(options, &opts.sizes, opts.seed);
            let per = ordered(trace, pass, opts, move |_| proto.clone())?;
            curves(
                per.into_iter()
                    .map(|(t, n, a)| (t, n, Measured::Simulated(a.finish())))
                    .collect(),
            )?
        }
        Measure::Simulation(policy) => {
            let proto = super::simulation(opts, policy)?;
            let per = ordered(trace, pass, opts, move |_| proto.clone())?;
            curves(
                per.into_iter()
                    .map(|(t, n, a)| (t, n, Measured::Simulated(a.finish())))
                    .collect(),
            )?
        }
    };
    Ok(runs)
}

/// Each thread, its counted references and what was measured over them.
type PerThreadOutputs<T> = Vec<(ThreadId, u64, T)>;

/// `(thread, refs, measurement)` for each thread's output of a plan.
fn with<'a, T>(
    per: &'a [(ThreadId, u64, T)],
    measured: impl Fn(&'a T) -> Measured<'a>,
) -> Vec<(ThreadId, u64, Measured<'a>)> {
    per.iter().map(|(t, n, x)| (*t, *n, measured(x))).collect()
}

/// `plan` per thread, beside each thread's reference count, in one pass that splits over
/// chunks (and MPI ranks) as the plan alone would.
fn planned<P, H>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    plan: P,
    opts: &MrcOptions,
) -> Result<PerThreadOutputs<P::Output>, H::Error>
where
    P: Wire + Clone + Send + 'static,
    H: Hooks,
{
    let counted = CountPlan {
        options: opts.options,
    };
    let both = Both(PerThreadPlan(plan), PerThreadPlan(counted));
    let (outputs, counts) = pass.run(trace, Plan(&both))?;
    Ok(outputs
        .into_iter()
        .zip(counts)
        .map(|((t, out), (_, n))| (t, n, out))
        .collect())
}

/// An ordered analysis per thread, made by `make`, beside each thread's reference count.
fn ordered<A, H>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    opts: &MrcOptions,
    make: impl FnMut(ThreadId) -> A + Send + 'static,
) -> Result<PerThreadOutputs<A>, H::Error>
where
    A: Analysis,
    H: Hooks,
{
    let options = opts.options;
    let mut per = PerThread::new(make);
    let mut counts = PerThread::new(move |_| Count::new(options));
    pass.run(trace, Analyses(&mut [&mut per, &mut counts]))?;
    Ok(per
        .into_parts()
        .into_iter()
        .zip(counts.into_parts())
        .map(|((t, a), (_, c))| (t, c.refs, a))
        .collect())
}
