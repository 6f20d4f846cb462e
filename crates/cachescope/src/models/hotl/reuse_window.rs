//! The reuse-window hypothesis check (HOTL §2.7, Corollary 2.3): the conversions are exact
//! when the footprint of reuse windows equals that of all windows,
//!
//! `rfp(l) = fp(l)` for every window length `l`,
//!
//! where `rfp(l)` averages the footprint of the *reuse windows* of length `l`: a reuse with
//! reuse time `rt = i − j` spans positions `j ..= i`, `l = rt + 1` references, and holds
//! `rd = sd + 1` distinct lines (HOTL's reuse distance; docs/definitions.md). So `rfp(l)` is
//! the mean `rd` of the reuses with `rt = l − 1` (HOTL's `wwwx`: `fp(2) = 4/3`, `rfp(2) = 1`).
//!
//! Where `rfp(l) > fp(l)` the reuses of that length see more data than a typical window, and
//! HOTL under-estimates the misses of caches around `fp(l)` lines; where `rfp(l) < fp(l)` it
//! over-estimates them. Phases are the typical case: in the `phases` workload over 4096 lines,
//! the loop phase's reuses (length 257) all hold its 256 lines, but the average window of
//! that length holds 179, because the stream phase's windows of 257 loads cover only 33 lines;
//! so HOTL places the loop's misses at caches of about 180 lines instead of 256
//! (`tests/hotl_diagnostics.rs`).
//!
//! [`ReuseWindowAnalysis`] measures `rd` per reuse with exact LRU stack distances
//! ([`crate::reuse::StackDistance`]), or, where that is too costly, on a spatial sample of the
//! lines (`rate` < 1: a line is followed iff a hash of it falls below `rate·2^64`; the stack
//! distance among followed lines, divided by `rate`, estimates `sd`, as in SHARDS, Waldspurger
//! et al., FAST 2015). Reuse times stay exact either way: they are positions in the whole trace.

use super::footprint::Footprint;
use crate::access::LineAddr;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::table::LineTable;
use crate::reuse::{Options, StackDistance, data_lines};

/// Window lengths below this have a bin each; above, 16 bins per power of two.
const EXACT_WINDOWS: u64 = 64;

/// Bins per power of two above [`EXACT_WINDOWS`].
const BINS_PER_OCTAVE: u64 = 16;

/// Bin of window length `l ≥ 2`.
fn bin_of(l: u64) -> usize {
    if l < EXACT_WINDOWS {
        return l as usize;
    }
    let k = u64::from(63 - l.leading_zeros());
    let e = u64::from(EXACT_WINDOWS.trailing_zeros());
    let sub = (l >> (k - BINS_PER_OCTAVE.trailing_zeros() as u64)) - BINS_PER_OCTAVE;
    (EXACT_WINDOWS + (k - e) * BINS_PER_OCTAVE + sub) as usize
}

/// Per bin of window lengths: reuses, and the sums of `rd` and of `l`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Bin {
    reuses: u64,
    rd: f64,
    window: f64,
}

/// Measures the reuse windows' footprints; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct ReuseWindowAnalysis {
    options: Options,
    /// Lines with `hash < threshold` are followed; `u64::MAX` with `all` follows every line.
    threshold: u64,
    all: bool,
    rate: f64,
    now: u64,
    positions: LineTable,
    stack: StackDistance,
    bins: Vec<Bin>,
}

/// SplitMix64's finaliser: a hash independent of the tables' multiplicative one.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl ReuseWindowAnalysis {
    /// Follows a fraction `rate` of the lines (1 = every line, exact). Errors unless
    /// `0 < rate ≤ 1`.
    pub fn new(options: Options, rate: f64) -> Result<ReuseWindowAnalysis> {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "reuse-window sampling rate",
                message: format!("{rate} is not in (0, 1]"),
            });
        }
        Ok(ReuseWindowAnalysis {
            options,
            threshold: (rate * u64::MAX as f64) as u64,
            all: rate >= 1.0,
            rate,
            now: 0,
            positions: LineTable::default(),
            stack: StackDistance::new(),
            bins: Vec::new(),
        })
    }

    #[inline]
    fn access(&mut self, line: u64) {
        self.now += 1;
        if !self.all && mix(line) >= self.threshold {
            return;
        }
        let sd = self.stack.access(LineAddr(line));
        if let (Some(j), Some(sd)) = (self.positions.replace(line, self.now), sd) {
            let l = self.now - j + 1;
            let b = bin_of(l);
            if b >= self.bins.len() {
                self.bins.resize(b + 1, Bin::default());
            }
            let bin = &mut self.bins[b];
            bin.reuses += 1;
            bin.rd += sd as f64 / self.rate + 1.0;
            bin.window += l as f64;
        }
    }

    /// The reuse windows so far.
    pub fn finish(&self) -> ReuseWindows {
        ReuseWindows {
            refs: self.now,
            rate: self.rate,
            bins: self.bins.clone(),
        }
    }
}

impl Analysis for ReuseWindowAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for line in data_lines(batch, &self.options) {
            self.access(line.0);
        }
    }
}

/// The measured reuse windows of a trace, by length.
#[derive(Clone, Debug, PartialEq)]
pub struct ReuseWindows {
    /// References counted.
    pub refs: u64,
    /// The fraction of lines followed (1 = exact).
    pub rate: f64,
    bins: Vec<Bin>,
}

/// `rfp` against `fp` for one range of window lengths.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ReuseWindowPoint {
    /// Mean length `l` of the reuse windows in the range (references).
    pub window: f64,
    /// Reuses measured in the range (followed lines only when sampled).
    pub reuses: u64,
    /// `rfp(l)`: their mean reuse distance (`sd + 1`, estimated when sampled).
    pub rfp: f64,
    /// `fp(l)` at the mean length, from the footprint.
    pub fp: f64,
    /// `rfp − fp` in lines: positive where HOTL under-estimates misses near `fp` lines.
    pub divergence: f64,
}

/// The hypothesis check of one trace.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReuseWindowCheck {
    /// The fraction of lines followed (1 = exact).
    pub rate: f64,
    /// One point per range of window lengths (each length below 64, then 16 per octave).
    pub points: Vec<ReuseWindowPoint>,
    /// `Σ reuses·|rfp − fp| / Σ reuses·fp`: the relative divergence over all reuses.
    pub weighted_relative_divergence: f64,
}

impl ReuseWindows {
    /// `rfp` beside `fp` (the same trace's footprint) for each range of window lengths.
    pub fn check(&self, fp: &Footprint) -> ReuseWindowCheck {
        let (mut num, mut den) = (0.0, 0.0);
        let points: Vec<ReuseWindowPoint> = self
            .bins
            .iter()
            .filter(|b| b.reuses > 0)
            .map(|b| {
                let n = b.reuses as f64;
                let window = b.window / n;
                let rfp = b.rd / n;
                // fp is linear to within its concavity over a bin 1/16 wide.
                let f = interpolate_fp(fp, window);
                num += n * (rfp - f).abs();
                den += n * f;
                ReuseWindowPoint {
                    window,
                    reuses: b.reuses,
                    rfp,
                    fp: f,
                    divergence: rfp - f,
                }
            })
            .collect();
        ReuseWindowCheck {
            rate: self.rate,
            points,
            weighted_relative_divergence: if den > 0.0 { num / den } else { 0.0 },
        }
    }
}

/// `fp` at a real window, linear between the integers around it.
fn interpolate_fp(fp: &Footprint, w: f64) -> f64 {
    let lo = w.floor() as u64;
    let t = w - lo as f64;
    if t == 0.0 {
        fp.fp(lo)
    } else {
        (1.0 - t) * fp.fp(lo) + t * fp.fp(lo + 1)
    }
}
