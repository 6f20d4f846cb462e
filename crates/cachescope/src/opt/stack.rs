//! [`OptStack`]: Mattson's OPT priority stack kept as ascending runs, every cache size in one
//! pass.
//!
//! Mattson, Gecsei, Slutz & Traiger, "Evaluation techniques for storage hierarchies" (IBM
//! Systems Journal, 1970) show that Belady's MIN (evict the line re-referenced farthest in the
//! future; a miss always fills, as in demand fetching) is a stack algorithm when lines are
//! ranked by *priority*, the time of their next reference: a cache of `C` lines holds the top
//! `C` entries of one stack, so a reference found at depth `d` (1-based) hits every cache of at
//! least `d` lines. Their update on a reference to the line at depth `d`: it goes to the top;
//! the old top is carried down, and at each depth from 2 to `d − 1` the carried line and the
//! line there are compared: the one referenced sooner stays, the other is carried on; the line
//! carried last fills depth `d`. Done depth by depth this costs O(d) per reference, and even
//! jumping between the depths where the carried line changes (the *records*) costs hundreds of
//! steps on Zipf loads: the 0.16 M references/s of the previous implementation (kept in
//! `opt::mattson` as the tests' reference).
//!
//! Below the top we keep the stack cut into *runs*, stretches of consecutive depths whose next
//! references increase with depth, each stored as a max-heap of (next reference, line). On an
//! ascending run the update is "insert the carried line, carry on the run's latest line" (every
//! depth from the carried line's place down is a record): one heap operation, and none at all
//! when the run's latest line is sooner than the carried one (it passes through). The referenced
//! line is the one referenced soonest of all, so it always begins its run, and the run's first
//! depth is its stack distance; the line carried last ends the run above (it is later than
//! everything carried past), or starts a new run when there is none. So run boundaries stay
//! put and a run's first depth changes only when its first line is referenced: a reference
//! costs O(runs above it) comparisons of cached maxima plus O(log) per run it changes, and the
//! stacks, so the curves, are Mattson's exactly. The number of runs is not bounded by anything
//! better than the footprint (Bilardi, Ekanadham & Pattnaik, "Optimal on-line computation of
//! stack distances for MIN and OPT", CF 2017, give O(log V) per reference with balanced trees),
//! but it stays small on real loads: tens to about a hundred runs, and about three runs changed
//! per reference on Zipf traces (`benches/opt.rs`, `docs/scale.md`).
//!
//! A referenced line's old heap entry is left in place (it is its run's smallest, so never its
//! maximum) and dropped when stale entries outnumber live ones, so memory stays proportional
//! to the distinct lines: about 40 bytes per line at most, plus the depth histogram.

use std::collections::BinaryHeap;

/// `run_of` of a line not yet seen, and of the line on top.
const ABSENT: u32 = u32::MAX;
const ON_TOP: u32 = u32::MAX - 1;
/// `slots` of a run emptied (its `maxes` is 0, below every next reference).
const EMPTY: u32 = u32::MAX;

/// A line and the time of its next reference; the heap order is by time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    next: u64,
    id: u32,
}

/// Consecutive depths whose next references increase with depth.
#[derive(Clone, Debug, Default)]
struct Run {
    /// Its lines, and stale entries of lines referenced since (all earlier than the present).
    heap: BinaryHeap<Entry>,
    /// Lines in the run (entries not stale).
    live: usize,
    /// The run's first depth (0 is the top).
    start: usize,
    /// Its index in `slots`.
    pos: usize,
}

/// Mattson's OPT stack over dense line ids; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct OptStack {
    /// The line at depth 0.
    top: Option<Entry>,
    /// Runs by slot; `free` lists the slots not in use.
    runs: Vec<Run>,
    free: Vec<u32>,
    /// The slots of the runs from the bottom up ([`EMPTY`] for a run emptied), and each one's
    /// latest next reference, scanned for the runs a reference changes.
    slots: Vec<u32>,
    maxes: Vec<u64>,
    empty: usize,
    /// The run slot of each line id, or [`ABSENT`] or [`ON_TOP`].
    run_of: Vec<u32>,
    /// `hist[d]`: references found at depth `d` (0-based), hits in caches of more than d lines.
    hist: Vec<u64>,
    cold: u64,
    refs: u64,
}

impl OptStack {
    /// An empty stack.
    pub fn new() -> OptStack {
        OptStack::default()
    }

    /// References line `id` (dense ids from 0), whose next reference is at time `next`
    /// (`u64::MAX` for never). Time counts references from 0: the `n`-th call is time `n − 1`,
    /// and `next` is the time of the call that will reference `id` again, as
    /// [`Spilled::for_each`](super::Spilled::for_each) gives it.
    pub fn access(&mut self, id: u32, next: u64) {
        let now = self.refs;
        self.refs += 1;
        let i = id as usize;
        if i >= self.run_of.len() {
            self.run_of.resize(i + 1, ABSENT);
        }
        let Some(mut carried) = self.top.replace(Entry { next, id }) else {
            self.run_of[i] = ON_TOP;
            self.cold += 1;
            return;
        };
        let run = std::mem::replace(&mut self.run_of[i], ON_TOP);
        if run == ON_TOP {
            self.count(0);
            return;
        }
        // Carry the old top down through the runs above the line's (all runs for a new line):
        // it changes only the runs whose latest line is later than the one carried.
        let lo = match run {
            ABSENT => 0,
            _ => self.runs[run as usize].pos + 1,
        };
        let mut hi = self.maxes.len();
        while let Some(k) = last_above(&self.maxes[lo..hi], carried.next) {
            hi = lo + k;
            let slot = self.slots[hi];
            let heap = &mut self.runs[slot as usize].heap;
            let mut root = heap.peek_mut().expect("runs are not empty");
            let out = std::mem::replace(&mut *root, carried);
            drop(root);
            self.maxes[hi] = heap.peek().expect("not empty").next;
            self.run_of[carried.id as usize] = slot;
            carried = out;
        }
        if run == ABSENT {
            // A new line: the stack grows by one depth, at the end of the bottom run.
            self.cold += 1;
            self.place(0, carried);
            return;
        }
        let r = &mut self.runs[run as usize];
        let (depth, pos) = (r.start, r.pos);
        r.start += 1;
        r.live -= 1;
        if r.live > 0 && r.heap.len() > 2 * r.live + 16 {
            r.heap.retain(|e| e.next > now);
        }
        self.count(depth);
        self.place(pos + 1, carried);
        if self.runs[run as usize].live == 0 {
            self.remove(run);
        }
    }

    fn count(&mut self, depth: usize) {
        if depth >= self.hist.len() {
            self.hist.resize(depth + 1, 0);
        }
        self.hist[depth] += 1;
    }

    /// Puts `e`, the line carried last, at the end of the first run at or above index `from`,
    /// or in a new run at depth 1 when there is none.
    fn place(&mut self, from: usize, e: Entry) {
        let slot = match self.slots[from..].iter().position(|&s| s != EMPTY) {
            Some(k) => {
                // No sooner than any line of the run: it was carried past them all.
                self.maxes[from + k] = e.next;
                self.slots[from + k]
            }
            None => {
                let slot = self.free.pop().unwrap_or_else(|| {
                    self.runs.push(Run::default());
                    self.runs.len() as u32 - 1
                });
                self.runs[slot as usize].start = 1;
                self.runs[slot as usize].pos = self.slots.len();
                self.slots.push(slot);
                self.maxes.push(e.next);
                slot
            }
        };
        let r = &mut self.runs[slot as usize];
        r.heap.push(e);
        r.live += 1;
        self.run_of[e.id as usize] = slot;
    }

    /// Frees an emptied run; compacts `slots` when half of it is emptied runs.
    fn remove(&mut self, slot: u32) {
        let r = &mut self.runs[slot as usize];
        r.heap = BinaryHeap::new();
        (self.slots[r.pos], self.maxes[r.pos]) = (EMPTY, 0);
        self.free.push(slot);
        self.empty += 1;
        if self.empty > 16 && 2 * self.empty > self.slots.len() {
            let (mut slots, mut maxes) = (Vec::new(), Vec::new());
            for (&s, &m) in self.slots.iter().zip(&self.maxes) {
                if s != EMPTY {
                    self.runs[s as usize].pos = slots.len();
                    slots.push(s);
                    maxes.push(m);
                }
            }
            (self.slots, self.maxes, self.empty) = (slots, maxes, 0);
        }
    }

    /// References seen.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// First references (misses in every cache).
    pub fn cold(&self) -> u64 {
        self.cold
    }

    /// Misses of a cache of `lines` lines under OPT, cold misses included.
    pub fn misses(&self, lines: u64) -> u64 {
        let hits: u64 = self
            .hist
            .iter()
            .take(lines.min(usize::MAX as u64) as usize)
            .sum();
        self.refs - hits
    }

    /// Misses for each of `lines` (any order), from one cumulative sum.
    pub fn misses_at(&self, lines: &[u64]) -> Vec<u64> {
        let mut cumulative = Vec::with_capacity(self.hist.len() + 1);
        let mut sum = 0;
        cumulative.push(0);
        for &h in &self.hist {
            sum += h;
            cumulative.push(sum);
        }
        lines
            .iter()
            .map(|&l| self.refs - cumulative[(l.min(self.hist.len() as u64)) as usize])
            .collect()
    }
}

/// The last index of `maxes` whose value is later than `t`, scanned eight at a time.
fn last_above(maxes: &[u64], t: u64) -> Option<usize> {
    let mut hi = maxes.len();
    while hi >= 8 {
        let chunk = &maxes[hi - 8..hi];
        if chunk.iter().fold(false, |any, &m| any | (m > t)) {
            return chunk.iter().rposition(|&m| m > t).map(|k| hi - 8 + k);
        }
        hi -= 8;
    }
    maxes[..hi].iter().rposition(|&m| m > t)
}
