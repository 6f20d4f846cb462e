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
//! carried last fills depth `d`. Done depth by depth this is O(d) per reference, and jumping
//! between the depths where the carried line changes (the *records*) still takes hundreds of
//! steps on Zipf loads: 0.16 M references/s for the previous implementation, kept as
//! `opt::mattson`, the tests' reference.
//!
//! Here the stack below the top is cut into *runs*, stretches of consecutive depths whose next
//! references increase with depth, each a max-heap (`opt::heap`). Carried through an ascending
//! run, Mattson's update inserts the carried line at its place and carries on the run's latest
//! line (every depth from that place down is a record): one heap operation, and none when the
//! run's latest line is sooner than the carried one. So a reference changes only the runs whose
//! latest line is later than the old top's and than those of all runs above: about three on
//! Zipf traces, found by scanning the runs' latest times. The referenced line is referenced
//! sooner than any other, so it begins its run, whose first depth is its stack distance; the
//! line carried last is later than everything it passed, so it ends the run above (or starts a
//! run at depth 1). Run boundaries thus stay put, and a run's first depth grows by one exactly
//! when its first line is referenced: the distance histogram follows from the runs' first
//! depths, with nothing counted per reference. The stacks, so the curves, are Mattson's
//! exactly (proptests against `opt::mattson` and brute-force MIN).
//!
//! A reference costs O(runs above the line + log of a run's size per run changed). Runs are
//! small near the top and grow with depth, and nothing bounds their number below the
//! footprint; counted per reference (runs in all, runs scanned, runs changed, mean entries of a
//! changed run's heap): Zipf(1.0) over 256 Ki lines 114, 42, 2.8, 2 332; gzip 42, 8.6, 1.1, 126;
//! xz 35, 3.5, 0.9, 35; sqlite 31, 3.0, 0.9, 16. So the time goes to the scan, the heap walks
//! and the misses on the per-line table, not to any search of the stack. Related work, not
//! used here: Sugumar & Abraham, "Efficient simulation of caches under optimal replacement with
//! applications to miss characterization" (SIGMETRICS 1993), and Bilardi, Ekanadham &
//! Pattnaik, "Optimal on-line computation of stack distances for MIN and OPT" (Computing
//! Frontiers 2017, O(log V) per reference with balanced trees). Bounding the stack at the
//! largest size asked would cut nothing by default: the default sizes reach 1 GiB (16 Mi
//! lines), beyond the footprint of every trace measured.
//!
//! Speed, on a machine with 2 cores shared by several jobs (load average 10 to 17 on 25 Nov
//! 2026, so wall-clock figures are two to three times an idle core's): CPU time of
//! `mrc --method exact --policy opt` (decode, spill, backward pass, stack) 6.7 s for gzip's
//! 45.6 M references (6.8 M references/s), 3.0 s for xz's 28.9 M (9.6 M/s), 6.3 s for
//! sqlite's 64.1 M (10.3 M/s); the stack alone, reading ids and next uses from a file, 4.3 s
//! for gzip (10.6 M/s) and 1.8 s for `benches/opt.rs`'s Zipf(1.0) load over 256 Ki lines
//! (8 M references, 4.4 M/s).
//!
//! A referenced line's heap entry is left in place (it is its run's earliest, never its
//! latest) and dropped when a run's stale entries outnumber its lines, so memory stays
//! proportional to the distinct lines: at most about 36 bytes per line.

use super::heap::{Entry, RunHeap};

/// `run_of` of a line not yet seen, and of the line on top.
const ABSENT: u32 = u32::MAX;
const ON_TOP: u32 = u32::MAX - 1;
/// `slots` of a run emptied (its `maxes` is 0, below every next reference).
const EMPTY: u32 = u32::MAX;

/// Consecutive depths whose next references increase with depth.
#[derive(Clone, Debug, Default)]
struct Run {
    /// Its lines, and stale entries of lines referenced since (all earlier than the present).
    heap: RunHeap,
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
    /// References to the line on top (depth 0).
    top_hits: u64,
    /// `ends[s]`: runs freed with first depth `s`. A run begins at depth 1 and its first depth
    /// grows by one each time its first line is referenced, there and only there: so a run
    /// whose first depth is `s` has had one reference at each depth from 1 to `s − 1`.
    ends: Vec<u64>,
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
            self.top_hits += 1;
            return;
        }
        // Carry the old top down through the runs above the line's (all runs for a new line):
        // it changes only the runs whose latest line is later than the one carried.
        let lo = match run {
            ABSENT => 0,
            _ => self.runs[run as usize].pos + 1,
        };
        let mut hi = self.maxes.len();
        // Nothing is later than a line never referenced again.
        while carried.next != u64::MAX
            && let Some(k) = last_above(&self.maxes[lo..hi], carried.next)
        {
            hi = lo + k;
            let slot = self.slots[hi];
            let heap = &mut self.runs[slot as usize].heap;
            let out = heap.replace_max(carried);
            self.maxes[hi] = heap.max().next;
            self.run_of[carried.id as usize] = slot;
            carried = out;
        }
        if run == ABSENT {
            // A new line: the stack grows by one depth, at the end of the bottom run.
            self.cold += 1;
            self.place(0, carried);
            return;
        }
        // Found at the run's first depth.
        let r = &mut self.runs[run as usize];
        r.start += 1;
        r.live -= 1;
        if r.live > 0 && r.heap.len() > 2 * r.live + 16 {
            r.heap.retain(|e| e.next > now);
        }
        let pos = r.pos;
        self.place(pos + 1, carried);
        if self.runs[run as usize].live == 0 {
            self.remove(run);
        }
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

    /// Frees an emptied run; compacts `slots` in place when an eighth of it is emptied runs
    /// (runs near the top come and go with most references: nothing is allocated for them).
    fn remove(&mut self, slot: u32) {
        let r = &mut self.runs[slot as usize];
        r.heap.clear();
        if r.start >= self.ends.len() {
            self.ends.resize(r.start + 1, 0);
        }
        self.ends[r.start] += 1;
        (self.slots[r.pos], self.maxes[r.pos]) = (EMPTY, 0);
        self.free.push(slot);
        self.empty += 1;
        if 8 * self.empty > self.slots.len() {
            let mut k = 0;
            for j in 0..self.slots.len() {
                let s = self.slots[j];
                if s != EMPTY {
                    self.runs[s as usize].pos = k;
                    (self.slots[k], self.maxes[k]) = (s, self.maxes[j]);
                    k += 1;
                }
            }
            self.slots.truncate(k);
            self.maxes.truncate(k);
            self.empty = 0;
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

    /// `hist[d]`: references found at depth `d` (0-based), hits in caches of more than `d`
    /// lines; from the first depths of the runs, freed and in use.
    fn hist(&self) -> Vec<u64> {
        let mut ends = self.ends.clone();
        for &s in self.slots.iter().filter(|&&s| s != EMPTY) {
            let start = self.runs[s as usize].start;
            if start >= ends.len() {
                ends.resize(start + 1, 0);
            }
            ends[start] += 1;
        }
        // hist[d] for d ≥ 1: the runs whose first depth is now beyond d.
        let mut hist = vec![0; ends.len().max(1)];
        let mut beyond = 0;
        for d in (1..ends.len()).rev() {
            hist[d] = beyond;
            beyond += ends[d];
        }
        hist[0] = self.top_hits;
        hist
    }

    /// Misses of a cache of `lines` lines under OPT, cold misses included.
    pub fn misses(&self, lines: u64) -> u64 {
        self.misses_at(&[lines])[0]
    }

    /// Misses for each of `lines` (any order), from one cumulative sum.
    pub fn misses_at(&self, lines: &[u64]) -> Vec<u64> {
        let hist = self.hist();
        let mut cumulative = Vec::with_capacity(hist.len() + 1);
        let mut sum = 0;
        cumulative.push(0);
        for &h in &hist {
            sum += h;
            cumulative.push(sum);
        }
        lines
            .iter()
            .map(|&l| self.refs - cumulative[(l.min(hist.len() as u64)) as usize])
            .collect()
    }
}

/// The last index of `maxes` whose value is later than `t`, eight at a time: the eight
/// comparisons make a mask without branches (vector compares), one branch per eight.
fn last_above(maxes: &[u64], t: u64) -> Option<usize> {
    let mut hi = maxes.len();
    while hi >= 8 {
        let chunk: &[u64; 8] = maxes[hi - 8..hi].try_into().expect("eight");
        let mask = (0..8).fold(0u32, |m, j| m | u32::from(chunk[j] > t) << j);
        if mask != 0 {
            return Some(hi - 8 + (31 - mask.leading_zeros()) as usize);
        }
        hi -= 8;
    }
    maxes[..hi].iter().rposition(|&m| m > t)
}
