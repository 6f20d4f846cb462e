//! Time-local expected stack distances: each reuse sample's window summed over the stretches
//! it crosses, each stretch with its own reuse-time distribution.

use std::ops::Range;

use super::Segment;
use crate::error::{Error, Result};
use crate::sampling::{Profile, Sample};

/// The reuse-time distribution of one stretch: `G(y) = Σ_{x=0}^{y−1} P(RT > x) = E[min(RT, y)]`
/// over its samples (dangling ones ∞), from the sorted finite reuse times and their prefix sums.
struct Survival {
    times: Vec<u64>,
    prefix: Vec<f64>,
    samples: f64,
}

impl Survival {
    fn new(samples: &[Sample]) -> Survival {
        let mut times: Vec<u64> = samples.iter().filter_map(|s| s.distance()).collect();
        times.sort_unstable();
        let mut prefix = Vec::with_capacity(times.len() + 1);
        let mut sum = 0.0;
        prefix.push(0.0);
        for t in &mut times {
            *t += 1;
            sum += *t as f64;
            prefix.push(sum);
        }
        Survival {
            times,
            prefix,
            samples: samples.len() as f64,
        }
    }

    /// `E[min(RT, y)]`.
    fn g(&self, y: u64) -> f64 {
        let below = self.times.partition_point(|&t| t <= y);
        (self.prefix[below] + y as f64 * (self.samples - below as f64)) / self.samples
    }
}

/// Checks that `segments` is a cover of `profile` as [`segments`](super::segments) and [`segments_at`](super::segments_at) make.
fn check(profile: &Profile, segments: &[Segment]) -> Result<()> {
    let samples = profile.samples();
    let (mut next_ref, mut next_sample) = (1, 0);
    for (i, g) in segments.iter().enumerate() {
        let ok = g.first == next_ref
            && g.last >= g.first
            && g.samples.start == next_sample
            && g.samples.end > g.samples.start
            && g.samples.end <= samples.len()
            && samples[g.samples.clone()]
                .iter()
                .all(|s| (g.first..=g.last).contains(&s.position));
        if !ok {
            return Err(Error::InvalidParameter {
                name: "segments",
                message: format!(
                    "segment {i} ({}..={}, samples {:?}) does not continue the cover at \
                     reference {next_ref}, sample {next_sample}, with at least one sample",
                    g.first, g.last, g.samples
                ),
            });
        }
        next_ref = g.last + 1;
        next_sample = g.samples.end;
    }
    if next_ref != profile.refs() + 1 || next_sample != samples.len() {
        return Err(Error::InvalidParameter {
            name: "segments",
            message: format!(
                "they end at reference {} and sample {next_sample}, not {} and {}",
                next_ref - 1,
                profile.refs(),
                samples.len()
            ),
        });
    }
    Ok(())
}

/// The time-local expected stack distance of every sample of `profile` over `segments` (a
/// cover from [`segments`](super::segments) or [`segments_at`](super::segments_at)), in sample order: `Some(E[sd])` for a reuse
/// sample, `None` for a dangling one. A reuse sampled at `j` with `d` references in between
/// (window `j+1..=e`, `e = j + d`) adds, for each stretch `s` its window meets:
/// - in the stretch of `j + 1` and the stretch of `e`, covering `lo..=hi`:
///   `Σ_{v=lo}^{hi} P_s(RT > e − v) = G_s(e − lo + 1) − G_s(e − hi)`;
/// - in each stretch strictly between them, all of it: `refs(s)·P_s(v + RT > e)`, the
///   fraction of the stretch's samples whose line is next referenced after `e`.
///
/// With one stretch this is [`expected_stack_distances`](super::super::expected_stack_distances) of
/// the whole profile. O(S·log S) for `S` samples, whatever the number of stretches. Errors
/// when `segments` is not such a cover.
pub fn local_stack_distances(profile: &Profile, segments: &[Segment]) -> Result<Vec<Option<f64>>> {
    check(profile, segments)?;
    let samples = profile.samples();
    let survival: Vec<Survival> = segments
        .iter()
        .map(|g| Survival::new(&samples[g.samples.clone()]))
        .collect();
    let stretch_of = |position: u64| segments.partition_point(|g| g.last < position);
    let mut out: Vec<Option<f64>> = Vec::with_capacity(samples.len());
    // Whole stretches crossed: (e, sample range, output index), answered below.
    let mut queries: Vec<(u64, Range<usize>, usize)> = Vec::new();
    for s in samples {
        let Some(d) = s.distance() else {
            out.push(None);
            continue;
        };
        if d == 0 {
            out.push(Some(0.0));
            continue;
        }
        let (j, e) = (s.position, s.position + d);
        let (a, b) = (stretch_of(j + 1), stretch_of(e));
        let sd = if a == b {
            survival[a].g(d)
        } else {
            let head = survival[a].g(e - j) - survival[a].g(e - segments[a].last);
            let tail = survival[b].g(e - segments[b].first + 1);
            if b > a + 1 {
                let range = segments[a + 1].samples.start..segments[b - 1].samples.end;
                queries.push((e, range, out.len()));
            }
            head + tail
        };
        out.push(Some(sd));
    }
    if !queries.is_empty() {
        // Each sample weighs refs(s) / samples(s) of its stretch; a query sums the weights of
        // the samples in its range whose next reference is after e. Offline: queries by
        // decreasing e, samples entering a Fenwick tree by decreasing next reference.
        let mut weight = vec![0.0; samples.len()];
        for g in segments {
            let w = g.refs() as f64 / g.samples.len() as f64;
            weight[g.samples.clone()].fill(w);
        }
        let next_ref = |s: &Sample| s.distance().map_or(u64::MAX, |d| s.position + d + 1);
        let mut order: Vec<usize> = (0..samples.len()).collect();
        order.sort_unstable_by_key(|&k| std::cmp::Reverse(next_ref(&samples[k])));
        queries.sort_unstable_by_key(|q| std::cmp::Reverse(q.0));
        let mut tree = Fenwick::new(samples.len());
        let mut entered = 0;
        for (e, range, at) in queries {
            while entered < order.len() && next_ref(&samples[order[entered]]) > e {
                let k = order[entered];
                tree.add(k, weight[k]);
                entered += 1;
            }
            let sum = tree.prefix(range.end) - tree.prefix(range.start);
            if let Some(sd) = &mut out[at] {
                *sd += sum.max(0.0);
            }
        }
    }
    Ok(out)
}

/// Prefix sums of `f64` weights with point updates, O(log n) each.
struct Fenwick {
    tree: Vec<f64>,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            tree: vec![0.0; n + 1],
        }
    }

    fn add(&mut self, i: usize, w: f64) {
        let mut i = i + 1;
        while i < self.tree.len() {
            self.tree[i] += w;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of the weights at `0..i`.
    fn prefix(&self, i: usize) -> f64 {
        let (mut i, mut sum) = (i, 0.0);
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }
}
