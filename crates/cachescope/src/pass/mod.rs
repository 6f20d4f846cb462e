//! The pass layer: the one way to run analyses over a trace.
//!
//! ## Running analyses
//! A *source* is a [`Trace`]: a file or stdin ([`crate::trace::open`]), a synthetic workload,
//! or a running program ([`crate::record`]) all read the same way. A *job* says what one pass
//! over it computes, and how much of it may be split:
//!
//! | job | the analyses | how the pass uses `threads` | output |
//! |---|---|---|---|
//! | [`Analyses`] | any [`Analysis`](crate::analysis::Analysis), each seeing every batch in order | the caller's thread feeds them; the others decode the trace ahead (every thread, for a file that can be cut) | accesses read |
//! | [`Independent`] | analyses that are `Send` and need nothing from one another | one decode, the analyses dealt over the threads | accesses read |
//! | [`Plan`] | a chunk-parallel plan ([`crate::parallel::Chunked`], e.g. [`crate::parallel::StatsPlan`]) | the trace cut into chunks, one per thread (a native file by its block index, a text file by bytes, anything else in segments as it is read); partials merged exactly | the plan's result |
//! | [`Sampling`] | StatCache's sampler | one sampler in order, or segments sampled on every thread from 4 threads | the profile |
//!
//! A [`Pass`] holds the thread count, the segment length of a trace read as a stream, and the
//! caller's [`Hooks`]: progress, notes, and MPI ranks (the command-line tool's hooks hand
//! [`Plan`] and [`Sampling`] jobs to its ranks). [`Pass::run`] takes the source and the job and
//! decides the rest. Results never depend on the thread count or on how the trace is cut.
//!
//! ```
//! use cachescope::pass::{Analyses, Pass, Plan};
//! use cachescope::parallel::StatsPlan;
//! use cachescope::reuse::{Options, StackDistanceAnalysis};
//! use cachescope::trace::Trace;
//! use cachescope::workloads::{self, Workload};
//! # fn main() -> cachescope::Result<()> {
//! let trace = || -> cachescope::Result<Trace> {
//!     let w = workloads::generator(Workload::Loop, &workloads::Params::default())?;
//!     Ok(Trace::from_reader(Box::new(w), cachescope::Source::Workload("loop".into())))
//! };
//! let mut pass = Pass::new(2);
//! // A chunk-parallel plan: its merged result.
//! let plan = StatsPlan { line_size: Options::default().line_size };
//! let stats = pass.run(&mut trace()?, Plan(&plan))?;
//! // Analyses in order: each keeps its own result.
//! let mut sd = StackDistanceAnalysis::new(Options::default());
//! let read = pass.run(&mut trace()?, Analyses(&mut [&mut sd]))?;
//! assert_eq!(read, stats.refs + stats.instructions);
//! assert_eq!(sd.finish().refs, stats.refs);
//! # Ok(()) }
//! ```
//!
//! ## Where the work is
//! `in_order.rs` ([`Analyses`]), `split.rs` ([`Independent`]), `plans.rs` and `stream.rs`
//! ([`Plan`] over a file cut into parts, or a stream dealt in segments), `sampled.rs`
//! ([`Sampling`]); cutting files into parts, the plans, their merges and wire formats are
//! [`crate::parallel`]'s.

mod hooks;
mod in_order;
mod jobs;
mod plans;
mod sampled;
mod split;
mod stream;

pub use hooks::{Alone, Hooks, Progress};
pub use jobs::{Analyses, Independent, Job, Plan, Sampling};
pub use plans::run_indexed_range;

use crate::trace::Trace;

/// Accesses per segment of a trace read as a stream, by default: a chunk-parallel plan's merge
/// costs about two stack operations per distinct line of each segment, so segments of a few
/// million accesses keep it small.
pub const DEFAULT_SEGMENT: u64 = 1 << 22;

/// How passes run: threads, segments, hooks. One `Pass` can run several passes.
#[derive(Clone, Copy, Debug)]
pub struct Pass<H = Alone> {
    threads: usize,
    segment: u64,
    hooks: H,
}

impl Pass<Alone> {
    /// Passes on `threads` threads (at least 1), without hooks.
    pub fn new(threads: usize) -> Pass<Alone> {
        Pass {
            threads: threads.max(1),
            segment: DEFAULT_SEGMENT,
            hooks: Alone,
        }
    }

    /// Passes on every core.
    pub fn all_cores() -> Pass<Alone> {
        Pass::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl<H: Hooks> Pass<H> {
    /// The same passes with `hooks` instead.
    pub fn with_hooks<G: Hooks>(self, hooks: G) -> Pass<G> {
        Pass {
            threads: self.threads,
            segment: self.segment,
            hooks,
        }
    }

    /// The same passes reporting the accesses read so far to `progress`.
    pub fn with_progress<F: FnMut(u64)>(self, progress: F) -> Pass<Progress<F>> {
        self.with_hooks(Progress(progress))
    }

    /// Accesses per segment when a trace is read as a stream and dealt to the threads
    /// (rounded up to whole batches; default [`DEFAULT_SEGMENT`]): for tuning, and for tests
    /// that need many chunk boundaries in a small trace.
    pub fn segment(mut self, accesses: u64) -> Self {
        self.segment = accesses.max(1);
        self
    }

    /// The thread count.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The hooks.
    pub fn hooks(&mut self) -> &mut H {
        &mut self.hooks
    }

    /// Reads `trace` once for `job` and returns its output, the hooks told before and after.
    pub fn run<J: Job>(&mut self, trace: &mut Trace, job: J) -> Result<J::Output, H::Error> {
        self.hooks.start(trace);
        let out = job.run(trace, self);
        self.hooks.end(trace, out.is_ok());
        out
    }
}
