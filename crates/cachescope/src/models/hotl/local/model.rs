//! [`LocalFootprint`]: the stretches' histograms of a trace, and the miss ratios they predict
//! (the [module documentation](super) gives the estimate).

use super::Bin;
use super::bins::bin_of;

/// `Σ (x − w)⁺` over the values of histogram `h`.
fn excess(h: &[Bin], w: f64) -> f64 {
    // `w as u64` is `w.floor() as u64` for every f64 (negatives and NaN give 0 either way),
    // without the libm call the baseline x86-64 target makes of `floor`.
    let t = w as u64;
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
///
/// Kept densely, `counts[sd]`: a distance is below the lines seen, so the table is at most one
/// `f64` per line (less than the line table's entry), and a prediction is one indexed add (a
/// BTreeMap insert was 7 % of the pass). Every count added is positive, so 0 is "none".
#[derive(Clone, Debug, Default)]
pub(super) struct Predictions(Vec<f64>);

impl Predictions {
    /// Adds one stretch's reuses, binned by reuse time, each bin predicted at `rd(mean rt)`
    /// and at most `lines`, the lines seen so far (no window holds more).
    pub fn add_stretch(&mut self, ending: &[Bin], lines: u64, rd: impl Fn(f64) -> f64) {
        for x in ending.iter().filter(|x| x.count > 0.0) {
            self.add(rd(x.sum / x.count), x.count, lines);
        }
    }

    /// Adds `count` reuses predicted at `rd`, at most `lines`.
    #[inline]
    pub fn add(&mut self, rd: f64, count: f64, lines: u64) {
        self.add_sd(sd_of(rd.min(lines as f64)), count);
    }

    /// Adds `count` (> 0) reuses at stack distance `sd`.
    #[inline]
    pub fn add_sd(&mut self, sd: u64, count: f64) {
        debug_assert!(count > 0.0, "a zero count would read as no prediction");
        let sd = usize::try_from(sd).expect("a distance below the lines seen");
        if sd >= self.0.len() {
            self.0.resize(sd + 1, 0.0);
        }
        self.0[sd] += count;
    }

    /// `(sd, count)` by increasing `sd`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        (0u64..)
            .zip(self.0.iter().copied())
            .filter(|&(_, count)| count != 0.0)
    }
}

/// `(rd.ceil().max(1.0) as u64) − 1`, the stack distance of a reuse predicted at `rd`, for
/// every f64, without the libm call the baseline x86-64 target makes of `ceil`.
#[inline]
pub(super) fn sd_of(rd: f64) -> u64 {
    // Below 2^52 a float's integer part and fraction are exact: `⌈rd⌉ − 1` is the integer
    // part, one less if there is no fraction.
    if rd > 1.0 && rd < (1u64 << 52) as f64 {
        let t = rd as u64;
        t - u64::from(t as f64 == rd)
    } else {
        (rd.ceil().max(1.0) as u64) - 1
    }
}

/// Scratch for [`Stretch`]'s prefix sums, kept across stretches so none allocates.
#[derive(Clone, Debug, Default)]
pub(super) struct Prefix {
    /// `counts[b]`, `sums[b]`: over the bins before `b`.
    counts: Vec<f64>,
    sums: Vec<f64>,
}

/// `G(y) = E[min(RT, y)]` over one stretch's forward reuse times: prefix sums of its bins.
///
/// Summed only as far as a query reaches: a stretch's reuses ask about the few bins their
/// reuse times fall in (one octave above the finest level), while its forward times may span
/// hundreds of bins. Each prefix is the same left-to-right sum however far it goes.
pub(super) struct Stretch<'a> {
    prefix: &'a mut Prefix,
    bins: &'a [Bin],
    /// Positions in the stretch (those whose forward reuse time is unknown or ∞ included).
    total: f64,
}

impl<'a> Stretch<'a> {
    /// `bins` may stop early: the bins after it are empty.
    pub fn new(bins: &'a [Bin], total: f64, prefix: &'a mut Prefix) -> Stretch<'a> {
        prefix.counts.clear();
        prefix.sums.clear();
        prefix.counts.push(0.0);
        prefix.sums.push(0.0);
        Stretch {
            prefix,
            bins,
            total,
        }
    }

    /// Extends the prefix sums through index `i` (≤ `bins.len()`).
    #[inline]
    fn sum_through(&mut self, i: usize) {
        let p = &mut *self.prefix;
        for b in p.counts.len() - 1..i {
            let x = self.bins[b];
            p.counts.push(p.counts[b] + x.count);
            p.sums.push(p.sums[b] + x.sum);
        }
    }

    /// `E[min(RT, y)]` for real `y ≥ 0`.
    pub fn g(&mut self, y: f64) -> f64 {
        if y <= 0.0 || self.total <= 0.0 {
            return 0.0;
        }
        // `y as u64` is `y.floor() as u64` here (y > 0 or NaN), without libm's `floor`.
        let len = self.bins.len();
        let b = bin_of(y as u64).min(len);
        let above_from = (b + 1).min(len);
        self.sum_through(above_from);
        // The bin's values taken at their mean, as in `excess`.
        let Bin { count, sum } = self.bins.get(b).copied().unwrap_or_default();
        let inside = if count > 0.0 {
            count * (sum / count).min(y)
        } else {
            0.0
        };
        let above = self.total - self.prefix.counts[above_from];
        (self.prefix.sums[b] + inside + above * y) / self.total
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
        for (sd, count) in self.predicted.iter() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sd_of_is_the_ceiling_formula(x in proptest::num::f64::ANY, w in 0u64..1 << 20) {
            let want = |rd: f64| (rd.ceil().max(1.0) as u64) - 1;
            prop_assert_eq!(sd_of(x), want(x));
            for y in [w as f64, (w as f64).next_down(), (w as f64).next_up()] {
                prop_assert_eq!(sd_of(y), want(y));
            }
        }

        #[test]
        fn lazy_prefix_sums_are_the_full_ones(
            bins in proptest::collection::vec((0u32..50, 0u32..1000), 0..300),
            ys in proptest::collection::vec(0.0f64..1e6, 1..20),
        ) {
            let bins: Vec<Bin> = bins
                .iter()
                .map(|&(c, s)| Bin { count: f64::from(c), sum: f64::from(c) * f64::from(s) })
                .collect();
            let total = bins.iter().map(|b| b.count).sum::<f64>() + 7.0;
            // The full prefix sums of before, and `g` read from them.
            let (mut counts, mut sums) = (vec![0.0; bins.len() + 1], vec![0.0; bins.len() + 1]);
            for (b, x) in bins.iter().enumerate() {
                counts[b + 1] = counts[b] + x.count;
                sums[b + 1] = sums[b] + x.sum;
            }
            let full = |y: f64| {
                if y <= 0.0 {
                    return 0.0;
                }
                let b = bin_of(y.floor() as u64).min(bins.len());
                let Bin { count, sum } = bins.get(b).copied().unwrap_or_default();
                let inside = if count > 0.0 { count * (sum / count).min(y) } else { 0.0 };
                let above = total - counts[(b + 1).min(bins.len())];
                (sums[b] + inside + above * y) / total
            };
            let mut prefix = Prefix::default();
            let mut g = Stretch::new(&bins, total, &mut prefix);
            for &y in &ys {
                prop_assert_eq!(g.g(y).to_bits(), full(y).to_bits(), "y {}", y);
            }
        }
    }
}
