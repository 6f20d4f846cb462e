//! StatCache sampling of one run of a native trace's blocks: an MPI rank's share (the CLI's
//! `mpi.rs` drives the exchanges between ranks). The sampled pipeline's three steps
//! ([`super::sampled`]) with a whole run as one segment, read from the file at each step
//! rather than held in memory:
//! 1. [`SampledRange::count`]: the run's counted references; the ranks' counts, added in rank
//!    order, give each its offset;
//! 2. [`SampledRange::sample`]: the samples a sequential pass draws from that offset on;
//! 3. [`SampledRange::resolve`]: the first reference in the run to each line watched at the
//!    end of an earlier run (a superset is enough: the union of the earlier runs' watchpoints).
//!
//! Rank 0 merges the runs' [`RangeSamples`] in order with a [`SampleMerge`]; the profile is
//! [`crate::sampling::Sampler::finish`]'s after one sequential pass. Each step decodes the run
//! once (on `threads` threads), so the ranks together decode the trace three times.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::cut::index_range;
use super::decode::read_segments;
use super::sampled::{MergeInOrder, counted_refs};
use super::segments::FileSegments;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::sampling::{
    FirstReferences, Profile, SampleCursor, Sampler, SamplerOptions, SamplerParts,
};
use crate::trace::native::BlockEntry;

/// Accesses per segment when a run is decoded on several threads.
const SEGMENT: u64 = 1 << 16;

/// A run of blocks of a native trace file, to sample.
pub struct SampledRange {
    path: PathBuf,
    blocks: Vec<BlockEntry>,
    options: SamplerOptions,
    threads: usize,
}

impl SampledRange {
    /// Blocks `range` of the native trace at `path` (its index read from the file), sampled
    /// with `options`, decoded on `threads` threads.
    pub fn open(
        path: &Path,
        range: Range<usize>,
        options: SamplerOptions,
        threads: usize,
    ) -> Result<SampledRange> {
        options.validate()?;
        Ok(SampledRange {
            path: path.to_owned(),
            blocks: index_range(path, range)?,
            options,
            threads: threads.max(1),
        })
    }

    /// Feeds the run's batches, in order, to `sink`.
    fn feed(&self, sink: &mut dyn FnMut(&Batch)) -> Result<()> {
        let segments = FileSegments::native_blocks(&self.path, self.blocks.clone(), SEGMENT);
        read_segments(segments, self.threads, sink)
    }

    /// Step 1: the run's counted references (data references, or every access with
    /// `include_instructions`).
    pub fn count(&self) -> Result<u64> {
        let mut n = 0;
        self.feed(&mut |b| n += counted_refs(b, self.options.include_instructions))?;
        Ok(n)
    }

    /// Step 2: the samples of the run, whose first counted reference has position
    /// `offset + 1`, and its `refs` counted references (step 1's count).
    pub fn sample(&self, offset: u64, refs: u64) -> Result<RangeSamples> {
        let mut cursor = SampleCursor::new(&self.options);
        cursor.skip_to(offset);
        let mut sampler = Sampler::resume(self.options, offset, cursor);
        self.feed(&mut |b| sampler.observe(b))?;
        Ok(RangeSamples {
            offset,
            refs,
            parts: sampler.into_parts(),
            firsts: Vec::new(),
        })
    }

    /// Step 3: the first reference in the run to each of `lines` (distinct) that it holds,
    /// as `(line, position)`, into `samples`.
    pub fn resolve(&self, samples: &mut RangeSamples, lines: &[u64]) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut f = FirstReferences::new(self.options, samples.offset, lines);
        self.feed(&mut |b| {
            if !f.done() {
                f.observe(b)
            }
        })?;
        samples.firsts = f.found;
        Ok(())
    }
}

/// What one run leaves for the merge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RangeSamples {
    /// Counted references before the run.
    pub(crate) offset: u64,
    /// Counted references in the run.
    pub(crate) refs: u64,
    /// Samples that found their reuse in the run, and watchpoints still set at its end.
    pub(crate) parts: SamplerParts,
    /// The first reference `(line, position)` in the run to lines watched before it.
    pub(crate) firsts: Vec<(u64, u64)>,
}

impl RangeSamples {
    /// The lines watched at the end of the run by its own samples.
    pub fn watched_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.parts.active.iter().map(|&(l, _)| l)
    }
}

/// Merges consecutive runs' samples, in order, into the profile of the whole trace.
pub struct SampleMerge {
    options: SamplerOptions,
    merge: MergeInOrder,
    refs: u64,
}

impl SampleMerge {
    /// An empty merge of samples taken with `options`.
    pub fn new(options: SamplerOptions) -> SampleMerge {
        SampleMerge {
            options,
            merge: MergeInOrder::default(),
            refs: 0,
        }
    }

    /// Appends the run right after those merged; `source` names its sender in errors.
    pub fn absorb(&mut self, run: RangeSamples, source: &Source) -> Result<()> {
        if run.offset != self.refs {
            return Err(Error::Corrupt {
                source_name: source.clone(),
                message: format!(
                    "partial result: samples of a run after {} references, expected after {}",
                    run.offset, self.refs
                ),
            });
        }
        self.merge.absorb(&run.firsts, run.parts);
        self.refs += run.refs;
        Ok(())
    }

    /// The profile of the runs merged.
    pub fn finish(self) -> Profile {
        self.merge.finish(self.options, self.refs)
    }
}
