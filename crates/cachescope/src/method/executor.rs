//! How a method's passes run: the [`Executor`] a caller hands to [`super::mrc`].
//!
//! The methods decide *which* pass a curve needs (a chunk-parallel plan, a sampled pass, or
//! analyses that read the trace in order); the executor decides *how* it runs. [`Local`] runs
//! every pass in this process on its threads; the command-line tool adds its progress bar and
//! MPI distribution with its own executor, so both share one method → pipeline choice.

use crate::analysis::{self, Analysis};
use crate::error::Result;
use crate::parallel::{self, Chunking, Wire};
use crate::sampling::{Profile, SamplerOptions};
use crate::trace::Trace;

/// Runs the three kinds of pass a method may need. `Ok(None)` means "this process does not
/// get the result" (another MPI rank merges it): the method then returns `None` too.
pub trait Executor {
    /// The executor's error; the methods' own errors convert into it.
    type Error: From<crate::Error>;

    /// Reads `trace` once in order, feeding every analysis; the references read.
    fn analyses(
        &mut self,
        trace: &mut Trace,
        analyses: &mut [&mut dyn Analysis],
    ) -> Result<Option<u64>, Self::Error>;

    /// Runs a chunk-parallel plan (its result does not depend on how the trace is cut).
    fn chunked<P: Wire>(
        &mut self,
        trace: &mut Trace,
        plan: &P,
    ) -> Result<Option<P::Output>, Self::Error>;

    /// StatCache's sampler over the trace: the profile.
    fn sampled(
        &mut self,
        trace: &mut Trace,
        options: SamplerOptions,
    ) -> Result<Option<Profile>, Self::Error>;
}

/// Every pass in this process, on `chunking`'s threads, reporting references read to
/// `progress`.
pub struct Local<'a> {
    /// How a trace is cut for the chunk-parallel passes (its thread count is used for the
    /// others too).
    pub chunking: Chunking,
    /// Called now and then with the references read so far.
    pub progress: Box<dyn FnMut(u64) + 'a>,
}

impl Local<'_> {
    /// Passes on `threads` threads without progress reports.
    pub fn threads(threads: usize) -> Local<'static> {
        Local {
            chunking: Chunking::threads(threads),
            progress: Box::new(|_| {}),
        }
    }
}

impl Executor for Local<'_> {
    type Error = crate::Error;

    fn analyses(
        &mut self,
        trace: &mut Trace,
        analyses: &mut [&mut dyn Analysis],
    ) -> Result<Option<u64>> {
        analysis::run(trace, analyses, self.chunking.threads, &mut self.progress).map(Some)
    }

    fn chunked<P: Wire>(&mut self, trace: &mut Trace, plan: &P) -> Result<Option<P::Output>> {
        parallel::run(trace, plan, &self.chunking, &mut self.progress).map(Some)
    }

    fn sampled(&mut self, trace: &mut Trace, options: SamplerOptions) -> Result<Option<Profile>> {
        parallel::sample(trace, options, &self.chunking, &mut self.progress).map(Some)
    }
}
