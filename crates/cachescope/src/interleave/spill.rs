//! One thread's stream: the accesses held in memory, and what did not fit, appended to a
//! temporary native trace; then the same accesses read back in order ([`Source`]).

use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};
use std::ops::Range;

use crate::access::ThreadId;
use crate::batch::Batch;
use crate::error::{Error, Result, Source as Named};
use crate::trace::AccessReader;
use crate::trace::native::{Header, Reader, Writer, WriterOptions};

/// Accesses per spilled block: a quarter of the format's maximum, so that merging, which
/// holds one decoded block per thread, stays small with many threads.
const SPILL_BLOCK: usize = 16 * 1024;

/// Where temporary files are, for error messages.
fn named() -> Named {
    Named::File(std::env::temp_dir())
}

fn io(err: std::io::Error) -> Error {
    Error::io(&named(), err)
}

/// One thread's accesses while the trace is read.
pub(super) struct Stream {
    pub(super) thread: ThreadId,
    /// Accesses of the first thread before this one's first access.
    pub(super) before: u64,
    /// Accesses so far.
    pub(super) total: u64,
    /// The latest accesses, not spilled.
    held: Batch,
    spill: Option<Writer<BufWriter<File>>>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("thread", &self.thread)
            .field("total", &self.total)
            .field("held", &self.held.len())
            .field("spilled", &self.spill.is_some())
            .finish()
    }
}

impl Stream {
    pub(super) fn new(thread: ThreadId, before: u64) -> Stream {
        Stream {
            thread,
            before,
            total: 0,
            held: Batch::with_capacity(0),
            spill: None,
        }
    }

    /// Appends the accesses `run` of `b`, all this thread's. (Column by column: the batch's
    /// own `extend_from_range` walks every run of `b`, once per run here.)
    pub(super) fn push(&mut self, b: &Batch, run: Range<usize>) {
        self.total += run.len() as u64;
        let held = &mut self.held;
        held.set_thread(self.thread);
        held.addrs.extend_from_slice(&b.addrs[run.clone()]);
        held.sizes.extend_from_slice(&b.sizes[run.clone()]);
        held.kinds.extend_from_slice(&b.kinds[run.clone()]);
        held.pcs.extend_from_slice(&b.pcs[run]);
    }

    /// Accesses held in memory.
    pub(super) fn held(&self) -> usize {
        self.held.len()
    }

    /// Appends the held accesses to the stream's temporary trace (made on the first spill).
    pub(super) fn spill(&mut self) -> Result<()> {
        let writer = match &mut self.spill {
            Some(w) => w,
            None => {
                let file = tempfile::tempfile().map_err(io)?;
                let opts = WriterOptions {
                    block_len: SPILL_BLOCK,
                    level: 1,
                    source: named(),
                };
                let out = BufWriter::with_capacity(1 << 20, file);
                self.spill
                    .insert(Writer::with_options(out, Header::default(), opts)?)
            }
        };
        writer.write_batch(&self.held)?;
        // Give the memory back: the budget counts what is held, not what was.
        self.held = Batch::with_capacity(0);
        Ok(())
    }

    /// The stream read back: the spilled accesses, then the held ones.
    pub(super) fn into_source(self) -> Result<Source> {
        let reader = match self.spill {
            Some(w) => {
                let (out, _) = w.finish()?;
                let mut file = out.into_inner().map_err(|e| io(e.into_error()))?;
                file.seek(SeekFrom::Start(0)).map_err(io)?;
                Some(Reader::new(BufReader::new(file), named())?)
            }
            None => None,
        };
        Ok(Source {
            thread: self.thread,
            before: self.before,
            reader,
            rest: Some(self.held),
            cur: Batch::with_capacity(0),
            pos: 0,
            emitted: 0,
        })
    }
}

/// One thread's accesses read back in order.
pub(super) struct Source {
    pub(super) thread: ThreadId,
    pub(super) before: u64,
    reader: Option<Reader<BufReader<File>>>,
    /// The held accesses, once the spilled ones are read.
    rest: Option<Batch>,
    /// The accesses being dealt, from `pos`.
    pub(super) cur: Batch,
    pub(super) pos: usize,
    /// Accesses dealt so far.
    pub(super) emitted: u64,
}

impl Source {
    /// Makes `cur[pos..]` non-empty; false at the end of the stream.
    pub(super) fn fill(&mut self) -> Result<bool> {
        while self.pos == self.cur.len() {
            self.pos = 0;
            if let Some(r) = &mut self.reader {
                if r.read_batch(&mut self.cur)? > 0 {
                    continue;
                }
                self.reader = None;
            }
            match self.rest.take() {
                Some(b) => self.cur = b,
                None => return Ok(false),
            }
        }
        Ok(true)
    }
}
