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

/// An L1 histogram from both estimators: StatStack's distances (`statstack`, from the reuse
/// samples) below the first SHARDS bin a cache of its size is served by SHARDS at its rate
/// (`serves`), SHARDS's scaled distances from there; in full-stream references. The first
/// references are always SHARDS's (the sampled lines over the rate): StatStack's are its
/// dangling samples, the lines' last references, of which a program touching a few thousand
/// lines in 10^7 references has none or a few, each standing for 1000 references (awk's L2
/// model read 0 or 1 from them).
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
    if let Some(c) = cut {
        masses.extend(
            d.bins()
                .filter(|b| b.0 >= c)
                .map(|(lo, hi, w)| (lo, hi - lo + 1, w)),
        );
    }
    L1Histogram::from_masses(d.line_size, d.cold, &masses)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::analysis::Analysis;
    use crate::batch::Batch;
    use crate::reuse::{Options, ShardsAnalysis};

    /// A loop over 1000 lines, twice, at rate 1: 1000 first references, 1000 reuses at stack
    /// distance 999.
    fn loop_twice() -> ShardsDistances {
        let batch: Batch = (0..2000u64)
            .map(|i| Access::load((i % 1000) * 64, 8))
            .collect();
        let mut shards = ShardsAnalysis::new(Options::default());
        shards.observe(&batch);
        shards.finish()
    }

    #[test]
    fn combined_l1_takes_first_references_from_shards() {
        let d = loop_twice();
        assert_eq!((d.refs, d.cold), (2000, 1000.0));
        // Five reuse samples at distance 10 and no dangling one: StatStack alone has no cold.
        let statstack = L1Histogram::from_masses(64, 0.0, &[(10, 1, 5.0)]).unwrap();
        // StatStack everywhere: its masses scaled to the stream's 2000 references, the
        // distinct lines SHARDS's.
        let h = combined_l1(&statstack, &d, |_| false).unwrap();
        assert_eq!(h.cold, 1000.0);
        assert_eq!(h.masses.len(), 1);
        assert_eq!((h.masses[0].sd, h.masses[0].weight), (10, 2000.0));
        // SHARDS from 512 lines: its reuses at 999 beside StatStack's below.
        let h = combined_l1(&statstack, &d, |lines| lines >= 512).unwrap();
        assert_eq!(h.cold, 1000.0);
        let got: Vec<(u64, f64)> = h.masses.iter().map(|m| (m.sd, m.weight)).collect();
        assert_eq!(got, [(10, 2000.0), (999, 1000.0)]);
    }
}
