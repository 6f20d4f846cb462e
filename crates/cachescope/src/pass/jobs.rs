//! What a pass computes: the four kinds of job [`super::Pass::run`] takes, each with its own
//! way of using threads (and, through the hooks, ranks).

use super::{Hooks, Pass};
use crate::analysis::Analysis;
use crate::parallel::Wire;
use crate::sampling::{Profile, SamplerOptions};
use crate::trace::Trace;

/// A set of analyses for one pass; its output is what the pass returns. Implemented by
/// [`Analyses`], [`Independent`], [`Plan`] and [`Sampling`].
pub trait Job {
    /// What the pass returns.
    type Output;

    /// Reads `trace` once for this job, with `pass`'s threads and hooks.
    fn run<H: Hooks>(self, trace: &mut Trace, pass: &mut Pass<H>)
    -> Result<Self::Output, H::Error>;
}

/// Analyses that each see the whole trace in order, all fed on the caller's thread; the other
/// threads decode. Output: the accesses read.
pub struct Analyses<'a, 'b>(pub &'a mut [&'b mut dyn Analysis]);

impl Job for Analyses<'_, '_> {
    type Output = u64;

    fn run<H: Hooks>(self, trace: &mut Trace, pass: &mut Pass<H>) -> Result<u64, H::Error> {
        here(pass, trace, |trace, threads, _, progress| {
            super::in_order::run(trace, self.0, threads, progress)
        })
    }
}

/// Analyses that each see the whole trace in order but need nothing from one another (several
/// cache configurations): one decode, the analyses dealt over the threads. Output: the
/// accesses read.
pub struct Independent<'a, 'b>(pub &'a mut [&'b mut (dyn Analysis + Send)]);

impl Job for Independent<'_, '_> {
    type Output = u64;

    fn run<H: Hooks>(self, trace: &mut Trace, pass: &mut Pass<H>) -> Result<u64, H::Error> {
        here(pass, trace, |trace, threads, _, progress| {
            super::split::run(trace, self.0, threads, progress)
        })
    }
}

/// A chunk-parallel plan ([`crate::parallel::Chunked`]): the trace cut into chunks, each
/// analysed on its own thread (or MPI rank, through the hooks), the partials merged exactly.
/// Output: the plan's.
pub struct Plan<'a, P>(pub &'a P);

impl<P: Wire> Job for Plan<'_, P> {
    type Output = P::Output;

    fn run<H: Hooks>(self, trace: &mut Trace, pass: &mut Pass<H>) -> Result<P::Output, H::Error> {
        if let Some(out) = pass.hooks.distribute_plan(trace, self.0, pass.threads)? {
            return Ok(out);
        }
        here(pass, trace, |trace, threads, segment, progress| {
            super::plans::run(trace, self.0, threads, segment, progress)
        })
    }
}

/// StatCache's sampler: one sampler in order, or the sampled pipeline's segments from 4
/// threads (or over MPI ranks, through the hooks); the profile is one sequential pass's
/// either way. Output: the profile.
pub struct Sampling(pub SamplerOptions);

impl Job for Sampling {
    type Output = Profile;

    fn run<H: Hooks>(self, trace: &mut Trace, pass: &mut Pass<H>) -> Result<Profile, H::Error> {
        if let Some(out) = pass.hooks.distribute_sample(trace, self.0, pass.threads)? {
            return Ok(out);
        }
        here(pass, trace, |trace, threads, segment, progress| {
            super::sampled::run(trace, self.0, threads, segment, progress)
        })
    }
}

/// Runs a job in this process: `local` gets the trace, the threads, the segment length and a
/// progress callback that reports through the hooks (the same for every kind of job).
fn here<H: Hooks, T>(
    pass: &mut Pass<H>,
    trace: &mut Trace,
    local: impl FnOnce(&mut Trace, usize, u64, &mut dyn FnMut(u64)) -> crate::error::Result<T>,
) -> Result<T, H::Error> {
    let hooks = &mut pass.hooks;
    Ok(local(trace, pass.threads, pass.segment, &mut |n| {
        hooks.progress(n)
    })?)
}
