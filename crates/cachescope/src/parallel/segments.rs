//! Reading the parts [`super::cut`] cuts a trace file into (runs of blocks of a native trace,
//! byte ranges of a text trace), each on its own thread. The one way every parallel reader
//! reads them: the parallel decoder ([`super::decode_in_parallel`]), the sampled pipeline and
//! the pass layer's chunk-parallel plans (`crate::pass`), each handing the batches to a
//! [`Fill`] of its own (a buffer, a worker).

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::cut::{absolute_line, indexed, line_ranges, split_blocks, text_file};
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::trace::native::{BlockDecoder, BlockEntry};
use crate::trace::{Format, Trace, open_text_range};

/// A trace cut into segments that workers read independently.
pub(crate) trait Segments: Sync {
    /// Per-worker reading state (an open file, a decoder).
    type Reader;
    /// Number of segments.
    fn count(&self) -> usize;
    /// A reader, opened on the worker's thread.
    fn open(&self) -> Result<Self::Reader>;
    /// Reads segment `i` batch by batch into `out`, until its end or until `out` says stop. On
    /// an error, `out` has been given the batches read in full before it.
    fn read(&self, reader: &mut Self::Reader, i: usize, out: &mut dyn Fill) -> Result<()>;
    /// The byte of the file where segment `i` ends: how far reading has come once it is read.
    fn end_byte(&self, i: usize) -> u64;

    /// True when a segment's first data records take their pc from before the segment (a
    /// lackey trace: the last `I` record), which its reader may not have found.
    fn carries_pc(&self) -> bool {
        false
    }

    /// From now on, the readers may elide instruction fetches
    /// ([`crate::trace::AccessReader::elide_fetches`]).
    fn elide_fetches(&self) {}
}

/// Where a segment's batches go as they are decoded: into the batch [`Fill::batch`] lends.
pub(crate) trait Fill {
    /// The batch to decode the next batch of the segment into.
    fn batch(&mut self) -> &mut Batch;
    /// The batch last lent holds the next batch; false stops reading the segment.
    fn filled(&mut self) -> bool;
    /// The batch last lent was not filled (the segment ended, or reading failed).
    fn unfilled(&mut self) {}
}

/// The batches of one segment, reused from segment to segment.
#[derive(Default)]
pub(crate) struct SegmentBuf {
    batches: Vec<Batch>,
    used: usize,
}

impl SegmentBuf {
    /// Forgets the segment, keeping the allocations.
    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// A batch to fill, next in order.
    pub fn next_batch(&mut self) -> &mut Batch {
        if self.used == self.batches.len() {
            self.batches.push(Batch::new());
        }
        self.used += 1;
        &mut self.batches[self.used - 1]
    }

    /// The segment's batches.
    pub fn batches(&self) -> &[Batch] {
        &self.batches[..self.used]
    }

    /// The segment's batch `i`, to swap out (the buffer keeps whatever is swapped in, as an
    /// allocation to fill later).
    pub fn batch_mut(&mut self, i: usize) -> &mut Batch {
        &mut self.batches[..self.used][i]
    }
}

/// A whole segment kept in memory.
impl Fill for SegmentBuf {
    fn batch(&mut self) -> &mut Batch {
        self.next_batch()
    }

    fn filled(&mut self) -> bool {
        // Indexed here, on the decoding thread, rather than by the pass's reader (unless the
        // decoder indexed it: `BlockDecoder::elide_fetches`).
        let b = &mut self.batches[self.used - 1];
        if b.data_addrs().is_none() {
            b.index_data();
        }
        true
    }

    fn unfilled(&mut self) {
        self.used -= 1;
    }
}

/// The segments of a trace file that threads can read on their own, when it is one: an
/// uncompressed native trace in a regular file with an index that reads, cut into
/// `native_parts(accesses)` runs of blocks (fewer when it has fewer blocks), or an
/// uncompressed lackey, plain or din trace in a regular file read without `skip_bad_lines`,
/// cut into `text_parts(bytes)` byte ranges at line boundaries; never for a trace read through
/// a thread filter or another reader in front ([`Trace::wrap`]), or as a sampled stream.
pub(crate) fn file_segments(
    trace: &Trace,
    native_parts: impl FnOnce(u64) -> u64,
    text_parts: impl FnOnce(u64) -> u64,
) -> Result<Option<FileSegments>> {
    if trace.sampling().is_some() {
        // The parts' readers would bypass the sampling stage: read it as a stream instead.
        return Ok(None);
    }
    decoded_segments(trace, native_parts, text_parts)
}

/// [`file_segments`] for a reader that replaces the trace's own: a sampled trace's stage
/// stays above it ([`super::decode_in_parallel`]).
pub(crate) fn decoded_segments(
    trace: &Trace,
    native_parts: impl FnOnce(u64) -> u64,
    text_parts: impl FnOnce(u64) -> u64,
) -> Result<Option<FileSegments>> {
    if trace.is_wrapped() {
        // The parts' readers would bypass the trace's filter: read it as a stream instead.
        return Ok(None);
    }
    if let Some((path, blocks)) = indexed(trace) {
        let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
        return Ok(Some(FileSegments::native(
            &path,
            blocks,
            native_parts(total),
        )));
    }
    if let Some((path, format, len)) = text_file(trace) {
        return Ok(Some(FileSegments::Text(TextSegments {
            ranges: line_ranges(&path, trace.source(), len, text_parts(len))?,
            source: trace.source().clone(),
            path,
            format,
        })));
    }
    Ok(None)
}

impl FileSegments {
    /// The blocks `blocks` (a run of the index of the native trace at `path`) in `parts` runs
    /// of about equal access counts.
    pub fn native(path: &Path, blocks: Vec<BlockEntry>, parts: u64) -> FileSegments {
        FileSegments::Native(NativeSegments {
            ranges: split_blocks(&blocks, usize::try_from(parts).unwrap_or(usize::MAX)),
            source: Source::File(path.to_owned()),
            path: path.to_owned(),
            blocks,
            elide: AtomicBool::new(false),
        })
    }

    /// [`FileSegments::native`] in segments of about `accesses` accesses.
    pub fn native_blocks(path: &Path, blocks: Vec<BlockEntry>, accesses: u64) -> FileSegments {
        let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
        FileSegments::native(path, blocks, total.div_ceil(accesses.max(1)).max(1))
    }

    /// The index of the first access of segment `i` when it is known (a run of blocks), or else
    /// its byte offset (a text range): 0 exactly for the first segment of a trace.
    pub fn start(&self, i: usize) -> u64 {
        match self {
            FileSegments::Native(s) => s.blocks[s.ranges[i].clone()].first().map_or(0, |b| b.first),
            FileSegments::Text(s) => s.ranges[i].start,
        }
    }
}

/// What [`file_segments`] found.
pub(crate) enum FileSegments {
    /// Runs of blocks of a native trace.
    Native(NativeSegments),
    /// Byte ranges of a text trace.
    Text(TextSegments),
}

/// A reader of either kind of [`FileSegments`].
pub(crate) enum FileReader {
    Native(BufReader<File>, BlockDecoder),
    Text,
}

impl Segments for FileSegments {
    type Reader = FileReader;

    fn count(&self) -> usize {
        match self {
            FileSegments::Native(s) => s.ranges.len(),
            FileSegments::Text(s) => s.ranges.len(),
        }
    }

    fn open(&self) -> Result<FileReader> {
        match self {
            FileSegments::Native(s) => {
                let file = File::open(&s.path).map_err(|e| Error::io(&s.source, e))?;
                Ok(FileReader::Native(
                    BufReader::new(file),
                    BlockDecoder::new(),
                ))
            }
            FileSegments::Text(_) => Ok(FileReader::Text),
        }
    }

    fn read(&self, reader: &mut FileReader, i: usize, out: &mut dyn Fill) -> Result<()> {
        match (self, reader) {
            (FileSegments::Native(s), FileReader::Native(file, decoder)) => {
                if s.elide.load(Ordering::Relaxed) {
                    decoder.elide_fetches();
                }
                for entry in &s.blocks[s.ranges[i].clone()] {
                    if let Err(e) = decoder.read_block(&mut *file, &s.source, entry, out.batch()) {
                        out.unfilled();
                        return Err(e);
                    }
                    if !out.filled() {
                        break;
                    }
                }
                Ok(())
            }
            (FileSegments::Text(s), _) => s.read(i, out),
            (FileSegments::Native(_), FileReader::Text) => {
                unreachable!("open gives a native reader for native segments")
            }
        }
    }

    fn end_byte(&self, i: usize) -> u64 {
        match self {
            FileSegments::Native(s) => s.blocks[s.ranges[i].clone()]
                .last()
                .map_or(0, |b| b.offset + 24 + u64::from(b.comp_len)),
            FileSegments::Text(s) => s.ranges[i].end,
        }
    }

    fn carries_pc(&self) -> bool {
        matches!(self, FileSegments::Text(s) if s.format == Format::Lackey)
    }

    fn elide_fetches(&self) {
        if let FileSegments::Native(s) = self {
            s.elide.store(true, Ordering::Relaxed);
        }
    }
}

/// Blocks of a native trace, in runs.
pub(crate) struct NativeSegments {
    path: PathBuf,
    source: Source,
    blocks: Vec<BlockEntry>,
    ranges: Vec<Range<usize>>,
    /// Whether the readers may elide instruction fetches ([`Segments::elide_fetches`]).
    elide: AtomicBool,
}

/// Byte ranges of a text trace, cut at line boundaries.
pub(crate) struct TextSegments {
    path: PathBuf,
    source: Source,
    format: Format,
    ranges: Vec<Range<u64>>,
}

impl TextSegments {
    fn read(&self, i: usize, out: &mut dyn Fill) -> Result<()> {
        let r = self.ranges[i].clone();
        let read = (|| {
            let mut reader = open_text_range(&self.path, &self.source, self.format, r.clone())?;
            loop {
                crate::interrupt::check()?;
                match reader.read_batch(out.batch()) {
                    Ok(n) if n > 0 => {
                        if !out.filled() {
                            return Ok(());
                        }
                    }
                    done => {
                        out.unfilled();
                        return done.map(|_| ());
                    }
                }
            }
        })();
        read.map_err(|e| absolute_line(e, &self.path, r.start))
    }
}

/// Chunks given in memory, each a segment: borrowed (`&[Vec<Batch>]`), or owned where the
/// segments must outlive the caller (the parallel decoder's helpers).
pub(crate) struct MemorySegments<C>(pub C);

impl<C: AsRef<[Vec<Batch>]> + Sync> Segments for MemorySegments<C> {
    type Reader = ();

    fn count(&self) -> usize {
        self.0.as_ref().len()
    }

    fn open(&self) -> Result<()> {
        Ok(())
    }

    fn read(&self, _: &mut (), i: usize, out: &mut dyn Fill) -> Result<()> {
        for b in &self.0.as_ref()[i] {
            out.batch().clone_from(b);
            if !out.filled() {
                break;
            }
        }
        Ok(())
    }

    fn end_byte(&self, _: usize) -> u64 {
        0
    }
}
