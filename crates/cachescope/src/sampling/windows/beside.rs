//! [`Beside`]: the reuse windows counted on a thread beside the sampler
//! ([`super::Windows::beside`]).
//!
//! At the start of a sampled report the floored sampler draws every reference, and counting
//! its windows took most of its thread's time (a third of the CPU of `report --sampled` on a
//! recorded gzip) while the decoding threads waited for it. The counts matter only at the
//! end, so the sampler hands them over: its lines in blocks, each window asked with the block
//! holding its last reference; the counter keeps the blocks a window can reach and counts as
//! [`super::Windows::distinct_between`] does, so the profile is the same. The sampler keeps
//! the budget, which depends on the windows' lengths only.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::super::line_set::LineSet;

/// References per block handed over (64 KiB of lines).
const BLOCK: usize = 1 << 13;
/// Blocks the sampler may be ahead of the counter (4 MiB): the counts are heaviest at the
/// start, when every reference is drawn, and catch up later.
const QUEUE: usize = 64;

/// A block of lines from position `start` on, and the windows `(j, i)` asked while it filled.
struct Block {
    start: u64,
    lines: Vec<u64>,
    asked: Vec<(u64, u64)>,
}

/// The sampler's side: the block filling, and the counter.
#[derive(Debug)]
pub(super) struct Beside {
    start: u64,
    lines: Vec<u64>,
    asked: Vec<(u64, u64)>,
    to: Option<SyncSender<Block>>,
    counter: Option<JoinHandle<Vec<(u64, u32)>>>,
}

impl Beside {
    /// A counter for windows of at most `ring` references, positions from 1; `None` when no
    /// thread can be started (the windows are then counted in the sampler's).
    pub(super) fn start(ring: u64) -> Option<Beside> {
        let (to, from) = sync_channel(QUEUE);
        let counter = std::thread::Builder::new()
            .name("cachescope-windows".into())
            .spawn(move || count(from, ring))
            .ok()?;
        Some(Beside {
            start: 1,
            lines: Vec::with_capacity(BLOCK),
            asked: Vec::new(),
            to: Some(to),
            counter: Some(counter),
        })
    }

    /// The next reference touches `line`.
    #[inline(always)]
    pub(super) fn push(&mut self, line: u64) {
        self.lines.push(line);
        if self.lines.len() == BLOCK {
            self.send();
        }
    }

    /// Asks for the distinct lines strictly between positions `j` and `i` (the reference at
    /// `i` not pushed yet).
    pub(super) fn ask(&mut self, j: u64, i: u64) {
        self.asked.push((j, i));
    }

    fn send(&mut self) {
        let block = Block {
            start: self.start,
            lines: std::mem::replace(&mut self.lines, Vec::with_capacity(BLOCK)),
            asked: std::mem::take(&mut self.asked),
        };
        self.start += block.lines.len() as u64;
        // A counter that stopped panicked: `end` says so.
        if let Some(to) = &self.to
            && to.send(block).is_err()
        {
            self.to = None;
        }
    }

    /// Waits for every count: `(j, distance)` in the order asked.
    pub(super) fn end(&mut self) -> Vec<(u64, u32)> {
        self.send();
        self.to = None;
        match self.counter.take().map(JoinHandle::join) {
            Some(Ok(counted)) => counted,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Vec::new(),
        }
    }

    /// Heap bytes at most, both sides: the blocks queued and kept, and the counter's set.
    pub(super) fn heap_bytes(ring: u64) -> usize {
        let blocks = QUEUE + 2 + ring as usize / BLOCK;
        blocks * BLOCK * 8 + ring as usize * 20
    }

    /// Whether counts are still running (before [`Beside::end`]).
    pub(super) fn counting(&self) -> bool {
        self.counter.is_some()
    }
}

/// The counter's loop: each block kept while a window asked later may reach it.
fn count(from: Receiver<Block>, ring: u64) -> Vec<(u64, u32)> {
    let mut set = LineSet::new(ring as usize);
    let mut blocks: VecDeque<(u64, Vec<u64>)> = VecDeque::new();
    let mut counted = Vec::new();
    for Block {
        start,
        lines,
        asked,
    } in from
    {
        let end = start + lines.len() as u64;
        blocks.push_back((start, lines));
        for (j, i) in asked {
            // Positions j + 1 ..= i − 1, from the blocks overlapping them.
            let mut parts: Vec<&[u64]> = Vec::with_capacity(blocks.len());
            for (s, l) in &blocks {
                let lo = (j + 1).max(*s);
                let hi = i.min(s + l.len() as u64);
                if lo < hi {
                    parts.push(&l[(lo - s) as usize..(hi - s) as usize]);
                }
            }
            counted.push((j, set.count(&parts) as u32));
        }
        // A window asked with a later block starts after `end − ring`.
        while blocks
            .front()
            .is_some_and(|(s, l)| s + l.len() as u64 + ring <= end)
        {
            blocks.pop_front();
        }
    }
    counted
}
