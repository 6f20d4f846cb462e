//! Re-interleaving a threaded trace into a concurrent order (docs/threads.md, "Valgrind's
//! serialisation").
//!
//! Valgrind runs one thread at a time, for long slices, so a recording's order is not the
//! order in which threads running on several cores would touch memory: two threads that share
//! a line reach it in bursts of thousands of references, where real cores alternate. An
//! [`Interleaver`] reads the trace once (it is an [`Analysis`]), splitting it into one stream
//! per thread, and [`Interleaver::finish`] gives an [`Interleaved`] reader of the same
//! references dealt round-robin: each thread in turn runs for a *quantum* of instructions
//! (instruction fetches; references when the trace has none, [`QuantumUnit`]), then the next.
//! Any analysis can read it, as any other trace ([`crate::trace::Trace::from_reader`]).
//!
//! A thread joins the rotation once the first thread (the main one) has run as far as it had
//! when the recording first saw the new one: threads do not run before the program creates
//! them. A thread leaves the rotation when its stream ends. Within a thread the order is the
//! recorded one. Locks and joins are not in the trace, so the rotation cannot respect them.
//!
//! Memory does not grow with the trace: the streams are held in memory up to
//! [`DEFAULT_MEMORY`] accesses in all, beyond which the largest is appended to its own
//! temporary native trace (`spill.rs`: anonymous files in [`std::env::temp_dir`], gone when
//! closed, however the process ends), read back block by block while merging (`merge.rs`).

mod merge;
mod spill;
mod timed;

#[cfg(test)]
pub(crate) mod tests;

pub use merge::Interleaved;
pub use timed::{Clocked, Timed};

use std::num::NonZeroU64;

use hashbrown::HashMap;

use crate::access::{AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use spill::Stream;

/// The default quantum of round-robin dealing ([`Interleaved`]), in instructions: about what a
/// core executes while a contended line moves to another core (docs/threads.md says why).
pub const DEFAULT_QUANTUM: u64 = 100;

/// The default slice of dealing in modelled time ([`Timed`]), in cycles: a few references'
/// latencies, well below the time a contended line takes to move (docs/threads.md). The
/// coherence misses hardly depend on it ([`Timed`] runs references to contended lines in the
/// order of the cores' clocks); a smaller slice costs more turns.
pub const DEFAULT_SLICE: u64 = 100;

/// Accesses kept in memory, over every thread, before the largest stream spills (about
/// 21 MiB of columns).
pub const DEFAULT_MEMORY: usize = 1 << 20;

/// What a quantum counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuantumUnit {
    /// Instruction fetches: a slice is that many instructions and the data references that
    /// follow each of them.
    Instructions,
    /// References of any kind: for traces without instruction fetches.
    References,
    /// Cycles of modelled time ([`Timed`]).
    Cycles,
}

/// Splits a trace into per-thread streams, to be re-interleaved by [`Interleaver::finish`].
#[derive(Debug)]
pub struct Interleaver {
    quantum: NonZeroU64,
    memory: usize,
    /// The streams, in order of the threads' first appearance.
    streams: Vec<Stream>,
    index: HashMap<ThreadId, usize>,
    /// Accesses held in memory over all streams.
    held: usize,
    instructions: u64,
    /// The first spill error: `observe` cannot fail, `finish` reports it.
    error: Option<Error>,
}

impl Interleaver {
    /// Slices of `quantum` instructions, streams held in memory up to [`DEFAULT_MEMORY`].
    pub fn new(quantum: NonZeroU64) -> Interleaver {
        Interleaver::with_memory(quantum, DEFAULT_MEMORY)
    }

    /// Slices of `quantum`, at most `memory` accesses held in memory before spilling.
    pub fn with_memory(quantum: NonZeroU64, memory: usize) -> Interleaver {
        Interleaver {
            quantum,
            memory,
            streams: Vec::new(),
            index: HashMap::new(),
            held: 0,
            instructions: 0,
            error: None,
        }
    }

    /// The threads seen so far, in order of first appearance.
    pub fn threads(&self) -> Vec<ThreadId> {
        self.streams.iter().map(|s| s.thread).collect()
    }

    /// The re-interleaved trace; reports an error met while spilling.
    pub fn finish(self) -> Result<Interleaved> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let unit = if self.instructions > 0 {
            QuantumUnit::Instructions
        } else {
            QuantumUnit::References
        };
        Interleaved::new(self.streams, self.quantum.get(), unit)
    }

    /// The threads dealt in modelled time into `machine`, a slice of `quantum` cycles at a
    /// time ([`Timed`]): reading the result runs every reference on the machine. Reports an
    /// error met while spilling.
    pub fn finish_timed<M: Clocked>(
        self,
        quantum: NonZeroU64,
        machine: std::sync::Arc<std::sync::Mutex<M>>,
    ) -> Result<Timed<M>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        Timed::new(self.streams, quantum.get(), machine)
    }

    /// Spills the largest streams until the memory held is within the limit.
    fn spill(&mut self) {
        while self.held > self.memory {
            let Some(big) = self.streams.iter_mut().max_by_key(|s| s.held()) else {
                return;
            };
            self.held -= big.held();
            if let Err(e) = big.spill() {
                self.error = Some(e);
                return;
            }
        }
    }
}

impl Analysis for Interleaver {
    fn observe(&mut self, b: &Batch) {
        if self.error.is_some() {
            return;
        }
        self.instructions += AccessKind::count(&b.kinds)[AccessKind::Instr as usize];
        for (run, thread) in b.thread_runs() {
            let k = match self.index.get(&thread) {
                Some(&k) => k,
                None => {
                    let before = self.streams.first().map_or(0, |s| s.total);
                    self.index.insert(thread, self.streams.len());
                    self.streams.push(Stream::new(thread, before));
                    self.streams.len() - 1
                }
            };
            self.held += run.len();
            self.streams[k].push(b, run);
        }
        self.spill();
    }
}
