//! Footprint sampling (HOTL §3): analyse windows spread over the trace, each long enough to
//! fill the largest cache of interest, and convert.
//!
//! One sample starts at a seeded random position inside each period of `period` counted
//! references (unbiased placement; a start that falls inside a running sample is skipped),
//! and runs until it has seen `fill_lines` distinct lines (it stops at the end of the
//! 64-reference chunk that gets there), `max_sample_refs` references, or the trace's end.
//! Every window inside a sample is a window of the trace, so the sample's Xiang footprint
//! estimates the trace's `fp(w)` without bias for the lengths it covers.
//!
//! Both of HOTL's designs are computed:
//! - *per sample* (phase-sensitive): each sample's footprint is converted to a miss-ratio
//!   curve, and the curves are averaged with weights `n_i`, the samples' lengths;
//! - *averaged footprint* (phase-insensitive): the samples' footprints are averaged over all
//!   their windows, `fp(w) = Σ (n_i − w + 1)·fp_i(w) / Σ (n_i − w + 1)` over the samples at
//!   least `w` long (the paper's `n_i` weights, exact for `w ≪ n_i`), then converted once.
//!
//! Coverage is the fraction of the trace's counted references inside samples. A sample cannot
//! tell the trace's cold misses from its own first references, so the sampled curves leave
//! `miss_ratio` out; `miss_ratio_warm` is the estimate, which on a long trace counts the
//! trace's few cold misses (at most `m/n`) as well.

use super::curve::{CurvePoint, FootprintCurve};
use super::filmer::{Filmer, PER_OCTAVE};
use super::footprint::{Footprint, FootprintAnalysis};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::{Mrc, MrcPoint, Options, sizes_log_range};

/// A sample is fed at least this many references at a time (the footprint pass's chunk).
const FEED: u64 = 64;

/// How to sample; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingOptions {
    /// Which references count and their line size.
    pub reuse: Options,
    /// Distinct lines that end a sample: the largest cache of interest, in lines.
    pub fill_lines: u64,
    /// Counted references per sampling period (one sample starts in each).
    pub period: u64,
    /// Longest sample, in references.
    pub max_sample_refs: u64,
    /// Seed of the start positions: the same seed picks the same windows.
    pub seed: u64,
    /// Cache sizes of the two curves.
    pub sizes_bytes: Vec<u64>,
}

/// SplitMix64's finaliser.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Accumulated results of the finished samples.
#[derive(Clone, Debug)]
struct Totals {
    samples: u64,
    filled: u64,
    sampled_refs: u64,
    /// Σ n_i·mr_i(c) per size.
    weighted_mr: Vec<f64>,
    /// Per grid window: Σ (n_i − w + 1)·fp_i(w) and Σ (n_i − w + 1).
    fp_sum: Vec<f64>,
    fp_weight: Vec<f64>,
}

/// Runs footprint sampling over a trace; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct FootprintSampler {
    options: SamplingOptions,
    /// Windows at which the averaged footprint is kept (256 per octave up to the longest
    /// sample).
    grid: Vec<u64>,
    /// Counted references so far.
    pos: u64,
    /// Position (1-based) of the next sample's first reference.
    next_start: u64,
    period_index: u64,
    skipped: u64,
    active: Option<FootprintAnalysis>,
    lines: Vec<u64>,
    totals: Totals,
}

impl FootprintSampler {
    /// A sampler. Errors unless `fill_lines`, `period` and `max_sample_refs` are positive and
    /// `sizes_bytes` is not empty.
    pub fn new(options: SamplingOptions) -> Result<FootprintSampler> {
        let bad = |name, message: String| Err(Error::InvalidParameter { name, message });
        if options.fill_lines == 0 {
            return bad(
                "sample fill",
                "0 lines: a sample must fill at least one".into(),
            );
        }
        if options.period == 0 || options.max_sample_refs == 0 {
            return bad(
                "sampling period",
                "the period and the longest sample must be at least one reference".into(),
            );
        }
        if options.sizes_bytes.is_empty() {
            return bad("cache sizes", "no cache size to estimate".into());
        }
        let grid = sizes_log_range(1, options.max_sample_refs, PER_OCTAVE)?;
        let sizes = options.sizes_bytes.len();
        let mut s = FootprintSampler {
            grid: grid.clone(),
            pos: 0,
            next_start: 0,
            period_index: 0,
            skipped: 0,
            active: None,
            lines: Vec::new(),
            totals: Totals {
                samples: 0,
                filled: 0,
                sampled_refs: 0,
                weighted_mr: vec![0.0; sizes],
                fp_sum: vec![0.0; grid.len()],
                fp_weight: vec![0.0; grid.len()],
            },
            options,
        };
        s.schedule();
        Ok(s)
    }

    /// Sets `next_start` to the first start after the current position.
    fn schedule(&mut self) {
        let period = self.options.period;
        loop {
            let start = self.period_index * period
                + mix(self.options.seed ^ self.period_index) % period
                + 1;
            self.period_index += 1;
            if start > self.pos {
                self.next_start = start;
                return;
            }
            self.skipped += 1;
        }
    }

    /// Feeds counted references given as lines.
    fn feed(&mut self, lines: &[u64]) {
        let mut i = 0;
        while i < lines.len() {
            let left = (lines.len() - i) as u64;
            match &mut self.active {
                Some(a) => {
                    let refs = a.refs();
                    let room_lines = self.options.fill_lines.saturating_sub(a.distinct_lines());
                    let room_refs = self.options.max_sample_refs - refs;
                    let k = left.min(room_refs).min(room_lines.max(FEED)) as usize;
                    a.observe_lines(&lines[i..i + k]);
                    i += k;
                    self.pos += k as u64;
                    let filled = a.distinct_lines() >= self.options.fill_lines;
                    if filled || a.refs() >= self.options.max_sample_refs {
                        let fp = a.finish();
                        self.active = None;
                        absorb(&mut self.totals, &self.options, &self.grid, &fp, filled);
                        self.schedule();
                    }
                }
                None => {
                    let skip = left.min(self.next_start - 1 - self.pos);
                    i += skip as usize;
                    self.pos += skip;
                    if self.pos + 1 == self.next_start {
                        let a = FootprintAnalysis::new(self.options.reuse, &[])
                            .expect("no listed window");
                        self.active = Some(a);
                    }
                }
            }
        }
    }

    /// The estimates so far (a running sample counts as a sample).
    pub fn finish(&self) -> SampledFootprint {
        let mut t = self.totals.clone();
        if let Some(a) = &self.active {
            let fp = a.finish();
            let filled = fp.distinct_lines >= self.options.fill_lines;
            absorb(&mut t, &self.options, &self.grid, &fp, filled);
        }
        let line_size = self.options.reuse.line_size.bytes();
        let n = t.sampled_refs.max(1) as f64;
        let per_sample = Mrc {
            method: "hotl-sampled-mr".into(),
            policy: "lru".into(),
            line_size,
            points: self
                .options
                .sizes_bytes
                .iter()
                .zip(&t.weighted_mr)
                .map(|(&size_bytes, &s)| MrcPoint {
                    size_bytes,
                    lines: size_bytes / line_size,
                    miss_ratio: None,
                    miss_ratio_warm: s / n,
                })
                .collect(),
        };
        let points: Vec<CurvePoint> = self
            .grid
            .iter()
            .zip(t.fp_sum.iter().zip(&t.fp_weight))
            .filter(|(_, (_, w))| **w > 0.0)
            .map(|(&window, (s, w))| CurvePoint {
                window: window as f64,
                footprint: s / w,
            })
            .collect();
        let footprint = FootprintCurve {
            line_size,
            refs: t.sampled_refs,
            distinct_lines: None,
            points,
        };
        let mut averaged = match Filmer::from_curve(&footprint) {
            Ok(f) => f.mrc(&self.options.sizes_bytes),
            // No sample at all: nothing to estimate from.
            Err(_) => per_sample.clone(),
        };
        averaged.method = "hotl-sampled-fp".into();
        SampledFootprint {
            refs: self.pos,
            sampled_refs: t.sampled_refs,
            coverage: t.sampled_refs as f64 / self.pos.max(1) as f64,
            samples: t.samples,
            filled_samples: t.filled,
            skipped_starts: self.skipped,
            per_sample,
            averaged,
            footprint,
        }
    }
}

/// Adds one finished sample to the totals.
fn absorb(t: &mut Totals, options: &SamplingOptions, grid: &[u64], fp: &Footprint, filled: bool) {
    let n = fp.refs;
    t.samples += 1;
    t.filled += u64::from(filled);
    t.sampled_refs += n;
    let mut curve = FootprintCurve::from_footprint(fp, PER_OCTAVE).expect("a valid grid");
    curve.distinct_lines = None;
    let filmer = Filmer::from_curve(&curve).expect("a sample has references");
    for (acc, &size) in t.weighted_mr.iter_mut().zip(&options.sizes_bytes) {
        *acc += n as f64 * filmer.miss_ratio((size / options.reuse.line_size.bytes()) as f64);
    }
    for (k, &w) in grid.iter().enumerate().take_while(|&(_, &w)| w <= n) {
        let windows = (n - w + 1) as f64;
        t.fp_sum[k] += windows * fp.fp(w);
        t.fp_weight[k] += windows;
    }
}

impl Analysis for FootprintSampler {
    fn observe(&mut self, batch: &Batch) {
        let shift = self.options.reuse.line_size.shift();
        let all = self.options.reuse.include_instructions;
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        lines.extend(
            batch
                .addrs
                .iter()
                .zip(&batch.kinds)
                .filter(|&(_, &k)| all || k != AccessKind::Instr)
                .map(|(&a, _)| a >> shift),
        );
        self.feed(&lines);
        self.lines = lines;
    }
}

/// The two sampled estimates and what they cover.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SampledFootprint {
    /// Counted references in the trace.
    pub refs: u64,
    /// References inside samples.
    pub sampled_refs: u64,
    /// `sampled_refs / refs`: the fraction of the trace analysed.
    pub coverage: f64,
    /// Samples taken (a sample still running at the end included).
    pub samples: u64,
    /// Samples that reached `fill_lines` distinct lines.
    pub filled_samples: u64,
    /// Periods whose start fell inside a running sample.
    pub skipped_starts: u64,
    /// Per-sample curves averaged (method `hotl-sampled-mr`).
    pub per_sample: Mrc,
    /// The averaged footprint converted (method `hotl-sampled-fp`).
    pub averaged: Mrc,
    /// The averaged footprint.
    pub footprint: FootprintCurve,
}
