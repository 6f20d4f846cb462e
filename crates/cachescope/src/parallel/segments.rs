//! A trace file cut into segments that threads read on their own: runs of blocks of a native
//! trace (its block index says where each block is), byte ranges of an uncompressed text trace
//! cut at line boundaries. The sampled pipeline ([`super::sample`]) and the parallel decoder
//! ([`super::decode_in_parallel`]) read traces this way.

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::driver::{absolute_line, indexed, line_ranges, split_blocks, text_file};
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
    /// Reads segment `i` into `out` (cleared first by the caller). On an error, `out` holds the
    /// batches read in full before it.
    fn read(&self, reader: &mut Self::Reader, i: usize, out: &mut SegmentBuf) -> Result<()>;
    /// The byte of the file where segment `i` ends: how far reading has come once it is read.
    fn end_byte(&self, i: usize) -> u64;

    /// True when a segment's first data records take their pc from before the segment (a
    /// lackey trace: the last `I` record), which its reader may not have found.
    fn carries_pc(&self) -> bool {
        false
    }
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

    /// Gives back the batch [`SegmentBuf::next_batch`] handed out last, unfilled.
    fn unuse_last(&mut self) {
        self.used -= 1;
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

/// The segments of a trace file that threads can read on their own, when it is one: an
/// uncompressed native trace in a regular file with an index that reads, cut into runs of
/// blocks of about `accesses` accesses, or an uncompressed lackey, plain or din trace in a
/// regular file read without `skip_bad_lines`, cut into byte ranges of about `text_bytes`
/// bytes. At least `min_parts` segments when the trace has that many blocks (or bytes).
pub(crate) fn file_segments(
    trace: &Trace,
    accesses: u64,
    text_bytes: u64,
    min_parts: u64,
) -> Result<Option<FileSegments>> {
    if let Some((path, blocks)) = indexed(trace) {
        let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
        let parts = total.div_ceil(accesses.max(1)).max(min_parts);
        return Ok(Some(FileSegments::Native(NativeSegments {
            ranges: split_blocks(&blocks, usize::try_from(parts).unwrap_or(usize::MAX)),
            source: Source::File(path.clone()),
            path,
            blocks,
        })));
    }
    if let Some((path, format, len)) = text_file(trace) {
        let parts = len.div_ceil(text_bytes.max(1)).max(min_parts);
        return Ok(Some(FileSegments::Text(TextSegments {
            ranges: line_ranges(&path, trace.source(), len, parts)?,
            source: trace.source().clone(),
            path,
            format,
        })));
    }
    Ok(None)
}

impl FileSegments {
    /// The blocks `blocks` (a run of the index of the native trace at `path`) in segments of
    /// about `accesses` accesses.
    pub fn native_blocks(path: &Path, blocks: Vec<BlockEntry>, accesses: u64) -> FileSegments {
        let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
        let parts = total.div_ceil(accesses.max(1)).max(1);
        FileSegments::Native(NativeSegments {
            ranges: split_blocks(&blocks, usize::try_from(parts).unwrap_or(usize::MAX)),
            source: Source::File(path.to_owned()),
            path: path.to_owned(),
            blocks,
        })
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

    fn read(&self, reader: &mut FileReader, i: usize, out: &mut SegmentBuf) -> Result<()> {
        match (self, reader) {
            (FileSegments::Native(s), FileReader::Native(file, decoder)) => {
                for entry in &s.blocks[s.ranges[i].clone()] {
                    if let Err(e) =
                        decoder.read_block(&mut *file, &s.source, entry, out.next_batch())
                    {
                        out.unuse_last();
                        return Err(e);
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
}

/// Blocks of a native trace, in runs.
pub(crate) struct NativeSegments {
    path: PathBuf,
    source: Source,
    blocks: Vec<BlockEntry>,
    ranges: Vec<Range<usize>>,
}

/// Byte ranges of a text trace, cut at line boundaries.
pub(crate) struct TextSegments {
    path: PathBuf,
    source: Source,
    format: Format,
    ranges: Vec<Range<u64>>,
}

impl TextSegments {
    fn read(&self, i: usize, out: &mut SegmentBuf) -> Result<()> {
        let r = self.ranges[i].clone();
        let read = (|| {
            let mut reader = open_text_range(&self.path, &self.source, self.format, r.clone())?;
            loop {
                crate::interrupt::check()?;
                match reader.read_batch(out.next_batch()) {
                    Ok(n) if n > 0 => {}
                    done => {
                        out.unuse_last();
                        return done.map(|_| ());
                    }
                }
            }
        })();
        read.map_err(|e| absolute_line(e, &self.path, r.start))
    }
}

/// Chunks given in memory, each a segment.
pub(crate) struct MemorySegments<'a>(pub &'a [Vec<Batch>]);

impl Segments for MemorySegments<'_> {
    type Reader = ();

    fn count(&self) -> usize {
        self.0.len()
    }

    fn open(&self) -> Result<()> {
        Ok(())
    }

    fn read(&self, _: &mut (), i: usize, out: &mut SegmentBuf) -> Result<()> {
        for b in &self.0[i] {
            out.next_batch().clone_from(b);
        }
        Ok(())
    }

    fn end_byte(&self, _: usize) -> u64 {
        0
    }
}
