//! Chunk-parallel analysis: the trace is cut into contiguous chunks, each chunk is analysed on
//! its own thread (or, with the CLI's `mpi` feature, on its own MPI rank), and the partial
//! results are merged, in trace order, into exactly the result one sequential pass gives.
//!
//! This module holds what is about distributing: the [`Chunked`] plans and their exact merges,
//! cutting a trace file into parts (`cut.rs`) and reading the parts on threads
//! (`segments.rs`, [`decode_in_parallel`]), the sampled pipeline's segments and ranges
//! (`sampled.rs`, [`SampledRange`]), and the [`wire`] formats of the partials for MPI ranks.
//! Running a plan over a trace, and choosing how, is the pass layer's job
//! ([`crate::pass`], the [`crate::pass::Plan`] job): a native trace in a file is cut into
//! runs of blocks, one per thread; an uncompressed text trace in a file into byte ranges at
//! line boundaries; anything else is read on one thread and dealt out in segments.
//!
//! ## What merges exactly ([`Chunked`])
//! | plan | result | carried per chunk besides its histograms |
//! |---|---|---|
//! | [`StackDistancePlan`] | [`crate::reuse::StackDistances`] | its lines in first-reference order and in recency order (PARDA) |
//! | [`ReuseTimePlan`] | [`crate::reuse::ReuseTimes`] | each line's first and last local position |
//! | [`FootprintPlan`] | [`crate::models::hotl::Footprint`] | each line's first and last local position |
//! | [`StatsPlan`] | [`crate::stats::TraceStats`] | its sets of lines (union) |
//!
//! Any of them per thread of the trace ([`PerThreadPlan`]: one instance per thread, merged
//! thread by thread) or two side by side ([`Both`]), in the same pass.
//!
//! Stack distances follow Niu et al. (PARDA, IPDPS 2012): inside a chunk every reuse is
//! resolved locally (every reference between the two is in the chunk); a chunk's first
//! reference to a line is resolved against the chunks before it by replaying the chunk's lines,
//! in order of first reference, into the stack of everything before the chunk, and then
//! replaying them in order of last reference so that the stack is ready for the next chunk. The
//! merge costs two stack operations per distinct line per chunk, so chunks are made large.
//!
//! Analyses that do not split in time (cache simulations, phases, the random-replacement
//! curve) read the whole trace in order instead; a trace file that can be cut (as above) is then
//! decoded on every thread ([`decode_in_parallel`]: helper threads decode segments ahead, the
//! reading thread takes them in order and decodes one itself whenever the next is not ready).
//!
//! Every plan above also implements [`Wire`]: its partials travel between processes (MPI
//! ranks) in the formats of [`wire`], and merge there exactly as they do between threads.
//!
//! Results never depend on the thread count or the chunking: `tests/parallel*.rs` compare the
//! JSON of 1, 2 and 4 threads and of adversarial chunkings byte for byte.

mod check;
mod count;
mod cut;
mod decode;
mod footprint;
mod per_thread;
mod reuse;
mod sampled;
mod sampled_range;
mod segments;
mod stats;
pub mod wire;

pub use check::run_chunks;
pub use count::{Count, CountPlan};
pub use cut::split_blocks;
pub use decode::decode_in_parallel;
pub use footprint::FootprintPlan;
pub use per_thread::{Both, BothWorkers, PerThreadPlan};
pub use reuse::{
    ReuseTimePartial, ReuseTimePlan, ReuseTimeWorker, StackDistancePartial, StackDistancePlan,
    StackDistanceWorker,
};
pub use sampled::{SEGMENT_MAX, sample_chunks};
pub use sampled_range::{RangeSamples, SampleMerge, SampledRange};
pub use stats::StatsPlan;
pub use wire::Wire;

pub(crate) use cut::index_range;
pub(crate) use sampled::run_segments;
pub(crate) use segments::{FileSegments, Fill, Segments, file_segments};

use crate::analysis::Analysis;

/// How often a progress callback runs while workers are busy.
pub(crate) const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// An analysis that can run on contiguous chunks of a trace and merge the chunks' partial
/// results exactly.
pub trait Chunked: Sync {
    /// Observes one chunk.
    type Worker: Analysis + Send;
    /// What a chunk leaves for the merge.
    type Partial: Send;
    /// The merged result.
    type Output;

    /// A worker for the chunk whose first access is access `start` of the trace (0-based,
    /// every access counted, instruction fetches included). A chunk of a text trace cut by
    /// bytes does not know its access index: it gets its byte offset, so `start` is 0 exactly
    /// for the first chunk of the trace.
    fn worker(&self, start: u64) -> Self::Worker;

    /// Turns a worker that saw its whole chunk into its partial result (on the worker's
    /// thread, so expensive preparation for the merge belongs here).
    fn seal(&self, worker: Self::Worker) -> Self::Partial;

    /// Appends `next`, the partial of the chunk right after those merged into `acc`.
    fn merge(&self, acc: &mut Self::Partial, next: Self::Partial);

    /// The result of the merged partials of every chunk, in order.
    fn finish(&self, acc: Self::Partial) -> Self::Output;
}
