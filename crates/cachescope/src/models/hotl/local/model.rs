//! [`LocalFootprint`]: the stretches' histograms of a trace, and the miss ratios they predict
//! (the [module documentation](super) gives the estimate).

use super::bins::{BINS, bin_of};
use super::{Bin, SPAN};

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
    /// Stretches of `1 << bits` references; `forward` and `ending` hold `BINS` bins per
    /// stretch, `dangling` the last references per stretch.
    pub(super) bits: u32,
    pub(super) forward: Vec<Bin>,
    pub(super) ending: Vec<Bin>,
    pub(super) dangling: Vec<f64>,
    /// First positions `f` and `l = n + 1 −` last positions, for the Xiang footprint.
    pub(super) ends: [Vec<Bin>; 2],
}

/// The miss ratios a [`LocalFootprint`] predicts ([`LocalFootprint::curve`]).
#[derive(Clone, Debug)]
pub struct LocalCurve {
    line_size: u64,
    refs: u64,
    distinct_lines: u64,
    /// Predicted reuse distances `E[rd]` with their reuse counts, by increasing distance.
    predicted: Vec<(f64, f64)>,
    /// `suffix[k]` = reuses of `predicted[k..]`.
    suffix: Vec<f64>,
}

/// `G(y) = E[min(RT, y)]` over one stretch's forward reuse times: prefix sums of its bins.
struct Stretch {
    /// `counts[b]`, `sums[b]`: over the bins before `b`.
    counts: Vec<f64>,
    sums: Vec<f64>,
    bins: Vec<Bin>,
    /// Positions in the stretch (RT = ∞ included).
    total: f64,
}

impl Stretch {
    fn new(bins: Vec<Bin>, dangling: f64) -> Stretch {
        let (mut counts, mut sums) = (vec![0.0; BINS + 1], vec![0.0; BINS + 1]);
        for (b, x) in bins.iter().enumerate() {
            counts[b + 1] = counts[b] + x.count;
            sums[b + 1] = sums[b] + x.sum;
        }
        let total = counts[BINS] + dangling;
        Stretch {
            counts,
            sums,
            bins,
            total,
        }
    }

    /// `E[min(RT, y)]` for real `y ≥ 0`.
    fn g(&self, y: f64) -> f64 {
        if y <= 0.0 || self.total <= 0.0 {
            return 0.0;
        }
        let b = bin_of(y.floor() as u64);
        // The bin's values taken at their mean, as in `excess`.
        let Bin { count, sum } = self.bins[b];
        let inside = if count > 0.0 {
            count * (sum / count).min(y)
        } else {
            0.0
        };
        let above = self.total - self.counts[b + 1];
        (self.sums[b] + inside + above * y) / self.total
    }
}

impl LocalFootprint {
    /// The whole trace's footprint at real `w ≥ 1` by the Xiang formula (docs/definitions.md),
    /// `m − [Σ (f − w)⁺ + Σ (l − w)⁺ + Σ (rt − w)⁺] / (n − w + 1)`: exact where `w` falls in
    /// a bin of its own (below 64), the values of a wider bin taken at their mean.
    pub fn xiang_fp(&self, w: f64) -> f64 {
        self.xiang_with(&self.reuse_times(), w)
    }

    /// Every reuse time, from the stretches' histograms.
    fn reuse_times(&self) -> Vec<Bin> {
        let mut reuse = vec![Bin::default(); BINS];
        for (b, x) in self.ending.iter().enumerate() {
            reuse[b % BINS].merge(x);
        }
        reuse
    }

    fn xiang_with(&self, reuse: &[Bin], w: f64) -> f64 {
        let n = self.refs as f64;
        if w >= n {
            return self.distinct_lines as f64;
        }
        let excess: f64 = [&self.ends[0][..], &self.ends[1][..], reuse]
            .iter()
            .map(|h| excess(h, w))
            .sum();
        self.distinct_lines as f64 - excess / (n - w + 1.0)
    }

    /// The miss-ratio curve at `sizes_bytes` (method `hotl`, policy `lru`), cold misses
    /// (`m/n`) in `miss_ratio`.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        self.curve(SPAN).mrc(sizes_bytes)
    }

    /// The predictions with each reuse taking the smallest stretch at least `span` times its
    /// reuse time.
    pub fn curve(&self, span: u64) -> LocalCurve {
        let (bits, forward, ending, dangling) =
            (self.bits, &self.forward, &self.ending, &self.dangling);
        let used = dangling.len();
        // levels[k][s]: stretch s of 2^k finest ones; the last level is the whole trace.
        let mut levels: Vec<Vec<Stretch>> = Vec::new();
        let mut width = 1usize;
        loop {
            let level = (0..used.div_ceil(width))
                .map(|s| {
                    let mut bins = vec![Bin::default(); BINS];
                    let mut d = 0.0;
                    for f in s * width..((s + 1) * width).min(used) {
                        for (b, x) in forward[f * BINS..(f + 1) * BINS].iter().enumerate() {
                            bins[b].count += x.count;
                            bins[b].sum += x.sum;
                        }
                        d += dangling[f];
                    }
                    Stretch::new(bins, d)
                })
                .collect::<Vec<_>>();
            let top = level.len() <= 1;
            levels.push(level);
            if top {
                break;
            }
            width *= 2;
        }
        let reuse = self.reuse_times();
        let mut predicted = Vec::new();
        for f in 0..used {
            for x in &ending[f * BINS..(f + 1) * BINS] {
                if x.count == 0.0 {
                    continue;
                }
                let rt = x.sum / x.count;
                // The smallest stretch at least `span` reuse times long, or the whole trace.
                let mut k = 0;
                while k + 1 < levels.len() && (((1u64 << bits) << k) as f64) < span as f64 * rt {
                    k += 1;
                }
                let rd = if k + 1 == levels.len() {
                    self.xiang_with(&reuse, rt)
                } else {
                    levels[k][f >> k].g(rt)
                };
                // No window holds more than the trace's lines.
                let rd = rd.min(self.distinct_lines as f64);
                predicted.push((rd, x.count));
            }
        }
        predicted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
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
