//! [`LocalFootprint`]: the stretches' histograms of a trace, and the miss ratios they predict
//! (the [module documentation](super) gives the estimate).

use std::collections::BTreeMap;

use super::Bin;
use super::bins::bin_of;

/// `Σ (x − w)⁺` over the values of histogram `h`.
fn excess(h: &[Bin], w: f64) -> f64 {
    let t = w.floor() as u64;
    let b = bin_of(t);
    let above: f64 = h[b + 1..].iter().map(|x| x.sum - x.count * w).sum();
    // A bin's values taken at their mean: exact for a bin of one value, or of a loop's one
    // reuse time.
    let Bin { count, sum } = h[b];
    let inside = if count > 0.0 {
        count * (sum / count - w).max(0.0)
    } else {
        0.0
    };
    above + inside
}
use crate::models::smith::{Distances, SdMass};
use crate::reuse::{Mrc, MrcPoint};

/// A trace's time-local reuse profile: what [`super::LocalFootprintAnalysis`] collects.
#[derive(Clone, Debug)]
pub struct LocalFootprint {
    /// Line size in bytes.
    pub line_size: u64,
    /// References `n`.
    pub refs: u64,
    /// Distinct lines `m` (the cold misses).
    pub distinct_lines: u64,
    /// Every reuse time, for the Xiang footprint.
    pub(super) reuse: Vec<Bin>,
    /// First positions `f` and `l = n + 1 −` last positions, for the Xiang footprint.
    pub(super) ends: [Vec<Bin>; 2],
    /// The reuses by predicted distance.
    pub(super) predicted: Predictions,
}

/// The miss ratios a [`LocalFootprint`] predicts ([`LocalFootprint::curve`]).
#[derive(Clone, Debug)]
pub struct LocalCurve {
    line_size: u64,
    refs: u64,
    distinct_lines: u64,
    /// Predicted reuse distances (`sd + 1`, whole) with their reuse counts, by increasing
    /// distance.
    predicted: Vec<(f64, f64)>,
    /// `suffix[k]` = reuses of `predicted[k..]`.
    suffix: Vec<f64>,
}

/// Reuses by predicted stack distance `sd = ⌈E[rd]⌉ − 1`: a reuse predicted at `E[rd]` misses
/// in `c` lines iff `E[rd] > c`, iff `sd ≥ c` for whole `c`, so the integer is all a curve
/// needs, and there are at most as many as distinct lines.
#[derive(Clone, Debug, Default)]
pub(super) struct Predictions(pub(super) BTreeMap<u64, f64>);

impl Predictions {
    /// Adds one stretch's reuses, binned by reuse time, each bin predicted at `rd(mean rt)`
    /// and at most `lines`, the lines seen so far (no window holds more).
    pub fn add_stretch(&mut self, ending: &[Bin], lines: u64, rd: impl Fn(f64) -> f64) {
        for x in ending.iter().filter(|x| x.count > 0.0) {
            self.add(rd(x.sum / x.count), x.count, lines);
        }
    }

    /// Adds `count` reuses predicted at `rd`, at most `lines`.
    pub fn add(&mut self, rd: f64, count: f64, lines: u64) {
        let rd = rd.min(lines as f64);
        let sd = (rd.ceil().max(1.0) as u64) - 1;
        *self.0.entry(sd).or_default() += count;
    }
}

/// `G(y) = E[min(RT, y)]` over one stretch's forward reuse times: prefix sums of its bins.
pub(super) struct Stretch<'a> {
    /// `counts[b]`, `sums[b]`: over the bins before `b`.
    counts: Vec<f64>,
    sums: Vec<f64>,
    bins: &'a [Bin],
    /// Positions in the stretch (those whose forward reuse time is unknown or ∞ included).
    total: f64,
}

impl<'a> Stretch<'a> {
    /// `bins` may stop early: the bins after it are empty.
    pub fn new(bins: &'a [Bin], total: f64) -> Stretch<'a> {
        let (mut counts, mut sums) = (vec![0.0; bins.len() + 1], vec![0.0; bins.len() + 1]);
        for (b, x) in bins.iter().enumerate() {
            counts[b + 1] = counts[b] + x.count;
            sums[b + 1] = sums[b] + x.sum;
        }
        Stretch {
            counts,
            sums,
            bins,
            total,
        }
    }

    /// `E[min(RT, y)]` for real `y ≥ 0`.
    pub fn g(&self, y: f64) -> f64 {
        if y <= 0.0 || self.total <= 0.0 {
            return 0.0;
        }
        let b = bin_of(y.floor() as u64).min(self.bins.len());
        // The bin's values taken at their mean, as in `excess`.
        let Bin { count, sum } = self.bins.get(b).copied().unwrap_or_default();
        let inside = if count > 0.0 {
            count * (sum / count).min(y)
        } else {
            0.0
        };
        let above = self.total - self.counts[(b + 1).min(self.bins.len())];
        (self.sums[b] + inside + above * y) / self.total
    }
}

impl LocalFootprint {
    /// The whole trace's footprint at real `w ≥ 1` by the Xiang formula (docs/definitions.md),
    /// `m − [Σ (f − w)⁺ + Σ (l − w)⁺ + Σ (rt − w)⁺] / (n − w + 1)`: exact where `w` falls in
    /// a bin of its own (below 64), the values of a wider bin taken at their mean.
    pub fn xiang_fp(&self, w: f64) -> f64 {
        let n = self.refs as f64;
        if w >= n {
            return self.distinct_lines as f64;
        }
        let excess: f64 = [&self.ends[0][..], &self.ends[1][..], &self.reuse[..]]
            .iter()
            .map(|h| excess(h, w))
            .sum();
        self.distinct_lines as f64 - excess / (n - w + 1.0)
    }

    /// The miss-ratio curve at `sizes_bytes` (method `hotl`, policy `lru`), cold misses
    /// (`m/n`) in `miss_ratio`.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        self.curve().mrc(sizes_bytes)
    }

    /// The predictions, each no farther than the trace's lines.
    pub fn curve(&self) -> LocalCurve {
        let top = self.distinct_lines.saturating_sub(1);
        let mut predicted: Vec<(f64, f64)> = Vec::new();
        for (&sd, &count) in &self.predicted.0 {
            let rd = (sd.min(top) + 1) as f64;
            match predicted.last_mut() {
                Some(last) if last.0 == rd => last.1 += count,
                _ => predicted.push((rd, count)),
            }
        }
        let mut suffix = vec![0.0; predicted.len() + 1];
        for k in (0..predicted.len()).rev() {
            suffix[k] = suffix[k + 1] + predicted[k].1;
        }
        LocalCurve {
            line_size: self.line_size,
            refs: self.refs,
            distinct_lines: self.distinct_lines,
            predicted,
            suffix,
        }
    }
}

impl LocalCurve {
    /// Warm misses per reference of an LRU cache of `c` lines: the reuses with `E[rd] > c`.
    pub fn miss_ratio_warm(&self, c: f64) -> f64 {
        if self.refs == 0 {
            return 0.0;
        }
        let k = self.predicted.partition_point(|&(rd, _)| rd <= c);
        self.suffix[k] / self.refs as f64
    }

    /// The predictions as stack distances for Smith's formula ([`crate::models::smith`]):
    /// a reuse predicted at `E[rd]` misses in `c` lines iff `⌈E[rd]⌉ − 1 ≥ c`, so that is its
    /// `sd`. Method `hotl`.
    pub fn stack_distances(&self) -> Distances {
        let n = self.refs.max(1) as f64;
        let mut masses: Vec<SdMass> = Vec::new();
        for &(rd, count) in &self.predicted {
            let sd = (rd.ceil() as u64).saturating_sub(1);
            match masses.last_mut() {
                Some(m) if m.sd == sd => m.weight += count / n,
                _ => masses.push(SdMass {
                    sd,
                    len: 1,
                    weight: count / n,
                }),
            }
        }
        Distances {
            method: "hotl".into(),
            line_size: self.line_size,
            refs: self.refs,
            cold: Some(self.distinct_lines as f64 / n),
            masses,
        }
    }

    /// The miss-ratio curve at `sizes_bytes` (method `hotl`, policy `lru`), cold misses
    /// (`m/n`) in `miss_ratio`.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        let cold = self.distinct_lines as f64 / self.refs.max(1) as f64;
        let points = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / self.line_size;
                let warm = self.miss_ratio_warm(lines as f64);
                MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some(warm + cold),
                    miss_ratio_warm: warm,
                }
            })
            .collect();
        Mrc {
            method: "hotl".into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points,
        }
    }
}
