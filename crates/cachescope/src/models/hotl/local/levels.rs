//! The stretches of every length, kept only while they can still change: a stretch of level
//! `k` (`2^k` finest stretches long) gets the reuses that end in it and pick its length, and
//! the forward reuse times of its positions. Once every forward reuse time its reuses compare
//! with is known (`⌈len / span⌉` references after its end), its reuses' predictions are final,
//! its forward histogram moves up into its parent, and its memory is reused. So any stretch
//! length serves any trace length in memory that grows with the number of levels, never with
//! the trace.

use super::bins::{BINS, EXACT, bin_of};
use super::{Bin, MIN_STRETCH_BITS};

/// One stretch's histograms: forward reuse times of its positions (those known so far; the
/// rest count as longer than any reuse it predicts), reuse times of the reuses it predicts.
#[derive(Clone, Debug)]
pub(super) struct Open {
    pub index: u64,
    pub forward: Vec<Bin>,
    pub ending: Vec<Bin>,
    /// The measured reuses ending here of the bins from `EXACT` on: (bin, reuse distance).
    pub measured: Vec<(u32, u64)>,
    /// Those of the exact bins, counted by (rt, rd) (see [`Open::add_measured`]).
    pub exact: Exact,
    /// `ending`'s bins outside `elo..ehi` are empty (`ehi` 0: no reuse ended here, as in most
    /// stretches of the upper levels): a level's reuses span one octave of reuse times, so
    /// settling reads a few bins, not the hundreds its forward times may reach.
    pub elo: usize,
    pub ehi: usize,
    /// Bins from here on are empty in both histograms (short stretches see short times).
    pub hi: usize,
}

impl Open {
    fn new(index: u64) -> Open {
        Open {
            index,
            forward: vec![Bin::default(); BINS],
            ending: vec![Bin::default(); BINS],
            measured: Vec::new(),
            exact: Exact::default(),
            elo: BINS,
            ehi: 0,
            hi: 0,
        }
    }

    /// Adds a forward reuse time `rt`, of bin `b`.
    #[inline]
    pub fn add_forward(&mut self, b: usize, rt: u64) {
        self.forward[b].add(rt);
        self.hi = self.hi.max(b + 1);
    }

    /// Adds the reuse time `rt`, of bin `b`, of a reuse ending here.
    #[inline]
    pub fn add_ending(&mut self, b: usize, rt: u64) {
        self.ending[b].add(rt);
        self.hi = self.hi.max(b + 1);
        self.elo = self.elo.min(b);
        self.ehi = self.ehi.max(b + 1);
    }

    /// Whether any reuse ended here.
    pub fn any_ending(&self) -> bool {
        self.ehi > 0
    }

    /// Notes a measured reuse of time `rt`, of bin `b`, and distance `rd`.
    #[inline]
    pub fn add_measured(&mut self, b: usize, rt: u64, rd: u64) {
        if b < EXACT as usize {
            self.exact.add(rt, rd);
        } else {
            self.measured.push((b as u32, rd));
        }
    }

    /// Adds a child's forward reuse times.
    pub fn merge_forward(&mut self, child: &Open) {
        for (a, b) in self.forward[..child.hi].iter_mut().zip(&child.forward) {
            a.merge(b);
        }
        self.hi = self.hi.max(child.hi);
    }

    /// Empties it for stretch `index`, keeping its memory.
    fn reset(&mut self, index: u64) {
        self.index = index;
        self.forward[..self.hi].fill(Bin::default());
        if self.any_ending() {
            self.ending[self.elo..self.ehi].fill(Bin::default());
            self.measured.clear();
            self.exact.clear();
        }
        self.elo = BINS;
        self.ehi = 0;
        self.hi = 0;
    }
}

/// A stretch's measured reuses of time `rt < EXACT` (their bin is `rt`), counted by
/// `(rt, rd)`, `1 ≤ rd ≤ rt`: reuses of 1 and 2 references are always measured, so most
/// measures fall here, and a stretch then files one count per pair, not one per reuse.
#[derive(Clone, Debug, Default)]
pub(super) struct Exact {
    /// Row `rt` (its `rt` distances) from `rt (rt − 1) / 2`; empty until a measure comes.
    counts: Vec<u64>,
    /// Bit `rt`: row `rt` has a count.
    rows: u64,
}

impl Exact {
    fn row(rt: u64) -> std::ops::Range<usize> {
        let start = (rt * (rt - 1) / 2) as usize;
        start..start + rt as usize
    }

    #[inline]
    fn add(&mut self, rt: u64, rd: u64) {
        debug_assert!(
            rt < EXACT && (1..=rt).contains(&rd),
            "a window holds 1 to rt lines"
        );
        if self.counts.is_empty() {
            self.counts = vec![0; Exact::row(EXACT - 1).end];
        }
        self.counts[Exact::row(rt).start + rd as usize - 1] += 1;
        self.rows |= 1 << rt;
    }

    /// `(rt, rd, count)` of every pair measured, by increasing `rt` then `rd`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        (1..EXACT)
            .filter(|&rt| self.rows >> rt & 1 == 1)
            .flat_map(move |rt| {
                let row = &self.counts[Exact::row(rt)];
                (1..)
                    .zip(row)
                    .filter(|x| *x.1 > 0)
                    .map(move |(rd, &n)| (rt, rd, n))
            })
    }

    fn clear(&mut self) {
        for rt in (1..EXACT).filter(|&rt| self.rows >> rt & 1 == 1) {
            self.counts[Exact::row(rt)].fill(0);
        }
        self.rows = 0;
    }
}

/// The open stretches of one length: the one `now` is in and, until it is final, the one
/// before (a stretch is final `⌈len / span⌉ ≤ len` references after its end, so no earlier
/// one is ever open).
#[derive(Clone, Debug)]
pub(super) struct Level {
    /// Stretches are `1 << bits` references long.
    pub bits: u32,
    /// References after a stretch's end at which it is final.
    pub settle: u64,
    pub current: Open,
    pub previous: Option<Open>,
    /// A retired stretch's memory, for the next one.
    spare: Option<Open>,
}

impl Level {
    pub fn new(k: usize, span: u64, now: u64) -> Level {
        let bits = MIN_STRETCH_BITS + k as u32;
        Level {
            bits,
            settle: (1u64 << bits).div_ceil(span.max(1)),
            current: Open::new(now.saturating_sub(1) >> bits),
            previous: None,
            spare: None,
        }
    }

    /// Last position (1-based) of stretch `index`.
    pub fn end_of(&self, index: u64) -> u64 {
        (index + 1) << self.bits
    }

    /// The open stretch holding position `p`, if any.
    #[inline]
    pub fn holding(&mut self, p: u64) -> Option<&mut Open> {
        self.by_index((p - 1) >> self.bits)
    }

    /// Open stretch `index`, if it is open.
    #[inline]
    pub fn by_index(&mut self, index: u64) -> Option<&mut Open> {
        if index == self.current.index {
            return Some(&mut self.current);
        }
        self.previous.as_mut().filter(|o| o.index == index)
    }

    /// Open stretch `index` for a child's forward times: the current or previous one, or,
    /// on a level created after `index` was left, a previous one opened for it now.
    pub fn parent(&mut self, index: u64) -> &mut Open {
        if self.by_index(index).is_none() {
            debug_assert!(self.previous.is_none() && index + 1 == self.current.index);
            self.previous = Some(Open::new(index));
        }
        self.by_index(index).expect("just opened")
    }

    /// The next position at which this level changes: its previous stretch becomes final, or
    /// `now` leaves its current one.
    pub fn next_event(&self) -> u64 {
        let leave = self.end_of(self.current.index) + 1;
        match &self.previous {
            Some(p) => leave.min(self.end_of(p.index) + self.settle),
            None => leave,
        }
    }

    /// The previous stretch if it is final before position `p` is read.
    pub fn take_settled(&mut self, p: u64) -> Option<Open> {
        let end = self.end_of(self.previous.as_ref()?.index);
        if p >= end + self.settle {
            self.previous.take()
        } else {
            None
        }
    }

    /// Moves to the stretch holding position `p` if `p` left the current one (the previous
    /// one must be final by then, which `settle ≤ len` ensures).
    pub fn advance(&mut self, p: u64) {
        let index = (p - 1) >> self.bits;
        if index == self.current.index {
            return;
        }
        debug_assert!(
            self.previous.is_none(),
            "a stretch left open past its settling"
        );
        let mut next = self.spare.take().unwrap_or_else(|| Open::new(index));
        next.reset(index);
        let old = std::mem::replace(&mut self.current, next);
        // A stretch left long ago (the level was idle) may already be final.
        self.previous = Some(old);
    }

    /// Keeps a retired stretch's memory.
    pub fn recycle(&mut self, open: Open) {
        self.spare = Some(open);
    }
}

/// Adds `v` to its bin of `h`.
#[inline]
pub(super) fn add(h: &mut [Bin], v: u64) {
    h[bin_of(v)].add(v);
}
