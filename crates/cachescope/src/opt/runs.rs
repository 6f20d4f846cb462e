//! The run stack over keys of either width: Mattson's OPT update carried through ascending
//! runs, each a max-heap; see the documentation of `opt::stack` for the algorithm.

use super::heap::{Key, RunHeap};

/// `run_of` of a line not yet seen, of the line on top, and of a line a bounded stack let go
/// (deeper than its bound).
const ABSENT: u32 = u32::MAX;
const ON_TOP: u32 = u32::MAX - 1;
const DROPPED: u32 = u32::MAX - 2;
/// `slots` of a run emptied (its `maxes` is the default key, time 0, below every line's).
const EMPTY: u32 = u32::MAX;

/// Consecutive depths whose next references increase with depth.
#[derive(Clone, Debug, Default)]
struct Run<K> {
    /// Its lines, and stale entries of lines referenced since (all earlier than the present).
    heap: RunHeap<K>,
    /// Lines in the run: those in the heap not stale, and the `nevers`.
    live: usize,
    /// Lines never referenced again at the run's end (its latest lines), counted, not kept in
    /// the heap: where each of them is changes no depth, and no reference looks for them.
    nevers: usize,
    /// The run's first depth (0 is the top).
    start: usize,
    /// Its index in `slots`.
    pos: usize,
}

/// Mattson's OPT stack over dense line ids, kept as runs of keys `K`; see the documentation
/// of `opt::stack`.
#[derive(Clone, Debug, Default)]
pub(super) struct Runs<K> {
    /// The line at depth 0.
    top: Option<K>,
    /// Runs by slot; `free` lists the slots not in use.
    runs: Vec<Run<K>>,
    free: Vec<u32>,
    /// The slots of the runs from the bottom up ([`EMPTY`] for a run emptied), and each one's
    /// latest line, scanned for the runs a reference changes.
    slots: Vec<u32>,
    maxes: Vec<K>,
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
    /// With a bound, the depths kept ([`Runs::bounded`]), and the lines in the stack.
    bound: Option<usize>,
    lines: usize,
}

impl<K: Key> Runs<K> {
    /// A stack that keeps its `bound` top depths only (at least one): a line carried below
    /// them is let go, and its next reference counts as one from below every depth kept. The
    /// depths kept, so the misses of caches of up to `bound` lines, are those of the whole
    /// stack: Mattson's update above a depth does not depend on anything below it.
    pub fn bounded(bound: usize) -> Runs<K> {
        Runs {
            bound: Some(bound.max(1)),
            ..Runs::default()
        }
    }

    /// References line `id`, whose next reference is at time `next`: see
    /// [`OptStack::access`](super::OptStack::access).
    pub fn access(&mut self, id: u32, next: u64) {
        let now = self.refs;
        self.refs += 1;
        let i = id as usize;
        if i >= self.run_of.len() {
            self.run_of.resize(i + 1, ABSENT);
        }
        let Some(mut carried) = self.top.replace(K::new(next, id)) else {
            self.run_of[i] = ON_TOP;
            self.cold += 1;
            self.lines = 1;
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
            ABSENT | DROPPED => 0,
            _ => self.runs[run as usize].pos + 1,
        };
        let mut hi = self.maxes.len();
        // Nothing is later than a line never referenced again.
        while !carried.never()
            && let Some(k) = last_above(&self.maxes[lo..hi], carried)
        {
            hi = lo + k;
            let slot = self.slots[hi];
            self.run_of[carried.id() as usize] = slot;
            let r = &mut self.runs[slot as usize];
            if self.slots[lo..hi].iter().all(|&s| s == EMPTY) {
                // The lowest run changed is the one the line carried last would end: its latest
                // line would be taken out and put back. It just gains the carried line, one
                // push (which stops where the line belongs) instead of a replacement and a push
                // to the root. About one reference in five on Zipf loads.
                r.heap.push(carried);
                r.live += 1;
                return self.found(run, now);
            }
            if r.nevers > 0 {
                // The run's latest line is one never referenced again: the carried line joins
                // the heap and a never-line is carried on, which nothing is later than. No
                // never-line walks a heap on its way in or out.
                r.heap.push(carried);
                r.nevers -= 1;
                if r.nevers == 0 {
                    self.maxes[hi] = r.heap.max();
                }
                carried = K::latest();
                break;
            }
            let out = r.heap.replace_max(carried);
            self.maxes[hi] = r.heap.max();
            carried = out;
        }
        // The line carried last ends the run above the line's (a new line: the stack grows by
        // one depth, at the end of the bottom run).
        self.place(lo, carried);
        self.found(run, now);
    }

    /// Counts a first reference, or takes the line referenced out of run `run` (at time
    /// `now`): it was found at the run's first depth. A line from outside the stack made it
    /// one line deeper, which a bounded stack gives back at its bottom.
    fn found(&mut self, run: u32, now: u64) {
        if run == ABSENT || run == DROPPED {
            self.cold += u64::from(run == ABSENT);
            self.lines += 1;
            if self.bound.is_some_and(|b| self.lines > b) {
                self.drop_deepest();
            }
            return;
        }
        let r = &mut self.runs[run as usize];
        r.start += 1;
        r.live -= 1;
        if r.live > 0 && r.heap.len() > 2 * (r.live - r.nevers) + 16 {
            r.heap.retain(|e| e.next() > now);
        }
        if r.live == 0 {
            self.remove(run);
        }
    }

    /// Puts `e`, the line carried last, at the end of the first run at or above index `from`,
    /// or in a new run at depth 1 when there is none.
    fn place(&mut self, from: usize, e: K) {
        let slot = match self.slots[from..].iter().position(|&s| s != EMPTY) {
            Some(k) => {
                // No sooner than any line of the run: it was carried past them all.
                self.maxes[from + k] = e.max(self.maxes[from + k]);
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
                self.maxes.push(e);
                slot
            }
        };
        let r = &mut self.runs[slot as usize];
        r.live += 1;
        if e.never() {
            r.nevers += 1;
        } else {
            r.heap.push(e);
            self.run_of[e.id() as usize] = slot;
        }
    }

    /// Lets go of the line at the stack's bottom: the latest of the bottom run (one of its
    /// never-again lines if it has any, else its heap's maximum, which is never a stale
    /// entry: those are of references past, every live line's next one is to come).
    fn drop_deepest(&mut self) {
        let Some(k) = self.slots.iter().position(|&s| s != EMPTY) else {
            return;
        };
        let slot = self.slots[k];
        let r = &mut self.runs[slot as usize];
        if r.nevers > 0 {
            r.nevers -= 1;
        } else {
            let out = r.heap.pop_max();
            self.run_of[out.id() as usize] = DROPPED;
        }
        r.live -= 1;
        self.lines -= 1;
        if r.live == 0 {
            self.remove(slot);
        } else if r.nevers == 0 {
            self.maxes[k] = r.heap.max();
        }
    }

    /// Frees an emptied run; compacts `slots` in place when an eighth of it is emptied runs
    /// (runs near the top come and go with most references: nothing is allocated for them).
    fn remove(&mut self, slot: u32) {
        let r = &mut self.runs[slot as usize];
        // A freed run has no line, never-lines included: a slot reused starts empty.
        debug_assert_eq!(r.nevers, 0);
        r.heap.clear();
        if r.start >= self.ends.len() {
            self.ends.resize(r.start + 1, 0);
        }
        self.ends[r.start] += 1;
        (self.slots[r.pos], self.maxes[r.pos]) = (EMPTY, K::default());
        self.free.push(slot);
        self.empty += 1;
        // Emptied runs at the top (most of them) just go.
        while self.slots.last() == Some(&EMPTY) {
            self.slots.pop();
            self.maxes.pop();
            self.empty -= 1;
        }
        if 8 * self.empty > self.slots.len() {
            // Nothing moves below the first emptied run.
            let (slots, maxes, runs) = (&mut self.slots, &mut self.maxes, &mut self.runs);
            let first = slots
                .iter()
                .position(|&s| s == EMPTY)
                .unwrap_or(slots.len());
            let mut k = first;
            for j in first..slots.len() {
                let s = slots[j];
                if s != EMPTY {
                    runs[s as usize].pos = k;
                    (slots[k], maxes[k]) = (s, maxes[j]);
                    k += 1;
                }
            }
            slots.truncate(k);
            maxes.truncate(k);
            self.empty = 0;
        }
    }

    /// Asks the CPU to start loading line `id`'s run index, read first by its reference: the
    /// index table is spread over memory as the ids are, and a reference waits longest on it.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Some(r) = self.run_of.get(id as usize) {
            crate::prefetch::prefetch(r);
        }
    }

    /// The same stack with keys of type `L`.
    pub fn rekey<L: Key>(self) -> Runs<L> {
        let key = |k: K| L::new(k.next(), k.id());
        let runs = self.runs.into_iter().map(|r| {
            let mut heap = RunHeap::default();
            r.heap.keys().iter().for_each(|&k| heap.push(key(k)));
            Run {
                heap,
                live: r.live,
                nevers: r.nevers,
                start: r.start,
                pos: r.pos,
            }
        });
        Runs {
            top: self.top.map(key),
            runs: runs.collect(),
            free: self.free,
            slots: self.slots,
            maxes: self.maxes.into_iter().map(key).collect(),
            empty: self.empty,
            run_of: self.run_of,
            top_hits: self.top_hits,
            ends: self.ends,
            cold: self.cold,
            refs: self.refs,
            bound: self.bound,
            lines: self.lines,
        }
    }

    /// References seen.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Lines in the stack.
    #[cfg(test)]
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// First references (misses in every cache; a bounded stack's references from below its
    /// bound are misses in every cache it measures, but not counted here).
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

/// The last index of `maxes` whose key is later than `t`, eight at a time: the eight
/// comparisons make a mask without branches (vector compares), one branch per eight.
fn last_above<K: Key>(maxes: &[K], t: K) -> Option<usize> {
    let mut hi = maxes.len();
    while hi >= 8 {
        let chunk: &[K; 8] = maxes[hi - 8..hi].try_into().expect("eight");
        let mask = (0..8).fold(0u32, |m, j| m | u32::from(chunk[j] > t) << j);
        if mask != 0 {
            return Some(hi - 8 + (31 - mask.leading_zeros()) as usize);
        }
        hi -= 8;
    }
    maxes[..hi].iter().rposition(|&m| m > t)
}
