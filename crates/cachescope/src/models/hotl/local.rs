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
//! ## Reuse windows measured
//! At a cliff the average window misleads (`local/windows.rs`): a sample of the reuses shorter than
//! 16 Ki references (`windows::RING`) is measured exactly, and the reuses predicted like them take
//! the measured distances. [`LocalFootprintAnalysis::new`] does; [`with_span`] keeps the bare
//! estimate.
//!
//! [`with_span`]: LocalFootprintAnalysis::with_span
//!
//! ## Stretches of every length, streamed
//! A stretch is final once every forward reuse time its reuses compare with is known:
//! `⌈len / span⌉` references after its end. Then its reuses' predictions are made, kept as
//! counts per predicted distance, its forward histogram is added to its parent's (the stretch
//! twice as long holding it), and its memory serves the next stretch. Each length thus keeps
//! at most two stretches open, and the finest stretches stay 1 Ki references long however long
//! the trace: an earlier version kept every stretch to the end and, past 256 of them, doubled
//! their length, so on a 45 M-reference trace a reuse of a thousand references saw a stretch
//! of 2^18. Streamed, every real program of docs/accuracy/hotl.md moved closer to the exact
//! curve (figures there).
//!
//! ## Cost
//! One table lookup per reference (line → latest position; a chunk of 32 references' slots
//! prefetched before they are read, as in [`crate::reuse::StackDistanceAnalysis`]) and three
//! histogram increments:
//! the reuse time into the whole trace's histogram and into that of the stretch it picks, and,
//! as the forward reuse time of `j`, into that of the lowest open stretch holding `j`.
//! Histograms are log-bucketed (one bin per reuse time below 64, then 16 per octave). The
//! measuring costs a bit set and a draw per reuse, and a popcount of `rt / 64`
//! words per sampled one. Settling a stretch reads only the bins its reuses end in (one octave
//! above the finest level) and the prefix sums they ask for, files its short measures as one
//! count per (rt, rd) pair, and adds each prediction to a dense table by distance: on gzip
//! this took the analysis from 0.63 to 0.28 s of CPU time (docs/report.md, Speed). Memory: the line table, two
//! open stretches per length (`log2(n / 1024)` lengths) of two histograms each, one count per
//! distance up to the farthest predicted (at most the distinct lines), and `windows.rs`'
//! bitset and `classes.rs`' classes.
//!
//! `local/access.rs` is the per-reference pass; `local/settle.rs` turns final stretches into
//! predictions and makes the model ([`LocalFootprintAnalysis::finish`]).

mod access;
mod bins;
mod classes;
mod levels;
mod model;
mod settle;
mod windows;

pub use model::{LocalCurve, LocalFootprint};
use model::{Predictions, Prefix};

/// Which reading of HOTL `mrc --method hotl` uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum HotlVariant {
    /// Time-local ([`LocalFootprintAnalysis`]): each reuse's window footprint from the
    /// stretch of the trace it ends in; the default, closer on every real program of
    /// docs/accuracy/hotl.md.
    #[default]
    #[cfg_attr(
        feature = "clap",
        value(
            help = "Time-local: each reuse's window footprint from the stretch of the trace \
                      it ends in; the default, closer on every real program of \
                      docs/accuracy/hotl.md"
        )
    )]
    Local,
    /// The paper's conversion of the whole trace's footprint (§2.3–2.6, [`super::Filmer`]).
    #[cfg_attr(
        feature = "clap",
        value(help = "The paper's conversion of the whole trace's footprint (§2.3–2.6)")
    )]
    Paper,
}

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::table::LineTable;
use crate::reuse::{Options, for_each_chunk};
use bins::BINS;
use classes::Corrections;
use levels::Level;
use windows::Sampler;

/// A reuse takes the smallest stretch at least this many times its reuse time (2 to 32 moved
/// no real program's worst point by more than 0.05 pp but `hash`'s: 0.76 pp at 2, 0.78 at 4,
/// 1.75 at 8, 4.0 at 32).
pub const SPAN: u64 = 4;

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
    pub(crate) fn add(&mut self, v: u64) {
        self.count += 1.0;
        self.sum += v as f64;
    }
    pub(crate) fn merge(&mut self, o: &Bin) {
        self.count += o.count;
        self.sum += o.sum;
    }
}

/// Collects the stretches' reuse-time histograms and turns each stretch's reuses into
/// predictions once it is final; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct LocalFootprintAnalysis {
    options: Options,
    span: u64,
    /// Each line's latest position: by line, or by number for [`Self::observe_numbered`]
    /// (one indexed load instead of a hash probe; 0 for a number not seen). One of the two
    /// is used; an analysis is fed one way.
    table: LineTable,
    ids: Vec<u64>,
    /// Numbers seen in `ids`.
    id_lines: u64,
    now: u64,
    /// Level `k`: stretches of `2^k` finest ones.
    levels: Vec<Level>,
    /// The first position at which a level changes.
    next_event: u64,
    /// Every reuse time of the settled stretches (the rest are added by `finish`), and the
    /// first positions `f`: the whole trace's Xiang footprint.
    reuse: Vec<Bin>,
    first: Vec<Bin>,
    /// Final predictions: reuses by predicted `sd = ⌈E[rd]⌉ − 1`.
    predicted: Predictions,
    /// The recent lines, for measuring reuses; the measured distances by class.
    sampler: Sampler,
    corrections: Corrections,
    /// Scratch for the settling stretch: prefix sums, estimates by bin.
    prefix: Prefix,
    estimates: Vec<f64>,
}

impl LocalFootprintAnalysis {
    /// An analysis of the references `options` counts, each reuse taking the smallest stretch
    /// at least [`SPAN`] times its reuse time, with reuse windows measured
    /// (`windows::SAMPLES` of every rt): `mrc --method hotl`.
    pub fn new(options: Options) -> LocalFootprintAnalysis {
        LocalFootprintAnalysis::with_span(options, SPAN).measuring(windows::SAMPLES)
    }

    /// The bare estimate, each reuse taking the smallest stretch at least `span` (≥ 1) times
    /// its reuse time, no window measured.
    pub fn with_span(options: Options, span: u64) -> LocalFootprintAnalysis {
        let span = span.max(1);
        LocalFootprintAnalysis {
            options,
            span,
            table: LineTable::default(),
            ids: Vec::new(),
            id_lines: 0,
            now: 0,
            levels: vec![Level::new(0, span, 1)],
            next_event: 1 << MIN_STRETCH_BITS,
            reuse: vec![Bin::default(); BINS],
            first: vec![Bin::default(); BINS],
            predicted: Predictions::default(),
            sampler: Sampler::new(0),
            corrections: Corrections::default(),
            prefix: Prefix::default(),
            estimates: Vec::new(),
        }
    }

    /// The same measuring `per / rt` of the reuses of time `rt` below `windows::RING`
    /// (0: none).
    pub fn measuring(mut self, per: u64) -> LocalFootprintAnalysis {
        self.sampler = Sampler::new(per);
        self
    }
}

impl LocalFootprintAnalysis {
    /// Takes the next references as line numbers given in order of first reference, as
    /// [`crate::opt::SpilledIds`] holds them: the analysis only tells lines apart, so this is
    /// [`Analysis::observe`] on the references they number (the report runs it after its
    /// pass, beside OPT's stack).
    pub fn observe_numbered(&mut self, ids: &[u32]) {
        debug_assert!(
            self.table.len() == 0,
            "fed by lines already: numbers would be new lines"
        );
        for &id in ids {
            self.access_id(id as usize);
        }
    }

    /// Distinct lines seen so far.
    pub(super) fn lines(&self) -> u64 {
        self.table.len() as u64 + self.id_lines
    }
}

impl Analysis for LocalFootprintAnalysis {
    fn observe(&mut self, batch: &Batch) {
        debug_assert!(
            self.ids.is_empty(),
            "fed by numbers already: lines would be new lines"
        );
        let options = self.options;
        for_each_chunk(batch, &options, |chunk| {
            self.access_chunk(chunk.iter().copied())
        });
    }
}

#[cfg(test)]
mod tests;
