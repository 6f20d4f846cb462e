//! [`Writer`]: encodes batches into blocks, then writes the index and trailer.

use std::collections::VecDeque;
use std::io::{Seek, SeekFrom, Write};

use super::calls::{BLOCK_CALLS, MAX_BLOCK_CALLS};
use super::compress::{BlockCompressor, DEPTH, Job};
use super::decode::{BLOCK_HEADER_LEN, BLOCK_RUNS, CODEC_STORED, CODEC_ZSTD};
use super::encode::{BlockEncoder, ItemSource};
use super::index::{self, BlockEntry};
use super::{BLOCK_TAG, Counts, Header, MAX_BLOCK_LEN, crc32, header};
use crate::batch::{Batch, CallOp, Step};
use crate::error::{Error, Result, Source};

/// How a [`Writer`] encodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Accesses per block, 1 to [`MAX_BLOCK_LEN`] (default: the maximum, 65 536). Smaller
    /// blocks compress a little worse and give finer-grained parallel decoding.
    pub block_len: usize,
    /// zstd level (default 3). Higher levels find longer matches, so files shrink and even
    /// decode faster, but encoding slows: on the lackey-like benchmark level 5 gave −9% bytes,
    /// +9% decode speed and −37% encode speed against level 3 (table in
    /// `docs/native-format.md`). Level 3 keeps `convert` from waiting on the writer.
    pub level: i32,
    /// Named in error messages about the output.
    pub source: Source,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            block_len: MAX_BLOCK_LEN,
            level: 3,
            source: Source::Memory,
        }
    }
}

impl WriterOptions {
    /// `record`'s options: zstd level 1, so that compressing keeps pace with encoding the
    /// program's references as they come. At level 3 the compression thread was as slow as the
    /// encoding one and set `record`'s pace on long runs; level 1 takes a sixth less CPU for
    /// files 9 % larger (`record -- bzip2 -9`, docs/recording.md).
    pub fn recording(source: Source) -> Self {
        WriterOptions {
            level: 1,
            source,
            ..Default::default()
        }
    }
}

/// Writes a native trace to any [`Write`]: the header at once, a block whenever
/// [`WriterOptions::block_len`] accesses are buffered, and the index and trailer on
/// [`finish`](Writer::finish). A writer dropped without `finish` leaves a file that readers
/// report as truncated.
///
/// Memory: the block being encoded and up to three being compressed (a few MiB), plus 24 bytes
/// of index per block written (0.4 bytes per thousand accesses).
pub struct Writer<W: Write> {
    out: W,
    opts: WriterOptions,
    header: Header,
    header_len: u64,
    enc: BlockEncoder,
    zstd: BlockCompressor,
    /// The blocks being compressed, oldest first: their access counts and counts.
    pending: VecDeque<(usize, Counts)>,
    /// Buffers of blocks written, for the next ones (a job's buffers are a block's worth, not
    /// made anew for each block).
    spare: Vec<Job>,
    /// Bytes written since the start of the header.
    offset: u64,
    entries: Vec<BlockEntry>,
    counts: Counts,
}

impl<W: Write> std::fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<W: Write> Writer<W> {
    /// A writer with default options; write errors name [`Source::Memory`] (use
    /// [`Writer::with_options`] to name the file). Writes the header.
    pub fn new(out: W, header: Header) -> Result<Self> {
        Writer::with_options(out, header, WriterOptions::default())
    }

    /// A writer with `opts`. Writes the header (with [`VERSION`](super::VERSION) and unknown
    /// counts; `header.version` and `header.counts` are ignored).
    pub fn with_options(mut out: W, mut header: Header, opts: WriterOptions) -> Result<Self> {
        if !(1..=MAX_BLOCK_LEN).contains(&opts.block_len) {
            return Err(Error::InvalidParameter {
                name: "native block length",
                message: format!("{} is not between 1 and {MAX_BLOCK_LEN}", opts.block_len),
            });
        }
        header.version = super::VERSION;
        header.counts = None;
        let bytes = header::encode(&header, None)?;
        let zstd = BlockCompressor::new(opts.level).map_err(|e| Error::InvalidParameter {
            name: "zstd level",
            message: format!("{}: {e}", opts.level),
        })?;
        out.write_all(&bytes)
            .map_err(|e| Error::io(&opts.source, e))?;
        Ok(Writer {
            out,
            header,
            header_len: bytes.len() as u64,
            enc: BlockEncoder::default(),
            zstd,
            pending: VecDeque::with_capacity(DEPTH),
            spare: Vec::new(),
            offset: bytes.len() as u64,
            entries: Vec::new(),
            counts: Counts::default(),
            opts,
        })
    }

    /// Appends the accesses of `batch`, with their threads and call events, writing each
    /// block as it fills.
    pub fn write_batch(&mut self, batch: &Batch) -> Result<()> {
        let n = batch.len();
        debug_assert!(
            batch.sizes.len() == n && batch.kinds.len() == n && batch.pcs.len() == n,
            "batch columns of different lengths"
        );
        for step in batch.steps() {
            let (run, thread) = match step {
                Step::Accesses(run, thread) => (run, thread),
                Step::Call(e) => {
                    self.push_call(e.thread, e.op)?;
                    continue;
                }
            };
            self.enc.set_thread(thread);
            let mut i = run.start;
            while i < run.end {
                // A full block is written when the next access comes, so that call events
                // after a trace's last access stay in its last block.
                if self.enc.len() == self.opts.block_len {
                    self.flush_block()?;
                }
                let take = (self.opts.block_len - self.enc.len()).min(run.end - i);
                let range = i..i + take;
                self.enc.push_run(
                    &batch.addrs[range.clone()],
                    &batch.sizes[range.clone()],
                    &batch.kinds[range.clone()],
                    &batch.pcs[range],
                );
                i += take;
            }
        }
        Ok(())
    }

    /// A call event of `thread`'s stack before the next access written ([`Writer::write_items`]'
    /// path; [`Writer::write_batch`] writes its batch's). A block with very many events and
    /// some accesses is written early, so a block's events stay within the format's bound.
    pub(crate) fn push_call(&mut self, thread: crate::access::ThreadId, op: CallOp) -> Result<()> {
        if self.enc.call_count() >= MAX_BLOCK_CALLS && self.enc.len() > 0 {
            self.flush_block()?;
        }
        self.enc.push_call(thread, op);
        Ok(())
    }

    /// Makes the accesses written from now on `thread`'s ([`Writer::write_items`]' path;
    /// [`Writer::write_batch`] takes each access's thread from its batch).
    pub(crate) fn set_thread(&mut self, thread: crate::access::ThreadId) {
        self.enc.set_thread(thread);
    }

    /// Appends the items of `source` until it ends, writing each block as it fills: `record`'s
    /// path from the tool's words, runs of instruction fetches copied from their templates.
    pub(crate) fn write_items<'a>(&mut self, source: &mut impl ItemSource<'a>) -> Result<()> {
        loop {
            self.enc.push_from(source, self.opts.block_len);
            let calls_full = self.enc.call_count() >= MAX_BLOCK_CALLS && self.enc.len() > 0;
            if self.enc.len() < self.opts.block_len && !calls_full {
                return Ok(());
            }
            self.flush_block()?;
        }
    }

    /// Counts of the accesses written so far.
    pub fn counts(&self) -> Counts {
        let mut c = self.counts;
        for (_, pending) in &self.pending {
            c.merge(pending);
        }
        c.merge(&self.enc.counts());
        c
    }

    /// Writes the last block, the index and the trailer; flushes and returns the output.
    pub fn finish(mut self) -> Result<(W, Counts)> {
        self.finish_inner()?;
        Ok((self.out, self.counts))
    }

    fn finish_inner(&mut self) -> Result<()> {
        self.flush_block()?;
        while !self.pending.is_empty() {
            self.write_pending()?;
        }
        let bytes = index::encode(&self.entries, &self.counts, self.offset);
        self.write(&bytes)?;
        self.out
            .flush()
            .map_err(|e| Error::io(&self.opts.source, e))
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.opts.source, e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Hands the block being encoded to the compressor, after writing the oldest one being
    /// compressed if [`DEPTH`] are.
    fn flush_block(&mut self) -> Result<()> {
        let n = self.enc.len();
        if n == 0 {
            return Ok(());
        }
        let counts = self.enc.counts();
        if self.pending.len() == DEPTH {
            self.write_pending()?;
        }
        let mut job = self.spare.pop().unwrap_or_default();
        self.enc.swap_out(&mut job.block);
        self.zstd.submit(job);
        self.pending.push_back((n, counts));
        Ok(())
    }

    /// Writes the oldest block being compressed, if any, when its compression is done.
    fn write_pending(&mut self) -> Result<()> {
        let Some((n, counts)) = self.pending.pop_front() else {
            return Ok(());
        };
        let job = self.zstd.collect().ok_or_else(|| Error::Io {
            source_name: self.opts.source.clone(),
            err: std::io::Error::other("the block compression thread stopped"),
        })?;
        let (codec, payload) = if job.zstd_ok {
            (CODEC_ZSTD, &job.comp)
        } else {
            (CODEC_STORED, &job.raw)
        };
        let mut head = [0u8; BLOCK_HEADER_LEN];
        head[..4].copy_from_slice(&BLOCK_TAG);
        head[4..8].copy_from_slice(&(n as u32).to_le_bytes());
        head[8..12].copy_from_slice(&(job.raw.len() as u32).to_le_bytes());
        head[12..16].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        head[16] = codec;
        head[17] = if job.block.has_runs() { BLOCK_RUNS } else { 0 }
            | if job.block.has_calls() {
                BLOCK_CALLS
            } else {
                0
            };
        let crc = crc32(&[&head[..20], payload]);
        head[20..24].copy_from_slice(&crc.to_le_bytes());
        let entry = BlockEntry {
            offset: self.offset,
            comp_len: payload.len() as u32,
            first: self.counts.accesses,
            count: n as u32,
        };
        let out = &mut self.out;
        out.write_all(&head)
            .and_then(|()| out.write_all(payload))
            .map_err(|e| Error::io(&self.opts.source, e))?;
        self.offset += (BLOCK_HEADER_LEN + payload.len()) as u64;
        self.entries.push(entry);
        self.counts.merge(&counts);
        self.spare.push(job);
        Ok(())
    }
}

impl<W: Write + Seek> Writer<W> {
    /// [`finish`](Writer::finish), then rewrites the header in place with the counts, leaving
    /// the output positioned at its end.
    pub fn finish_and_patch_header(mut self) -> Result<(W, Counts)> {
        self.finish_inner()?;
        let bytes = header::encode(&self.header, Some(self.counts))?;
        debug_assert_eq!(bytes.len() as u64, self.header_len);
        let source = &self.opts.source;
        let io = |e| Error::io(source, e);
        let end = self.out.stream_position().map_err(io)?;
        let start = end.checked_sub(self.offset).ok_or_else(|| Error::Io {
            source_name: source.clone(),
            err: std::io::Error::other("the output is shorter than what was written to it"),
        })?;
        self.out.seek(SeekFrom::Start(start)).map_err(io)?;
        self.out.write_all(&bytes).map_err(io)?;
        self.out.seek(SeekFrom::Start(end)).map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok((self.out, self.counts))
    }
}
