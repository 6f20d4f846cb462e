//! [`Detector`]: the lines two or more threads write, found in a whole stream with bounded
//! memory, so that a sampled report's sharing table can measure them beside the sampled lines
//! ([`super::promote`]). It reads the full stream under the sampled stage of the report's
//! first read of its threads ([`crate::trace::Observing`], a reader that passes every batch on unchanged):
//! the per-thread curves above the stage see the sampled stream as before.
//!
//! Memory is bounded whatever the footprint: the fixed table of the lines written lately
//! ([`Writers`]), and at most [`PromoteOptions::max_lines`] candidates (half of them at most
//! for lines whose two writers' bytes overlap, so that candidates for false sharing keep room);
//! second writers past the cap are counted, once per line while the table holds it
//! ([`Promotion::dropped`]). Lines only read by threads other than their writer are not
//! candidates (a line written once and read by every thread would fill the cap).

use super::writers::{DEFAULT_SETS_LOG2, Writers};
use crate::access::{AccessKind, LineSize, ThreadId};
use crate::batch::Batch;

/// Default cap of candidate lines.
pub const DEFAULT_MAX_PROMOTED: usize = 4096;

/// How the detector is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromoteOptions {
    /// The table has 2^`sets_log2` sets of [`super::writers::WAYS`] lines (at most 30).
    pub sets_log2: u32,
    /// At most this many candidate lines.
    pub max_lines: usize,
}

impl Default for PromoteOptions {
    /// 2^16 sets of 4 lines (6 MiB), at most [`DEFAULT_MAX_PROMOTED`] candidates.
    fn default() -> PromoteOptions {
        PromoteOptions {
            sets_log2: DEFAULT_SETS_LOG2,
            max_lines: DEFAULT_MAX_PROMOTED,
        }
    }
}

/// What the detector did (report.json's `threads.sharing.promotion`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Promotion {
    /// Lines the detector's table holds at once.
    pub table_lines: u64,
    /// Written lines the table replaced by another (each one's last writer forgotten: a second
    /// thread's write after that is taken for a first).
    pub evicted: u64,
    /// Lines promoted: written by a second thread, so measured in full beside the sample.
    pub promoted: u64,
    /// The cap on promoted lines.
    pub max_lines: u64,
    /// Lines written by a second thread but not promoted, the cap reached.
    pub dropped: u64,
}

/// Candidate lines → data references of the stream before the second writer's. Looked up at
/// every write of the full stream, so a fast fixed hash rather than SipHash.
pub type Found = hashbrown::HashMap<u64, u64, foldhash::fast::FixedState>;

/// A thread marked in the table as dropped: its line is not counted again.
const MUTED: ThreadId = ThreadId::MAX;

/// The table and the candidates; see the module doc.
#[derive(Debug)]
pub struct Detector {
    line_size: LineSize,
    writers: Writers,
    found: Found,
    overlapping: usize,
    max_lines: usize,
    dropped: u64,
    data: u64,
}

impl Detector {
    /// A detector of lines of `line_size` bytes, sized by `options`.
    pub fn new(line_size: LineSize, options: PromoteOptions) -> Detector {
        Detector {
            line_size,
            writers: Writers::new(options.sets_log2),
            found: Found::default(),
            overlapping: 0,
            max_lines: options.max_lines,
            dropped: 0,
            data: 0,
        }
    }

    /// Reads the next batch of the full stream.
    pub fn observe(&mut self, batch: &Batch) {
        let shift = self.line_size.shift();
        for (run, thread) in batch.thread_runs() {
            for i in run {
                match batch.kinds[i] {
                    AccessKind::Instr => continue,
                    AccessKind::Load => {}
                    _ => {
                        let addr = batch.addrs[i];
                        let line = addr >> shift;
                        if !self.found.contains_key(&line) {
                            self.written(line, thread, addr, batch.sizes[i]);
                        }
                    }
                }
                self.data += 1;
            }
        }
    }

    /// A write of a line not yet a candidate.
    fn written(&mut self, line: u64, thread: ThreadId, addr: u64, size: u32) {
        let mask = super::line::byte_mask(addr, size, self.line_size);
        let Some(second) = self.writers.write(line, thread, mask) else {
            return;
        };
        if second.before == MUTED {
            // Dropped already: it stays so.
            self.writers.write(line, MUTED, 0);
            return;
        }
        let room = self.found.len() < self.max_lines
            && (!second.overlap || self.overlapping < self.max_lines / 2);
        if !room {
            self.dropped += 1;
            self.writers.write(line, MUTED, 0);
            return;
        }
        self.overlapping += usize::from(second.overlap);
        self.found.insert(line, self.data);
    }

    /// The candidate lines, each with the data references before its second writer's.
    pub fn found(&self) -> &Found {
        &self.found
    }

    /// What the detector did.
    pub fn summary(&self) -> Promotion {
        Promotion {
            table_lines: self.writers.capacity() as u64,
            evicted: self.writers.evicted(),
            promoted: self.found.len() as u64,
            max_lines: self.max_lines as u64,
            dropped: self.dropped,
        }
    }
}

impl crate::analysis::Analysis for Detector {
    fn observe(&mut self, batch: &Batch) {
        Detector::observe(self, batch)
    }
}
