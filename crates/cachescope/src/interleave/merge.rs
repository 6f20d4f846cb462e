//! [`Interleaved`]: the per-thread streams dealt round-robin, a quantum at a time.

use std::collections::VecDeque;

use super::QuantumUnit;
use super::spill::{Source, Stream};
use crate::access::{AccessKind, ThreadId};
use crate::batch::{BATCH_LEN, Batch};
use crate::error::Result;
use crate::trace::AccessReader;

/// A threaded trace re-interleaved: each thread in turn runs one quantum. Read it as any
/// trace ([`AccessReader`]); see [`crate::interleave`] for the rules.
pub struct Interleaved {
    sources: Vec<Source>,
    quantum: u64,
    unit: QuantumUnit,
    /// The threads taking turns, the running one first.
    rotation: VecDeque<usize>,
    /// Threads not yet started, in order of first appearance.
    waiting: VecDeque<usize>,
    /// Counted accesses (instructions or references) left in the running slice.
    left: u64,
}

impl std::fmt::Debug for Interleaved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interleaved")
            .field("threads", &self.threads())
            .field("quantum", &self.quantum)
            .field("unit", &self.unit)
            .finish_non_exhaustive()
    }
}

impl Interleaved {
    pub(super) fn new(streams: Vec<Stream>, quantum: u64, unit: QuantumUnit) -> Result<Self> {
        let sources = streams
            .into_iter()
            .map(Stream::into_source)
            .collect::<Result<Vec<_>>>()?;
        let mut merged = Interleaved {
            waiting: (0..sources.len()).collect(),
            sources,
            quantum,
            unit,
            rotation: VecDeque::new(),
            left: quantum,
        };
        merged.admit();
        Ok(merged)
    }

    /// What the quantum counts: instructions, or references when the trace had no
    /// instruction fetch.
    pub fn unit(&self) -> QuantumUnit {
        self.unit
    }

    /// The quantum, in [`Interleaved::unit`]s.
    pub fn quantum(&self) -> u64 {
        self.quantum
    }

    /// The threads, in order of first appearance in the recording.
    pub fn threads(&self) -> Vec<ThreadId> {
        self.sources.iter().map(|s| s.thread).collect()
    }

    /// Starts the waiting threads that may run: those the first thread has run as far for
    /// as the recording had when they first ran. They start in order of first appearance
    /// (the first thread's count each waits for grows with it). No thread waits forever:
    /// once the first thread has ended, every count it had is reached.
    fn admit(&mut self) {
        while let Some(&k) = self.waiting.front() {
            let first = self.sources.first().map_or(0, |s| s.emitted);
            if first < self.sources[k].before {
                return;
            }
            self.waiting.pop_front();
            self.rotation.push_back(k);
        }
    }

    /// Ends the running slice: the newly started threads go next, then the one that ran
    /// (unless its stream `ended`).
    fn rotate(&mut self, ended: bool) {
        let ran = self.rotation.pop_front();
        self.admit();
        if let Some(k) = ran.filter(|_| !ended) {
            self.rotation.push_back(k);
        }
        self.left = self.quantum;
    }
}

/// The end of the slice part in `kinds[from..to]`: before the first counted access once
/// `left` is 0. Returns the end, the counted accesses taken, and whether the slice is over.
#[inline]
fn slice_end(
    kinds: &[AccessKind],
    from: usize,
    to: usize,
    mut left: u64,
    unit: QuantumUnit,
) -> (usize, u64, bool) {
    let start = left;
    match unit {
        // (Round-robin dealing never counts cycles: those are `Timed`'s.)
        QuantumUnit::References | QuantumUnit::Cycles => {
            let n = (to - from).min(usize::try_from(left).unwrap_or(usize::MAX));
            let over = n < to - from;
            (from + n, n as u64, over)
        }
        QuantumUnit::Instructions => {
            for (i, &k) in kinds[from..to].iter().enumerate() {
                if k == AccessKind::Instr {
                    if left == 0 {
                        return (from + i, start, true);
                    }
                    left -= 1;
                }
            }
            (to, start - left, false)
        }
    }
}

impl AccessReader for Interleaved {
    fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
        out.clear();
        while out.len() < BATCH_LEN {
            let Some(&k) = self.rotation.front() else {
                break;
            };
            let src = &mut self.sources[k];
            if !src.fill()? {
                self.rotate(true);
                continue;
            }
            let to = src.cur.len().min(src.pos + (BATCH_LEN - out.len()));
            let (end, used, over) = slice_end(&src.cur.kinds, src.pos, to, self.left, self.unit);
            out.extend_from_range(&src.cur, src.pos..end);
            src.emitted += (end - src.pos) as u64;
            src.pos = end;
            self.left -= used;
            if over {
                self.rotate(false);
            }
        }
        Ok(out.len())
    }
}
