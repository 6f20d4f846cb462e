//! Chunk-parallel analysis: the trace is cut into contiguous chunks, each chunk is analysed on
//! its own thread (or, with the CLI's `mpi` feature, on its own MPI rank), and the partial
//! results are merged, in trace order, into exactly the result one sequential pass gives.
//!
//! ## Where the chunks come from ([`run`])
//! - A native trace in a file (uncompressed container, any block codec): its block index says
//!   where every block is and which accesses it holds, so the blocks are split into `threads`
//!   runs of about equal access counts, and each worker opens the file and decodes its own
//!   blocks ([`split_blocks`]). Decoding is parallel too.
//! - An uncompressed text trace in a file (lackey, plain, din; not with
//!   `skip_bad_lines`): the file is cut into `threads` byte ranges of about equal size at line
//!   boundaries, and each worker parses its own range. A lackey range starts with the pc of the
//!   last `I` record before it; a parse error in a later range gets its absolute line number
//!   (the newlines before the range are counted then).
//! - Any other trace (compressed files, pipes, workloads): one thread reads it
//!   (a compressed one adds the decompressing thread of [`crate::trace::open`]), and hands
//!   contiguous segments of [`Chunking::segment`] accesses to the workers in turn.
//!
//! StatCache sampling ([`sample`]) has a pipeline of its own from 4 threads (segments decoded
//! into memory, counted, then sampled from the position the counts give, watchpoints resolved
//! in the merge): see `sampled.rs`; below, one sampler reads the trace decoded in parallel.
//!
//! ## What merges exactly ([`Chunked`])
//! | plan | result | carried per chunk besides its histograms |
//! |---|---|---|
//! | [`StackDistancePlan`] | [`crate::reuse::StackDistances`] | its lines in first-reference order and in recency order (PARDA) |
//! | [`ReuseTimePlan`] | [`crate::reuse::ReuseTimes`] | each line's first and last local position |
//! | [`FootprintPlan`] | [`crate::models::hotl::Footprint`] | each line's first and last local position |
//! | [`StatsPlan`] | [`crate::stats::TraceStats`] | its sets of lines (union) |
//!
//! Stack distances follow Niu et al. (PARDA, IPDPS 2012): inside a chunk every reuse is
//! resolved locally (every reference between the two is in the chunk); a chunk's first
//! reference to a line is resolved against the chunks before it by replaying the chunk's lines,
//! in order of first reference, into the stack of everything before the chunk, and then
//! replaying them in order of last reference so that the stack is ready for the next chunk. The
//! merge costs two stack operations per distinct line per chunk, so chunks are made large.
//!
//! Analyses that do not split in time (cache simulations, phases, the random-replacement
//! curve) run side by side instead: [`run_split`] decodes once and gives every thread its share
//! of the analyses. Either way, and in [`crate::analysis::run`], a trace file that can be cut
//! (as above) is decoded on every thread ([`decode_in_parallel`]: helper threads decode
//! segments ahead, the reading thread takes them in order and decodes one itself whenever the
//! next is not ready). Independent computations after a pass (a model's cache sizes) spread
//! over threads with [`map_in_order`].
//!
//! Every plan above also implements [`Wire`]: its partials travel between processes (MPI
//! ranks) in the formats of [`wire`], and merge there exactly as they do between threads.
//!
//! Results never depend on the thread count or the chunking: `tests/parallel*.rs` compare the
//! JSON of 1, 2 and 4 threads and of adversarial chunkings byte for byte.

mod decode;
mod driver;
mod footprint;
mod map;
mod reuse;
mod sampled;
mod sampled_range;
mod segments;
mod split;
mod stats;
pub mod wire;

pub use decode::decode_in_parallel;
pub use driver::{Chunking, run, run_chunks, run_indexed_range, split_blocks};
pub use footprint::FootprintPlan;
pub use map::map_in_order;
pub use reuse::{
    ReuseTimePartial, ReuseTimePlan, ReuseTimeWorker, StackDistancePartial, StackDistancePlan,
    StackDistanceWorker,
};
pub use sampled::{SEGMENT_MAX, sample, sample_chunks};
pub use sampled_range::{RangeSamples, SampleMerge, SampledRange};
pub use split::run_split;
pub use stats::StatsPlan;
pub use wire::Wire;

use crate::analysis::Analysis;

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
