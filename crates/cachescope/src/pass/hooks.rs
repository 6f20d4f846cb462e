//! What a caller adds around a pass: progress, notes, and MPI ranks. The library's passes need
//! none of it ([`Alone`]); the command-line tool's hooks draw its progress bar, print the
//! trace's notes, and hand distributable jobs to its ranks.

use std::sync::Arc;

use crate::error::Error;
use crate::parallel::Wire;
use crate::sampling::{Profile, SamplerOptions};
use crate::stages::Stage;
use crate::trace::Trace;

/// Called by [`super::Pass::run`] around and during every pass. Every method has a default
/// that does nothing (and distributes nothing).
pub trait Hooks {
    /// The error a pass returns: the library's own converts into it (the command-line tool
    /// uses `anyhow::Error`, so its ranks' errors travel with the library's).
    type Error: From<Error>;

    /// Before the pass reads `trace`.
    fn start(&mut self, _trace: &Trace) {}

    /// Now and then during the pass, on the caller's thread: the accesses read so far.
    fn progress(&mut self, _seen: u64) {}

    /// After the pass, `completed` when it read the whole trace without an error.
    fn end(&mut self, _trace: &Trace, _completed: bool) {}

    /// Runs `work`, what a caller computes after a pass (OPT's backward pass and stack),
    /// made of `stages` that count how far they are, so that a front end can show them.
    fn after_pass<T>(&mut self, _stages: Vec<Arc<Stage>>, work: impl FnOnce() -> T) -> T {
        work()
    }

    /// Runs `plan` over several processes when they can share `trace`: `Ok(Some(result))` on
    /// the process that gets the merged result, `Ok(None)` when the pass runs here as usual.
    /// A process that only contributes a partial returns an error of its own kind that its
    /// caller recognises (the command-line tool's other MPI ranks stop there, silently).
    fn distribute_plan<P: Wire>(
        &mut self,
        _trace: &mut Trace,
        _plan: &P,
        _threads: usize,
    ) -> Result<Option<P::Output>, Self::Error> {
        Ok(None)
    }

    /// [`Hooks::distribute_plan`] for StatCache's sampler.
    fn distribute_sample(
        &mut self,
        _trace: &mut Trace,
        _options: SamplerOptions,
        _threads: usize,
    ) -> Result<Option<Profile>, Self::Error> {
        Ok(None)
    }
}

/// No hooks: the pass runs in this process and reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alone;

impl Hooks for Alone {
    type Error = Error;
}

/// Reports progress to a callback (the accesses read so far), nothing else.
pub struct Progress<F>(pub F);

impl<F: FnMut(u64)> Hooks for Progress<F> {
    type Error = Error;

    fn progress(&mut self, seen: u64) {
        (self.0)(seen)
    }
}
