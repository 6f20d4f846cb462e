//! Analyses that do not split in time, run side by side: one decode, the analyses shared out
//! over the threads as they go.
//!
//! Each analysis (a *lane*) sees every batch in order, so its result is what one thread feeding
//! them all gives; but which thread runs it is decided as the pass goes, not fixed in advance.
//! A fixed deal is balanced for one trace and not the next: on a trace of a million distinct
//! lines the 3C sweep takes twice the time of the analyses dealt beside it, and on a trace of
//! a few thousand the same deal is even. So each thread runs the lanes it ran last while they
//! have batches waiting, and only when none of them does takes over the lane furthest behind
//! (which stays with it from then on): the lanes settle where the load is even and migrate
//! rarely, so their tables stay in one core's caches.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::trace::Trace;

/// Batches kept between the lane furthest behind and the decode.
const WINDOW: usize = 8;
/// Batches a lane takes in one turn: fewer round trips through the lock.
const TURN: u64 = 4;
/// A thread takes over another's lane only when it is this many batches behind: a lane
/// briefly behind is not worth moving its tables to another core.
const BEHIND: u64 = 2;

/// One analysis and where it is.
struct Lane<'a> {
    /// `None` while a thread runs it.
    analysis: Option<&'a mut (dyn Analysis + Send)>,
    /// Sequence number of the next batch it needs.
    next: u64,
    /// The thread that ran it last.
    owner: usize,
}

/// What the threads share, behind one lock.
struct State<'a> {
    lanes: Vec<Lane<'a>>,
    /// Decoded batches; `batches[i]` has sequence number `first + i`.
    batches: VecDeque<Arc<Batch>>,
    first: u64,
    /// Batches every lane is done with, for the decode to refill.
    spare: Vec<Batch>,
    /// The decode reached the end.
    ended: bool,
    /// The decode failed or a thread panicked: everyone stops.
    failed: bool,
}

struct Shared<'a> {
    state: Mutex<State<'a>>,
    changed: Condvar,
}

impl<'a> Shared<'a> {
    /// The state; a thread that panicked holding the lock has already set `failed`, or will as
    /// its guard drops, so a poisoned lock is read as it is.
    fn lock(&self) -> MutexGuard<'_, State<'a>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, State<'a>>) -> MutexGuard<'g, State<'a>> {
        self.changed.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    fn fail(&self) {
        self.lock().failed = true;
        self.changed.notify_all();
    }
}

impl State<'_> {
    /// Sequence number after the last decoded batch.
    fn end(&self) -> u64 {
        self.first + self.batches.len() as u64
    }

    /// The lane thread `me` runs next: its own lane furthest behind among those with a batch
    /// waiting, else another thread's lane at least [`BEHIND`] batches behind, the furthest.
    fn pick(&self, me: usize) -> Option<usize> {
        let end = self.end();
        let free = |l: &&Lane| l.analysis.is_some() && l.next < end;
        let furthest = |own: bool| {
            self.lanes
                .iter()
                .enumerate()
                .filter(|(_, l)| free(l) && (l.owner == me) == own)
                .filter(|(_, l)| own || l.next + BEHIND <= end)
                .min_by_key(|(_, l)| l.next)
                .map(|(i, _)| i)
        };
        furthest(true).or_else(|| furthest(false))
    }

    /// Drops the batches every lane has passed, keeping their memory for the decode.
    fn release(&mut self) {
        let low = self.lanes.iter().map(|l| l.next).min().unwrap_or(u64::MAX);
        while self.first < low {
            let Some(b) = self.batches.pop_front() else {
                break;
            };
            self.first += 1;
            if let Some(b) = Arc::into_inner(b) {
                self.spare.push(b);
            }
        }
    }

    /// Every batch is decoded and every lane has seen it.
    fn done(&self) -> bool {
        let end = self.end();
        self.ended
            && self
                .lanes
                .iter()
                .all(|l| l.analysis.is_some() && l.next == end)
    }
}

/// Sets `failed` if its thread unwinds, so that the others stop waiting for it.
struct OnPanic<'s, 'a>(&'s Shared<'a>);

impl Drop for OnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail();
        }
    }
}

/// Reads `trace` once on the caller's thread and feeds every batch to every one of `analyses`
/// on `threads` threads (see the module documentation). For independent analyses such as
/// several cache configurations; returns the accesses read.
pub(super) fn run(
    trace: &mut Trace,
    analyses: &mut [&mut (dyn Analysis + Send)],
    threads: usize,
    mut on_progress: impl FnMut(u64),
) -> Result<u64> {
    let threads = threads.clamp(1, analyses.len().max(1));
    if threads == 1 {
        let mut plain: Vec<&mut dyn Analysis> = analyses
            .iter_mut()
            .map(|a| &mut **a as &mut dyn Analysis)
            .collect();
        return super::in_order::run(trace, &mut plain, 2, on_progress);
    }
    crate::parallel::decode_in_parallel(trace, threads)?;
    // Dealt in turn to start with: callers list their costliest analyses apart.
    let lanes = analyses
        .iter_mut()
        .enumerate()
        .map(|(i, a)| Lane {
            analysis: Some(&mut **a),
            next: 0,
            owner: i % threads,
        })
        .collect();
    let shared = Shared {
        state: Mutex::new(State {
            lanes,
            batches: VecDeque::new(),
            first: 0,
            spare: Vec::new(),
            ended: false,
            failed: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|s| {
        for me in 0..threads {
            let shared = &shared;
            s.spawn(move || work(shared, me));
        }
        let _guard = OnPanic(&shared);
        let read = decode(trace, &shared, &mut on_progress);
        match &read {
            Ok(_) => shared.lock().ended = true,
            Err(_) => shared.lock().failed = true,
        }
        shared.changed.notify_all();
        read
    })
}

/// The caller's part: decodes batches while fewer than [`WINDOW`] wait.
fn decode(trace: &mut Trace, shared: &Shared, on_progress: &mut impl FnMut(u64)) -> Result<u64> {
    let mut seen = 0u64;
    loop {
        let mut batch = {
            let mut g = shared.lock();
            while !g.failed && g.batches.len() >= WINDOW {
                g = shared.wait(g);
            }
            if g.failed {
                return Ok(seen);
            }
            g.spare.pop().unwrap_or_default()
        };
        if trace.read_batch(&mut batch)? == 0 {
            return Ok(seen);
        }
        if batch.data_addrs().is_none() {
            // Once here rather than in every lane that counts data references.
            batch.index_data();
        }
        seen += batch.len() as u64;
        shared.lock().batches.push_back(Arc::new(batch));
        shared.changed.notify_all();
        on_progress(seen);
    }
}

/// Thread `me`'s part: runs lanes until every lane has seen every batch.
fn work(shared: &Shared, me: usize) {
    let _guard = OnPanic(shared);
    let mut g = shared.lock();
    loop {
        if g.failed || g.done() {
            return;
        }
        let Some(i) = g.pick(me) else {
            g = shared.wait(g);
            continue;
        };
        let end = g.end();
        let lane = &mut g.lanes[i];
        let analysis = lane.analysis.take().expect("picked lanes are free");
        lane.owner = me;
        let (from, to) = (lane.next, end.min(lane.next + TURN));
        let first = g.first;
        let batches: Vec<Arc<Batch>> = (from..to)
            .map(|n| g.batches[(n - first) as usize].clone())
            .collect();
        drop(g);
        for b in &batches {
            analysis.observe(b);
        }
        drop(batches);
        g = shared.lock();
        let lane = &mut g.lanes[i];
        lane.analysis = Some(analysis);
        lane.next = to;
        g.release();
        shared.changed.notify_all();
    }
}
