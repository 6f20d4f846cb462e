//! From sampled measurements to full-stream ones: miniature geometries, SHARDS's distances as
//! the distributions the models take, histograms and counts over the rate.

use crate::Result;
use crate::models::l2::L1Histogram;
use crate::models::smith;
use crate::reuse::{LogHistogram, ShardsDistances};
use crate::sim::{Geometry, TwoLevelResult};

use super::super::histogram::{octave_bounds, octave_of};
use super::super::model::{Attribution, Histogram, HistogramBin};

/// The miniature of `g` at `rate`: its sets times the rate, down to a power of two, at least
/// one; the same ways and lines.
pub fn scaled_geometry(g: Geometry, rate: f64) -> Result<Geometry> {
    let want = (g.sets() as f64 * rate).max(1.0);
    let sets = (1u64 << want.log2().floor() as u32).min(g.sets());
    let ways = u64::from(g.assoc());
    Geometry::new(
        sets * ways * g.line_size().bytes(),
        g.assoc(),
        g.line_size().bytes(),
    )
}

/// The rate at which the miniature of `g` at `rate` ([`scaled_geometry`]) stands for `g`
/// exactly, `sets_mini / sets` (at most `rate`); `None` where one set is more than `rate`.
pub fn miniature_rate(g: Geometry, rate: f64) -> Result<Option<f64>> {
    let mini = scaled_geometry(g, rate)?;
    let r = mini.sets() as f64 / g.sets() as f64;
    Ok((r <= rate).then_some(r))
}

/// An L1 histogram (StatStack's, from a profile) as Smith's distribution.
pub(super) fn smith_of(h: &L1Histogram, method: &str, refs: u64) -> smith::Distances {
    let n = h.refs.max(f64::MIN_POSITIVE);
    smith::Distances {
        method: method.into(),
        line_size: h.line_size,
        refs,
        cold: Some(h.cold / n),
        masses: h
            .masses
            .iter()
            .map(|m| smith::SdMass {
                sd: m.sd,
                len: m.len,
                weight: m.weight / n,
            })
            .collect(),
    }
}

/// SHARDS's scaled distances as the L2 model's L1 histogram.
pub(super) fn l1_histogram(d: &ShardsDistances) -> Result<L1Histogram> {
    let masses: Vec<(u64, u64, f64)> = d.bins().map(|(lo, hi, w)| (lo, hi - lo + 1, w)).collect();
    L1Histogram::from_masses(d.line_size, d.cold, &masses)
}

/// The L1 histogram of the `combined` LRU curve: StatStack's distances (`statstack`, from the
/// reuse samples) below the first SHARDS bin a cache of its size is served by SHARDS at its
/// rate (`serves`), SHARDS's scaled distances and first references from there; in full-stream
/// references. The L2 model reads the L1 misses' distances, most of them past the L1 size, so
/// each range comes from the estimator the LRU curve takes there.
pub(super) fn combined_l1(
    statstack: &L1Histogram,
    d: &ShardsDistances,
    serves: impl Fn(u64) -> bool,
) -> Result<L1Histogram> {
    let cut = d.bins().map(|(lo, _, _)| lo).find(|&lo| serves(lo));
    let f = d.refs as f64 / statstack.refs.max(f64::MIN_POSITIVE);
    let mut masses: Vec<(u64, u64, f64)> = statstack
        .masses
        .iter()
        .filter(|m| cut.is_none_or(|c| m.sd + m.len <= c))
        .map(|m| (m.sd, m.len, m.weight * f))
        .collect();
    let cold = match cut {
        Some(c) => {
            masses.extend(
                d.bins()
                    .filter(|b| b.0 >= c)
                    .map(|(lo, hi, w)| (lo, hi - lo + 1, w)),
            );
            d.cold
        }
        None => statstack.cold * f,
    };
    L1Histogram::from_masses(d.line_size, cold, &masses)
}

/// A histogram of weighted distances `(lo, hi, weight)` (each bin inside one octave), with
/// `cold` weighted first references, in the report's octave bins, counts rounded.
pub(super) fn octave_weights(
    name: &str,
    bins: impl Iterator<Item = (u64, u64, f64)>,
    cold: f64,
) -> Histogram {
    let mut counts: Vec<f64> = Vec::new();
    for (lo, _, w) in bins {
        let i = octave_of(lo);
        if counts.len() <= i {
            counts.resize(i + 1, 0.0);
        }
        counts[i] += w;
    }
    let first = counts
        .iter()
        .position(|&c| c >= 0.5)
        .unwrap_or(counts.len());
    let bins: Vec<HistogramBin> = counts
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, &c)| {
            let (lo, hi) = octave_bounds(i);
            HistogramBin {
                lo,
                hi,
                count: c.round() as u64,
            }
        })
        .collect();
    let cold = cold.round() as u64;
    Histogram {
        distance: name.into(),
        total: cold + bins.iter().map(|b| b.count).sum::<u64>(),
        bins,
        cold,
    }
}

/// A histogram of sampled distances, each distance and count over `rate`.
pub(super) fn octave_scaled(name: &str, h: &LogHistogram, cold: u64, rate: f64) -> Histogram {
    octave_weights(
        name,
        h.bins().filter(|b| b.count > 0).map(|b| {
            let lo = (b.start as f64 / rate) as u64;
            (lo, lo, b.count as f64 / rate)
        }),
        cold as f64 / rate,
    )
}

/// The reuse-time histogram of a profile's samples (reuse time `distance + 1`, the dangling
/// samples the lines' last references), each sample standing for `refs / samples` references.
pub(super) fn reuse_times(p: &crate::sampling::Profile) -> Histogram {
    let f = p.refs() as f64 / p.samples().len().max(1) as f64;
    let times = p.samples().iter().filter_map(|s| match s.next {
        crate::sampling::NextUse::Reuse { distance } => Some((distance + 1, distance + 1, f)),
        crate::sampling::NextUse::Dangling { .. } => None,
    });
    octave_weights("reuse_time", times, p.dangling() as f64 * f)
}

/// The two-level simulation of the sampled lines as the full stream's: counts over `rate`,
/// at the L2 sizes of the report (`sizes`, not the miniatures').
pub(super) fn two_level(r: TwoLevelResult, rate: f64, sizes: &[u64]) -> TwoLevelResult {
    let up = |x: u64| (x as f64 / rate).round() as u64;
    TwoLevelResult {
        l1_lines: (r.l1_lines as f64 / rate).round() as u64,
        refs: up(r.refs),
        l1_misses: up(r.l1_misses),
        cold: up(r.cold),
        l2_sizes_bytes: sizes.to_vec(),
        l2_misses: r.l2_misses.iter().map(|&m| up(m)).collect(),
        ..r
    }
}

/// An attribution summary of the miniature's sampled lines as the full cache's: references,
/// misses and bytes over `rate`, named after `cache` (ratios and shares are unchanged).
pub(super) fn attribution(mut a: Attribution, rate: f64, cache: String) -> Attribution {
    let up = |x: u64| (x as f64 / rate).round() as u64;
    a.cache = cache;
    for s in &mut a.structures {
        (s.refs, s.misses) = (up(s.refs), up(s.misses));
    }
    for l in &mut a.loads {
        (l.refs, l.misses) = (up(l.refs), up(l.misses));
    }
    for u in &mut a.worst_utilized {
        (u.fetched_bytes, u.used_bytes) = (up(u.fetched_bytes), up(u.used_bytes));
    }
    a
}
