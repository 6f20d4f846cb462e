//! [`Timed`]: the per-thread streams dealt in modelled time (docs/threads.md, "Interleaving
//! in modelled time").
//!
//! Each core has a clock ([`Clocked`]: the machine the references run on keeps it, advancing
//! it by each instruction and by the latency of each reference's outcome). The next turn goes
//! to the core whose clock is lowest (the lowest-numbered on a tie); it runs its thread until
//! its clock has advanced by a slice of `quantum` cycles, so no core starts a reference more
//! than a slice after another's clock. While it is ahead of another core, a reference that
//! touches a line another core holds is not run: the turn ends before it, and the reference
//! runs when this core's clock is the lowest again. So references to contended lines are
//! made in the order of the cores' clocks, whatever the slice, and a contended line moves
//! between cores at the rate the modelled latencies allow; only references to lines no other
//! core holds run up to a slice ahead.
//!
//! Threads start as in round-robin dealing ([`super::Interleaved`]): once the first thread has
//! run as far as it had when the recording first saw them. A thread that starts on an idle
//! core starts at the first thread's time (its core's clock moves on to it). A core running
//! several threads gives them its turns in rotation, a slice each. The dealing and the
//! simulation run together: each reference is run by the machine as it is dealt, and the
//! batches read are the references in the order they ran.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::spill::{Source, Stream};
use crate::access::ThreadId;
use crate::batch::{BATCH_LEN, Batch};
use crate::error::Result;
use crate::trace::AccessReader;

/// The machine a time-driven dealing runs the references on: it places each thread on a core
/// and keeps each core's clock, in cycles (`crate::sim::MultiCore` is one).
pub trait Clocked: Send {
    /// The core `thread` runs on (placing it on its first appearance).
    fn core_of(&mut self, thread: ThreadId) -> u32;
    /// `core`'s clock.
    fn clock(&self, core: u32) -> u64;
    /// Moves an idle `core`'s clock on to `time`, if it is behind (a thread starts on it).
    fn idle_until(&mut self, core: u32, time: u64);
    /// Runs access `i` of `batch`, made by `thread`, on `core`, advancing its clock; except
    /// when `ahead` (another core's clock is behind this one's) and the access touches a line
    /// another core holds: then it runs nothing and returns false.
    fn step(&mut self, core: u32, thread: ThreadId, batch: &Batch, i: usize, ahead: bool) -> bool;
}

/// The running turn: a core, the clock at which its slice ends, the lowest clock of the
/// other cores with threads (they do not move during the turn).
#[derive(Clone, Copy, Debug)]
struct Turn {
    core: u32,
    until: u64,
    others: u64,
}

/// A threaded trace dealt in modelled time into the machine `M`, which runs each reference as
/// it is dealt. Read it as any trace ([`AccessReader`]): the references come in the order
/// they ran; the machine holds the results. See the module documentation.
pub struct Timed<M> {
    sources: Vec<Source>,
    machine: Arc<Mutex<M>>,
    quantum: u64,
    /// Per core (by number), its threads ready to run, the running one first.
    ready: Vec<VecDeque<usize>>,
    /// Threads not yet started, in order of first appearance.
    waiting: VecDeque<usize>,
    turn: Option<Turn>,
}

impl<M> std::fmt::Debug for Timed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timed")
            .field("threads", &self.sources.len())
            .field("quantum", &self.quantum)
            .finish_non_exhaustive()
    }
}

impl<M: Clocked> Timed<M> {
    pub(super) fn new(streams: Vec<Stream>, quantum: u64, machine: Arc<Mutex<M>>) -> Result<Self> {
        let sources = streams
            .into_iter()
            .map(Stream::into_source)
            .collect::<Result<Vec<_>>>()?;
        let mut timed = Timed {
            waiting: (0..sources.len()).collect(),
            sources,
            machine,
            quantum: quantum.max(1),
            ready: Vec::new(),
            turn: None,
        };
        let machine = timed.machine.clone();
        timed.admit(&mut lock(&machine));
        Ok(timed)
    }

    /// The slice, in cycles.
    pub fn quantum(&self) -> u64 {
        self.quantum
    }

    /// The threads, in order of first appearance in the recording.
    pub fn threads(&self) -> Vec<ThreadId> {
        self.sources.iter().map(|s| s.thread).collect()
    }

    /// Starts the waiting threads the first thread has run far enough for (as
    /// [`super::Interleaved`] does); each on an idle core starts at the first thread's time.
    fn admit(&mut self, m: &mut M) {
        while let Some(&k) = self.waiting.front() {
            let first = self.sources.first().map_or(0, |s| s.emitted);
            if first < self.sources[k].before {
                return;
            }
            self.waiting.pop_front();
            let now = match self.sources.first() {
                Some(s) if k != 0 => {
                    let first = m.core_of(s.thread);
                    m.clock(first)
                }
                _ => 0,
            };
            let core = m.core_of(self.sources[k].thread) as usize;
            if self.ready.len() <= core {
                self.ready.resize_with(core + 1, VecDeque::new);
            }
            if self.ready[core].is_empty() {
                m.idle_until(core as u32, now);
                // A core that starts during a turn counts among the others from now on.
                if let Some(turn) = &mut self.turn {
                    if turn.core != core as u32 {
                        turn.others = turn.others.min(m.clock(core as u32));
                    }
                }
            }
            self.ready[core].push_back(k);
        }
    }

    /// The next turn: the core with threads whose clock is lowest.
    fn next_turn(&self, m: &M) -> Option<Turn> {
        let ready = || (0..self.ready.len() as u32).filter(|&c| !self.ready[c as usize].is_empty());
        let core = ready().min_by_key(|&c| (m.clock(c), c))?;
        let clock = m.clock(core);
        let others = ready()
            .filter(|&c| c != core)
            .map(|c| m.clock(c))
            .min()
            .unwrap_or(u64::MAX);
        Some(Turn {
            core,
            until: clock.saturating_add(self.quantum),
            others,
        })
    }

    /// Ends the turn: the thread that ran goes behind its core's others, or leaves when its
    /// stream `ended`; after a `yielded` reference it stays first.
    fn end_turn(&mut self, core: u32, ended: bool, yielded: bool) {
        let q = &mut self.ready[core as usize];
        if ended {
            q.pop_front();
        } else if !yielded {
            q.rotate_left(1.min(q.len()));
        }
        self.turn = None;
    }
}

fn lock<M>(m: &Mutex<M>) -> std::sync::MutexGuard<'_, M> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<M: Clocked> AccessReader for Timed<M> {
    fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
        out.clear();
        let machine = self.machine.clone();
        let mut m = lock(&machine);
        while out.len() < BATCH_LEN {
            let turn = match self.turn {
                Some(t) => t,
                None => match self.next_turn(&m) {
                    Some(t) => t,
                    None => break,
                },
            };
            self.turn = Some(turn);
            let core = turn.core;
            let k = self.ready[core as usize][0];
            let src = &mut self.sources[k];
            if !src.fill()? {
                self.end_turn(core, true, false);
                self.admit(&mut m);
                continue;
            }
            let thread = src.thread;
            let to = src.cur.len().min(src.pos + (BATCH_LEN - out.len()));
            let from = src.pos;
            let (mut i, mut yielded) = (from, false);
            while i < to && m.clock(core) < turn.until {
                let ahead = m.clock(core) > turn.others;
                if !m.step(core, thread, &src.cur, i, ahead) {
                    yielded = true;
                    break;
                }
                i += 1;
            }
            out.extend_from_range(&src.cur, from..i);
            src.emitted += (i - from) as u64;
            src.pos = i;
            if yielded || m.clock(core) >= turn.until {
                self.end_turn(core, false, yielded);
            }
            self.admit(&mut m);
        }
        Ok(out.len())
    }
}
