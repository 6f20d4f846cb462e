//! The fully associative corrections of a sampled report's simulated curves (OPT of the
//! sample, random replacement's miniatures), each read where the sample's own LRU curve meets
//! the reference LRU curve.
//!
//! [`super::curves`] reads a policy as `lru_ref(C) + (policy_sample(C) − lru_sample(C))`. At a
//! working-set cliff the sample of a few lines places the cliff where its own lines run out,
//! a size step early or late (gzip's 1,245-line working set is ~12 sampled lines at rate
//! 0.01), and the difference between two curves on either side of their cliffs is most of
//! both. The sample's curves are one run of the sampled lines, so they keep their relation
//! to each other when the sample's sizes are stretched: the policy is read at the sample's
//! size `C*` where its LRU equals the reference's at `C`, `policy_sample(C*) + (lru_ref(C) −
//! lru_sample(C*))` (the bracket is 0 where they meet), and as before where they do not meet
//! within an octave of `C`'s place in the sample (a flat stretch, which any noise would
//! otherwise carry across a cliff). Measured in docs/accuracy/sampled.md
//! (`scripts/sampled-accuracy.sh`).

use crate::method::OptSample;
use crate::reuse::{Mrc, MrcPoint};

use super::curves::{Reference, at, shift};

/// A point of a sample's curves at `x`, the log2 of its size: the sample's LRU miss ratio and
/// the policy's miss ratio and warm miss ratio.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Knot {
    pub x: f64,
    pub lru: f64,
    pub policy: (f64, f64),
}

/// Where the sample's LRU (linear between `knots`, `x` ascending) equals `r` nearest `x0`,
/// at most an octave (1 in `x`) away: the sample's LRU and the policy's ratios there. `None`
/// where they do not meet within it.
pub(super) fn meet(knots: &[Knot], x0: f64, r: f64) -> Option<Knot> {
    let mut best: Option<(f64, Knot)> = None;
    for w in knots.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (da, db) = (a.lru - r, b.lru - r);
        if da * db > 0.0 {
            continue;
        }
        // Flat at `r`: the nearest point of the stretch; else where the line crosses `r`.
        let t = if da == db {
            ((x0 - a.x) / (b.x - a.x)).clamp(0.0, 1.0)
        } else {
            da / (da - db)
        };
        let lerp = |u: f64, v: f64| u + t * (v - u);
        let k = Knot {
            x: lerp(a.x, b.x),
            lru: lerp(a.lru, b.lru),
            policy: (
                lerp(a.policy.0, b.policy.0),
                lerp(a.policy.1, b.policy.1),
            ),
        };
        let d = (k.x - x0).abs();
        if d <= 1.0 && best.is_none_or(|(e, _)| d < e) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

impl Reference<'_> {
    /// `sample` (a policy in fully associative miniatures, one size an octave) corrected by
    /// the fully associative LRU curves: the reference's, and `lru_mini`'s, LRU in the same
    /// miniatures of the same lines, read where the two LRU curves meet.
    pub(super) fn fully_associative(&self, sample: Mrc, lru_mini: &Mrc) -> Mrc {
        let knots: Vec<Knot> = sample
            .points
            .iter()
            .filter_map(|p| {
                Some(Knot {
                    x: (p.size_bytes as f64).log2(),
                    lru: at(lru_mini, p.size_bytes)?,
                    policy: (p.miss_ratio?, p.miss_ratio_warm),
                })
            })
            .collect();
        let mut curve = sample;
        curve.points.retain_mut(|p| {
            let (Some(r), Some(l)) = ((self.lru)(p.size_bytes), at(lru_mini, p.size_bytes)) else {
                return false;
            };
            match meet(&knots, (p.size_bytes as f64).log2(), r) {
                Some(k) => {
                    (p.miss_ratio, p.miss_ratio_warm) = (Some(k.policy.0), k.policy.1);
                    shift(p, r - k.lru);
                }
                None => shift(p, r - l),
            }
            true
        });
        curve
    }

    /// OPT from the sample corrected by the fully associative LRU curves, OPT's and LRU's
    /// sample in the same caches of whole sampled lines, read where the sample's LRU meets
    /// the reference's; where they do not meet within an octave, at `C · R`, between the
    /// whole sampled lines around it in the same proportion (SHARDS's point at `C` is the
    /// sample's LRU at `⌈C · R⌉` lines, a different cache from OPT's when `C · R` is not
    /// whole).
    pub(super) fn opt(&self, sample: &OptSample, sizes: &[u64]) -> Mrc {
        let line = self.shards.line_size;
        let rate = sample.rate;
        let mut curve = sample.template();
        curve.points = sizes
            .iter()
            .filter_map(|&size_bytes| {
                let lines = size_bytes / line;
                let lru = (self.lru)(size_bytes)?;
                let (lo, hi, t) = sample.between(lines)?;
                let (miss, warm) = sample.at(lines)?;
                let mut p = MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some(miss),
                    miss_ratio_warm: warm,
                };
                let x = lines as f64 * rate;
                let knots: Vec<Knot> = whole_sizes(x)
                    .filter_map(|m| {
                        Some(Knot {
                            x: (m as f64).log2(),
                            lru: self.sample_in(m, rate),
                            policy: sample.in_whole(m)?,
                        })
                    })
                    .collect();
                match meet(&knots, x.log2(), lru) {
                    Some(k) => {
                        (p.miss_ratio, p.miss_ratio_warm) = (Some(k.policy.0), k.policy.1);
                        shift(&mut p, lru - k.lru);
                    }
                    None => {
                        let (a, b) = (self.sample_in(lo, rate), self.sample_in(hi, rate));
                        shift(&mut p, lru - (a + t * (b - a)));
                    }
                }
                Some(p)
            })
            .collect();
        curve
    }

    /// The sample's fully associative LRU miss ratio in a cache of `m` sampled lines: its
    /// reuses at sampled distances of `m` or more, scaled to lines as SHARDS bins them.
    pub(super) fn sample_in(&self, m: u64, rate: f64) -> f64 {
        let lines = (m as f64 / rate) as u64;
        let misses = self.shards.at_least(lines) + self.shards.cold;
        (misses / self.shards.refs.max(1) as f64).min(1.0)
    }
}

/// The whole sampled sizes from `x / 2` to `2x`: each of them up to a few hundred, 128 an
/// octave beyond (a large sample's curves are smooth there; OPT is read at all of them).
fn whole_sizes(x: f64) -> impl Iterator<Item = u64> {
    let mut last = 0;
    (0..=256).filter_map(move |j| {
        let m = ((x / 2.0) * 2f64.powf(f64::from(j) / 128.0)).round().max(1.0) as u64;
        (m > last).then(|| {
            last = m;
            m
        })
    })
}
