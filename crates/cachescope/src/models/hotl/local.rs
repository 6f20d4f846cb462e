//! Time-local HOTL: the reuse-time conversion (§2.7) with each reuse's window footprint taken
//! from the stretch of the trace the reuse ends in, not from the whole trace.
//!
//! ## Why
//! HOTL predicts that a reuse of time `rt` holds `fp(rt)` lines, the average over *all*
//! windows of that length (the reuse-window hypothesis, [`super::ReuseWindowAnalysis`]). A
//! program in phases breaks it: a hash table filled by a stream and then probed at random has
//! short windows of few lines in one phase and of many in the other, and the average puts the
//! misses of both at the wrong sizes (11.6 pp at one size on `hash`, docs/accuracy/hotl.md).
//! StatStack has the same bias, and its time-local model fixed it
//! ([`crate::models::statstack`]); this is the same correction for the whole trace.
//!
//! ## The estimate
//! With `RT_v` the forward reuse time of position `v` (∞ for a line's last reference), a reuse
//! at `i` of the line last referenced at `j = i − rt` holds exactly
//! `rd = Σ_{v=j+1}^{i} [RT_v > i − v]` lines (docs/definitions.md: `rd = sd + 1`; `v = i`
//! counts the line itself): `v` adds its line iff its next reference falls after `i`. If the
//! positions near `i` draw `RT` from one distribution `P_s`, then
//!
//! `E[rd] = G_s(rt)`, `G_s(w) = Σ_{u<w} P_s(RT > u) = E_s[min(RT, w)]`,
//!
//! the average footprint of windows of `rt` references in `s`: with the whole trace for `s`
//! it is HOTL's own `fp(rt)` up to the trace's ends, and the conversion is §2.7's (Theorem
//! 2.2). Here `s` is the *stretch* around `i`: the trace is cut into aligned stretches of `L`
//! references, and a reuse takes the stretch of the smallest power-of-two multiple of `L` that
//! is at least [`SPAN`] times its reuse time, so its window lies mostly inside. Long reuses
//! fall back to the whole trace, and there take the paper's `fp(rt)` (the Xiang formula with
//! the trace's ends, from the same histograms): on the whole trace the reading is §2.7's
//! conversion. A reuse misses in a cache of `c` lines iff `E[rd] > c`.
//! (Counting `v = i` apart, `1 + G_s(rt − 1)`, is the same sum when `x` is known not to recur
//! inside; taken unconditionally it put sort's 16-line cliff 4.2 pp off against 2.1.)
//!
//! Tried and not kept: summing each window over the finest stretches it crosses (StatStack's
//! time-local sum) in place of one stretch per reuse: `hash` 0.78 → 0.16 pp at its worst
//! size, but `mm`'s sharp cliff moved (0.31 → 3.0 pp), the window's position inside its
//! stretch being unknown to a histogram.
//!
//! ## Cost
//! One table lookup per reference (line → latest position) and two histogram increments: the
//! reuse time into the histogram of the stretch it ends in, and, as the forward reuse time of
//! `j`, into that of `j`'s stretch. Histograms are log-bucketed (one bin per reuse time below
//! 64, then 16 per octave); there are at most [`MAX_STRETCHES`] stretches, which double in
//! length (neighbours' histograms added) when the trace outgrows them. Memory: the line table, plus `MAX_STRETCHES × bins × 32` bytes.

mod bins;
mod model;

pub use model::{LocalCurve, LocalFootprint};

/// Which reading of HOTL `mrc --method hotl` uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum HotlVariant {
    /// Time-local ([`LocalFootprintAnalysis`]): each reuse's window footprint from the
    /// stretch of the trace it ends in; the default, closer on every real program of
    /// docs/accuracy/hotl.md.
    #[default]
    Local,
    /// The paper's conversion of the whole trace's footprint (§2.3–2.6, [`super::Filmer`]).
    Paper,
}

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::table::LineTable;
use crate::reuse::{Options, data_lines};
use bins::{BINS, bin_of};

/// A reuse takes the smallest stretch at least this many times its reuse time (2 to 32 moved
/// no real program's worst point by more than 0.05 pp but `hash`'s: 0.76 pp at 2, 0.78 at 4,
/// 1.75 at 8, 4.0 at 32).
pub const SPAN: u64 = 4;

/// Stretches kept; more, and neighbours merge (the stretch length doubles).
pub const MAX_STRETCHES: usize = 256;

/// Shortest stretch, as a power of two.
const MIN_STRETCH_BITS: u32 = 10;

/// Count and sum of one histogram bin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Bin {
    pub count: f64,
    pub sum: f64,
}

impl Bin {
    #[inline]
    fn add(&mut self, v: u64) {
        self.count += 1.0;
        self.sum += v as f64;
    }
    pub(crate) fn merge(&mut self, o: &Bin) {
        self.count += o.count;
        self.sum += o.sum;
    }
}

/// Collects the stretches' reuse-time histograms; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct LocalFootprintAnalysis {
    options: Options,
    table: LineTable,
    now: u64,
    /// Stretches are `1 << bits` references long.
    bits: u32,
    /// `MAX_STRETCHES × BINS`: forward reuse times of the positions in each stretch.
    forward: Vec<Bin>,
    /// `MAX_STRETCHES × BINS`: reuse times of the reuses that end in each stretch.
    ending: Vec<Bin>,
    /// `BINS`: first positions `f`, for the whole trace's Xiang footprint.
    first: Vec<Bin>,
}

impl LocalFootprintAnalysis {
    /// An analysis of the references `options` counts.
    pub fn new(options: Options) -> LocalFootprintAnalysis {
        LocalFootprintAnalysis {
            options,
            table: LineTable::default(),
            now: 0,
            bits: MIN_STRETCH_BITS,
            forward: vec![Bin::default(); MAX_STRETCHES * BINS],
            ending: vec![Bin::default(); MAX_STRETCHES * BINS],
            first: vec![Bin::default(); BINS],
        }
    }

    /// Stretch of 1-based position `p`.
    #[inline]
    fn stretch(&self, p: u64) -> usize {
        ((p - 1) >> self.bits) as usize
    }

    #[inline]
    fn access(&mut self, line: u64) {
        self.now += 1;
        if self.stretch(self.now) >= MAX_STRETCHES {
            self.coarsen();
        }
        match self.table.replace(line, self.now) {
            Some(j) => {
                let rt = self.now - j;
                let b = bin_of(rt);
                let (end, start) = (self.stretch(self.now), self.stretch(j));
                self.ending[end * BINS + b].add(rt);
                self.forward[start * BINS + b].add(rt);
            }
            None => self.first[bin_of(self.now)].add(self.now),
        }
    }

    /// Doubles the stretch length: stretch `k` becomes the sum of `2k` and `2k + 1`.
    fn coarsen(&mut self) {
        for h in [&mut self.forward, &mut self.ending] {
            for k in 0..MAX_STRETCHES / 2 {
                for b in 0..BINS {
                    let (x, y) = (h[2 * k * BINS + b], h[(2 * k + 1) * BINS + b]);
                    let mut s = x;
                    s.merge(&y);
                    h[k * BINS + b] = s;
                }
            }
            h[MAX_STRETCHES / 2 * BINS..].fill(Bin::default());
        }
        self.bits += 1;
    }

    /// The model of the references seen so far. O(distinct lines + stretches × bins × log).
    pub fn finish(&self) -> LocalFootprint {
        let used = if self.now == 0 {
            0
        } else {
            self.stretch(self.now) + 1
        };
        // A line's last reference has RT = ∞.
        let mut dangling = vec![0.0; used];
        let mut last = vec![Bin::default(); BINS];
        for p in self.table.values() {
            dangling[self.stretch(p)] += 1.0;
            let l = self.now + 1 - p;
            last[bin_of(l)].add(l);
        }
        LocalFootprint {
            line_size: self.options.line_size.bytes(),
            refs: self.now,
            distinct_lines: self.table.len() as u64,
            bits: self.bits,
            forward: self.forward[..used * BINS].to_vec(),
            ending: self.ending[..used * BINS].to_vec(),
            dangling,
            ends: [self.first.clone(), last],
        }
    }
}

impl Analysis for LocalFootprintAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for line in data_lines(batch, &self.options) {
            self.access(line.0);
        }
    }
}

#[cfg(test)]
mod tests;
