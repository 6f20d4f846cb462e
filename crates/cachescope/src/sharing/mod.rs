//! Sharing between threads, line by line (`cachescope sharing`): every cache line that two or
//! more threads touch and at least one writes, with which bytes each thread reads and writes,
//! classified as *true* sharing (one thread writes bytes another thread uses: the data itself
//! is communicated) or *false* sharing (the threads' bytes are disjoint: only the line is
//! shared, and moving the data apart removes the communication). docs/threads.md defines both.
//!
//! [`SharingAnalysis`] observes threaded batches in one pass; its memory is one small record
//! per distinct data line (per thread only for the lines more than one thread touches). Which
//! data structure a line belongs to and what it costs in a multi-core cache are the caller's
//! to add ([`SharedLine::structure`], [`SharedLine::coherence_misses`]): [`analyse`] (`model.rs`)
//! names it with the attribution's buckets and simulates it with [`crate::sim::MultiCore`].
//! A sampled stream's table ([`promote`]) holds the sampled lines and those a bounded detector
//! ([`detect`]) saw two threads write in the full stream, measured whole.

pub mod detect;
mod line;
mod locals;
mod model;
mod names;
mod parts;
pub mod promote;
pub mod writers;

#[cfg(test)]
mod tests;

pub use line::{LineUse, ThreadUse};
pub use locals::Locals;
pub use model::{Finder, MAX_CORES, Machine, Options, Sharing, analyse};
pub use names::name;
pub use parts::{Field, Namer, Part};

use std::collections::HashMap;

use crate::access::{AccessKind, LineSize, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;

/// Finds the lines threads share.
#[derive(Debug)]
pub struct SharingAnalysis {
    line_size: LineSize,
    lines: HashMap<u64, LineUse>,
    /// The frames' locals, followed when an event log is given ([`SharingAnalysis::follow`]).
    locals: Option<Locals>,
}

/// A line two or more threads touch and at least one writes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharedLine {
    /// The line's first byte address, `0x…`.
    pub line: String,
    /// `true` when a thread writes bytes another thread reads or writes, `false` when the
    /// threads' bytes are disjoint.
    pub kind: String,
    /// The data structure: the attribution's stat bucket of the line's first shared byte
    /// (`other` until a caller names it).
    pub structure: String,
    /// Each thread's use of the line, in thread order.
    pub threads: Vec<ThreadUse>,
    /// Writes to the line, all threads.
    pub writes: u64,
    /// Misses of the multi-core model on this line caused by coherence (0 until a caller
    /// simulates it).
    pub coherence_misses: u64,
    /// The code lines that write it, most writes first (instruction addresses `0x…` until a
    /// caller symbolizes them).
    pub code: Vec<String>,
    /// What to do: for false sharing, what moves the threads' data apart; for true sharing,
    /// how to pass less data; for a line holding several structures, which to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The structures the line holds, each with its threads, its kind of sharing and its
    /// fields (empty until a caller names them: [`name`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub structures: Vec<Part>,
    /// In a sampled analysis, how the line came to be measured: `sampled` (a line of the
    /// sample: every reference to it) or `promoted` (written by a second thread outside the
    /// sample: its references from the promoting one on, [`promote`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// For a promoted line, the data references of the whole stream before the one that
    /// promoted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted_at: Option<u64>,
    /// The line's size in bytes.
    #[serde(skip)]
    pub line_size: u64,
    /// The writing instructions and their writes, most first (for the caller to name).
    #[serde(skip)]
    pub write_pcs: Vec<(u64, u64)>,
    /// The line's first byte address (what `line` prints).
    #[serde(skip)]
    pub addr: u64,
    /// The offset of the first byte the threads that decide its kind use: what names the
    /// line's data structure (the line's start may be another variable or padding).
    #[serde(skip)]
    pub first_byte: u64,
    /// The frames' locals referenced in the line: (start, end, `function:local`).
    #[serde(skip)]
    pub locals: Vec<(u64, u64, String)>,
}

impl SharingAnalysis {
    /// Lines of `line_size` bytes.
    pub fn new(line_size: LineSize) -> SharingAnalysis {
        SharingAnalysis {
            line_size,
            lines: HashMap::new(),
            locals: None,
        }
    }

    /// Follows the frames' locals through the pass, so lines on the stack are named after
    /// them (`function:local`).
    pub fn follow(&mut self, locals: Locals) {
        self.locals = Some(locals);
    }

    /// The shared lines (two threads or more, a write), most writes first.
    pub fn finish(&self) -> Vec<SharedLine> {
        let mut shared: Vec<SharedLine> = self
            .lines
            .iter()
            .filter_map(|(&l, u)| u.shared(l << self.line_size.shift(), self.line_size))
            .collect();
        if let Some(locals) = &self.locals {
            for l in &mut shared {
                l.locals = locals.of_line(l.addr >> self.line_size.shift());
            }
        }
        shared.sort_by(|a, b| b.writes.cmp(&a.writes).then_with(|| a.line.cmp(&b.line)));
        shared
    }

    /// Distinct data lines seen.
    pub fn lines(&self) -> usize {
        self.lines.len()
    }

    fn access(&mut self, thread: ThreadId, addr: u64, size: u32, kind: AccessKind, pc: u64) {
        let line = self.line_size.line_of(addr).0;
        let mask = line::byte_mask(addr, size, self.line_size);
        self.lines
            .entry(line)
            .or_default()
            .record(thread, kind, mask, pc);
    }
}

impl Analysis for SharingAnalysis {
    fn observe(&mut self, batch: &Batch) {
        if let Some(mut locals) = self.locals.take() {
            locals.observe(batch, self.line_size.shift(), |t, i| {
                self.access(
                    t,
                    batch.addrs[i],
                    batch.sizes[i],
                    batch.kinds[i],
                    batch.pcs[i],
                );
            });
            self.locals = Some(locals);
            return;
        }
        for (range, t) in batch.thread_runs() {
            for i in range {
                let kind = batch.kinds[i];
                if kind.is_data() {
                    self.access(t, batch.addrs[i], batch.sizes[i], kind, batch.pcs[i]);
                }
            }
        }
    }
}

/// Sorts `lines` by coherence misses, then writes (the order `sharing` prints).
pub fn rank(lines: &mut [SharedLine]) {
    lines.sort_by(|a, b| {
        (b.coherence_misses, b.writes)
            .cmp(&(a.coherence_misses, a.writes))
            .then_with(|| a.line.cmp(&b.line))
    });
}
