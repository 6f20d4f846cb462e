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
//! run at depth 1); when that run is the lowest one changed, its latest line would be carried
//! out and straight back, so it only gains the line carried into it (one push, no replacement).
//! Run boundaries thus stay put, and a run's first depth grows by one exactly
//! when its first line is referenced: the distance histogram follows from the runs' first
//! depths, with nothing counted per reference. The stacks, so the curves, are Mattson's
//! exactly (proptests against `opt::mattson` and brute-force MIN).
//!
//! A reference costs O(runs above the line + log of a run's size per run changed). Runs are
//! small near the top and grow with depth, and nothing bounds their number below the
//! footprint; counted per reference (runs in all, runs scanned, runs changed, mean entries of a
//! changed run's heap): Zipf(1.0) over 256 Ki lines 114, 42, 2.8, 2 332; gzip 42, 8.6, 1.1, 126;
//! xz 35, 3.5, 0.9, 35; sqlite 31, 3.0, 0.9, 16. A profile (`perf record -e cpu-clock`, the
//! Zipf load) puts the time in cache misses, not in any search of the stack: the line's entry
//! in the per-line run table, then the heap nodes a replacement walks. Hence two choices.
//! Each heap key packs the next reference and the line's id in one word (`next << 32 | id`)
//! while times fit in 32 bits, so a node is one load and one compare and a heap a third
//! smaller; a trace of 2^32 − 1 references or more moves to two-word keys at the first time
//! that does not fit. And [`OptStack::access_all`] prefetches the run-table entry of the line
//! referenced a dozen references later.
//!
//! The O(log V) algorithm is not used. Bilardi, Ekanadham & Pattnaik, "Optimal on-line
//! computation of stack distances for MIN and OPT" (Computing Frontiers 2017), show that an
//! access's OPT distance depends on the past alone: beside the LRU stack they keep one
//! *critical marker* per capacity, an LRU depth. A reference at LRU depth D finds the deepest
//! depth z above D where the markers at or above it are exactly as many as the depths (their
//! "imbalance" is zero); its OPT distance is the smallest capacity whose marker lies below z;
//! then every marker at or above D moves one depth down and that capacity's marker moves to
//! depth 1. Order-statistic trees (the LRU stack) and prefix sums with their minima (the
//! imbalance) make each step O(log V), about ten tree walks a reference, each a cache miss
//! once the footprint passes the caches: more misses than the run stack's one table entry and
//! about three heap walks on Zipf loads (about one on real programs), so we expect it to be
//! slower at the footprints measured, though we have not measured it. Sugumar & Abraham,
//! "Efficient simulation of caches under optimal replacement with applications to miss
//! characterization" (SIGMETRICS 1993), is the other classic: its grouping of the stack's
//! entries into trees is the runs here. More in `docs/opt.md`.
//!
//! [`OptStack::bounded`] keeps only the depths of the largest size asked: Mattson's update
//! above a depth does not depend on anything below it, so the line at depth `bound + 1` is
//! let go (the bottom run's latest line: one of its never-again lines, or its heap's maximum)
//! and comes back, when referenced, as a line from below every depth kept. The default sizes
//! reach 1 GiB (16 Mi lines), beyond the footprint of every trace measured, so by default
//! nothing is let go; sizes small beside the footprint keep the runs small and cached.
//!
//! A referenced line's heap entry is left in place (it is its run's earliest, never its
//! latest) and dropped when a run's stale entries outnumber its lines, so memory stays
//! proportional to the distinct lines: at most about 36 bytes per line.

use super::heap::Wide;
use super::runs::Runs;

/// Mattson's OPT stack over dense line ids, every cache size at once; see the module
/// documentation.
#[derive(Clone, Debug)]
pub struct OptStack(Keys);

/// The run stack with each next reference packed with its line's id in one word while times
/// fit in 32 bits, in a wider key from the first time that does not.
#[derive(Clone, Debug)]
enum Keys {
    Narrow(Runs<u64>),
    Wide(Runs<Wide>),
}

impl Default for OptStack {
    fn default() -> OptStack {
        OptStack(Keys::Narrow(Runs::default()))
    }
}

impl OptStack {
    /// An empty stack.
    pub fn new() -> OptStack {
        OptStack::default()
    }

    /// An empty stack that keeps only its top `lines` depths (at least one): the misses of
    /// caches of up to `lines` lines are exactly those of [`OptStack::new`]'s, larger ones are
    /// not measured. A line carried below the bound is let go, so the runs stay small and in
    /// the caches of the CPU when the sizes asked for are small beside the footprint.
    pub fn bounded(lines: u64) -> OptStack {
        let lines = usize::try_from(lines).unwrap_or(usize::MAX);
        OptStack(Keys::Narrow(Runs::bounded(lines)))
    }

    /// References line `id` (dense ids from 0), whose next reference is at time `next`
    /// (`u64::MAX` for never). Time counts references from 0: the `n`-th call is time `n − 1`,
    /// and `next` is the time of the call that will reference `id` again, as
    /// [`Spilled::for_each`](super::Spilled::for_each) gives it.
    pub fn access(&mut self, id: u32, next: u64) {
        match &mut self.0 {
            Keys::Narrow(r) if next < u64::from(u32::MAX) || next == u64::MAX => r.access(id, next),
            Keys::Narrow(_) => {
                self.widen();
                self.access(id, next);
            }
            Keys::Wide(r) => r.access(id, next),
        }
    }

    /// [`OptStack::access`] for each of `ids` in turn, with its next reference in `next`: the
    /// same, a little faster, as it loads each line's entry a few references ahead.
    pub fn access_all(&mut self, ids: &[u32], next: &[u64]) {
        const AHEAD: usize = 12;
        for (k, (&id, &n)) in ids.iter().zip(next).enumerate() {
            if let Some(&ahead) = ids.get(k + AHEAD) {
                match &self.0 {
                    Keys::Narrow(r) => r.prefetch(ahead),
                    Keys::Wide(r) => r.prefetch(ahead),
                }
            }
            self.access(id, n);
        }
    }

    /// Moves to wide keys (once per trace of 2^32 − 1 references or more).
    pub(super) fn widen(&mut self) {
        if let Keys::Narrow(r) = &mut self.0 {
            self.0 = Keys::Wide(std::mem::take(r).rekey());
        }
    }

    /// Lines in the stack: every line seen, or at most the bound of [`OptStack::bounded`].
    #[cfg(test)]
    pub(crate) fn lines(&self) -> usize {
        match &self.0 {
            Keys::Narrow(r) => r.lines(),
            Keys::Wide(r) => r.lines(),
        }
    }

    /// References seen.
    pub fn refs(&self) -> u64 {
        match &self.0 {
            Keys::Narrow(r) => r.refs(),
            Keys::Wide(r) => r.refs(),
        }
    }

    /// First references (misses in every cache).
    pub fn cold(&self) -> u64 {
        match &self.0 {
            Keys::Narrow(r) => r.cold(),
            Keys::Wide(r) => r.cold(),
        }
    }

    /// Misses of a cache of `lines` lines under OPT, cold misses included (of a bounded
    /// stack: `lines` at most its bound).
    pub fn misses(&self, lines: u64) -> u64 {
        self.misses_at(&[lines])[0]
    }

    /// Misses for each of `lines` (any order), from one cumulative sum.
    pub fn misses_at(&self, lines: &[u64]) -> Vec<u64> {
        match &self.0 {
            Keys::Narrow(r) => r.misses_at(lines),
            Keys::Wide(r) => r.misses_at(lines),
        }
    }
}
