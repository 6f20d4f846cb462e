//! StatStack: LRU miss ratios from the same sampled reuse distances as StatCache (Eklöv &
//! Hagersten, *StatStack: efficient modeling of LRU caches*, ISPASS 2010; the formula as fixed
//! in docs/definitions.md). [`mrc`] is the time-local version described below, which takes
//! the reuse-time distribution from the stretch of the trace each reference lies in;
//! [`mrc_whole_trace`], [`expected_stack_distances`] and [`miss_ratios`] are the paper's model,
//! with one distribution for the whole trace.
//!
//! ## Expected stack distances
//! A reuse with `d` references in between (StatCache distance `d`; reuse time `d + 1`) has
//! stack distance `sd` = the distinct other lines among those `d` references. The reference
//! `u` positions before the end of the window adds a line that is not counted yet iff its own
//! *forward* reuse time `RT` (the distance to its line's next reference, ∞ for a line's last
//! reference) exceeds `u`; taking expectations over the sampled forward reuse times,
//!
//! ```text
//! E[sd | d] = Σ_{u=0}^{d−1} P(RT > u) = E[min(RT, d)]
//! ```
//!
//! Every sample measures one forward reuse time: `RT = k + 1` for a reuse sample with StatCache
//! distance `k`, `RT = ∞` for a dangling one. So with samples sorted by `k`, `E[sd | d]` is one
//! prefix sum: `(Σ_{k_s + 1 ≤ d} (k_s + 1) + d·#{k_s + 1 > d or dangling}) / S`, and all of them
//! come in one sweep: O(S log S) for `S` samples. `E[sd | d]` grows with `d`.
//!
//! ## Miss ratio
//! A fully-associative LRU cache of `C` lines hits iff `sd < C`; StatStack predicts a miss for
//! each reuse with `E[sd] ≥ C`. A binary search in the sorted expectations answers each size
//! in O(log S). Stack distances are lines (docs/definitions.md); `C` = `size / line_size`.
//!
//! ## Time-local StatStack (the default, [`mrc`])
//! The formula above assumes that every reference of the trace draws its forward reuse time
//! from one distribution. Programs run in phases, and then it is systematically off however
//! many samples there are (gzip, 18 M references: 1.5 pp mean error at 10k and at 100k
//! samples; a hash table filled then probed: 2.1 pp; see the table below). Written per
//! position, the reading of docs/definitions.md is: a reuse sampled at `j` whose line comes
//! back at `i = j + d + 1` has the window `j+1 ..= e`, `e = i − 1`, and the reference at `v`
//! in it adds a distinct line iff its own next reference falls after the window, `RT_v > e − v`
//! (`v = e − u` above). So exactly `sd = Σ_{v=j+1}^{e} [RT_v > e − v]` and
//!
//! ```text
//! E[sd] = Σ_{v=j+1}^{e} P(RT_v > e − v)        (= Σ_{u=0}^{d−1} P(RT > u) if P does not depend on v)
//! ```
//!
//! (`RT_v ≥ i − v`, not `> i − v`: the last reference of the window, `v = i − 1`, always adds
//! its line.) The time-local model estimates `P(RT_v > x)` from the samples taken near `v`:
//!
//! - **Stretches** ([`segments`]). The trace is cut into stretches that each have one
//!   reuse-time distribution, found from the samples alone (the profile's fixed time slots are
//!   not used): start from blocks of 50 consecutive samples, give each sample a class (its
//!   reuse time among the octiles of all sampled reuse times, or dangling), and merge adjacent
//!   stretches, the most alike pair first, while the likelihood-ratio statistic of their class
//!   counts, `2·(ℓ(a) + ℓ(b) − ℓ(a ∪ b))`, is at most `λ·(k − 1)·ln n` (`n` samples, `k` classes
//!   seen; `λ = 1` is the Bayesian information criterion). Stationary traces end as one
//!   stretch, and then the model *is* the whole-trace one; a phase change, a short burst (a
//!   few tens of samples that differ strongly), or the end of the trace, where lines take
//!   their last references, stays apart. Cuts fall halfway between samples.
//! - **The sum over a window.** With `G_s(y) = Σ_{x=0}^{y−1} P_s(RT > x) = E_s[min(RT, y)]` over
//!   the samples of stretch `s` (sorted reuse times and prefix sums, O(log) per value):
//!   - window inside one stretch: `G_s(d)`, the whole-trace formula on that stretch;
//!   - the stretch of `j + 1` (covering `j+1..=hi`) and the stretch of `e` (covering `lo..=e`):
//!     `Σ_{v=lo}^{hi} P_s(RT > e − v) = G_s(e − lo + 1) − G_s(e − hi)`;
//!   - each stretch strictly inside the window: `refs(s)·P_s(v + RT_v > e)`, the fraction of its
//!     samples whose line is next referenced after `e`. This is the same sum for a stretch
//!     with one distribution and needs no stationarity inside the stretch; being a count of
//!     samples by position and next reference, it is answered for all windows at once by
//!     one sweep over `e` with a Fenwick tree, whatever the number of stretches crossed
//!     ([`local_stack_distances`]).
//! - **Dangling samples** are `RT = ∞`, which is exact inside the trace, not a censored
//!   value: every window ends by `n`, and a line with no later reference is distinct in every
//!   window that holds its last reference. Treating them as censored at their age
//!   (Kaplan–Meier) was measured: no change to the time-local model (the end of the trace
//!   is its own stretch), and in the whole-trace model it only moves the curve near the
//!   footprint of a uniform random trace; it is not used.
//!
//! Cost, for `S` samples: O(S log S) for the classes and the sorts, O(B log B · classes) to
//! merge `B = S/50` blocks, O(S log S) for the expected stack distances (O(log S) per window
//! whatever its length: the number of stretches never enters), then O(log S) per cache
//! size. Measured on one core (Xeon, 161 sizes, profiles of gzip, hash, mm and python):
//! 0.5–1 ms at 10k samples, 13–18 ms at 100k, 0.55–0.7 s at 2 M; the whole-trace model takes
//! at most 0.1, 1 and 40 ms.
//!
//! Accuracy, mean absolute error of `miss_ratio_warm` in percentage points over every eighth
//! of an octave from 1 KiB to the footprint, against exact LRU, mean of 5 seeds
//! (`examples/accuracy`, lackey traces of real programs and synthetic workloads):
//!
//! | trace | 1k samples: whole trace → time-local | 10k | 100k |
//! |---|---|---|---|
//! | gzip | 1.92 → 1.59 | 1.58 → 0.54 | 1.51 → 0.31 |
//! | hash | 2.71 → 0.99 | 2.18 → 0.34 | 2.13 → 0.10 |
//! | sqlite | 0.47 → 0.47 | 0.35 → 0.22 | 0.37 → 0.15 |
//! | python | 0.55 → 0.52 | 0.41 → 0.21 | 0.39 → 0.13 |
//! | bzip2 | 0.70 → 0.79 | 0.54 → 0.23 | 0.49 → 0.15 |
//! | phases (synthetic) | 3.93 → 0.78 | 3.63 → 0.22 | 3.65 → 0.10 |
//! | awk, sort, xz, mm, zipf, random, matmul-tiled, stencil | 0.32–1.13, each within 0.04 | 0.08–0.36, within 0.01 | 0.02–0.16, within 0.03 |
//!
//! At 1k samples the stretches of a phased program hold few samples each, and bzip2 loses a
//! little (0.70 → 0.79); shrinking each stretch towards the whole trace (pseudo-counts) did not
//! help. Tried and not kept: the profile's fixed 200k-reference slots as stretches (10k samples:
//! 0.37 pp on average, 0.83 worst; 1k samples: up to 3.3 pp, since a slot then holds a few
//! samples); `λ = 0.5` (a little better on the phased programs, but it splits regular loop
//! nests on chance differences and moves their cliffs: matmul-tiled at 1k samples 0.45 →
//! 0.59); coarser stretches for the inside of long windows (no change). What remains is
//! mostly the StatStack approximation itself, `E[sd]` in place of `sd` (stencil's 6.5 pp at 16
//! lines with any number of samples), and, with millions of samples, stretches so short on
//! regular loop nests that a long window's estimate rests on the few samples inside it (mm
//! at 2 M samples: 0.10 pp against 0.03 for the whole-trace model).
//! [`mrc_whole_trace`] keeps the paper's model.
//!
//! ## Cold misses and the curve
//! Dangling samples always enter `P(RT > x)` (they are real forward reuse times, ∞). With
//! [`Cold::Exclude`] they are not misses: `miss_ratio_warm(C) = #{reuse samples with E[sd] ≥ C}
//! / S`, misses per counted reference with cold misses left out (the paper's per-reuse ratio
//! times `1 − d`, see [`crate::sampling`]). [`Cold::Estimate`] adds each dangling sample as one
//! cold miss: `miss_ratio = miss_ratio_warm + D/S`. Curves have method `statstack`, policy
//! `lru`, for both models.
//!
//! ```
//! use cachescope::models::statstack;
//!
//! // A loop over 100 lines: every reuse has 99 references in between, all of them distinct.
//! let hist = [(99, 1000.0)];
//! let e = statstack::expected_stack_distances(&hist, 100.0);
//! assert_eq!(e, [(99.0, 1000.0)]);
//! let m = statstack::miss_ratios(&hist, 0.0, &[99.0, 100.0]);
//! assert_eq!(m, [1.0, 0.0]); // misses at 99 lines, hits at 100
//! ```

mod local;

pub use local::{Segment, Segmentation, local_stack_distances, segments, segments_at};

use crate::error::Result;
use crate::reuse::{Mrc, MrcPoint};
pub use crate::sampling::Cold;
use crate::sampling::Profile;

/// The expected stack distance `E[sd | d]` of each entry of `hist` ((StatCache distance `d`,
/// weight) pairs, any order, weights ≥ 0), with `dangling` more forward reuse times of ∞:
/// (expected stack distance in lines, weight), sorted by distance, so the expectations
/// increase. Empty when the total weight is 0.
pub fn expected_stack_distances(hist: &[(u64, f64)], dangling: f64) -> Vec<(f64, f64)> {
    let mut sorted = hist.to_vec();
    sorted.sort_unstable_by_key(|&(k, _)| k);
    let total = sorted.iter().map(|&(_, w)| w).sum::<f64>() + dangling;
    if total <= 0.0 {
        return Vec::new();
    }
    // Σ w·RT over samples with RT ≤ d, and the weight of those with RT > d (dangling included).
    let mut below = 0.0;
    let mut above = total;
    let mut p = 0;
    sorted
        .iter()
        .map(|&(d, w)| {
            while p < sorted.len() && sorted[p].0 < d {
                let (k, wk) = sorted[p];
                below += wk * (k + 1) as f64;
                above -= wk;
                p += 1;
            }
            ((below + d as f64 * above) / total, w)
        })
        .collect()
}

/// StatStack miss ratios for caches of each of `lines` lines (any order, any real `C`): per
/// unit of total weight `N + D`, the weight of reuses with `E[sd | d] ≥ C` plus `dangling`
/// (counted as cold misses; pass 0 for warm misses per reuse). `hist` and `dangling` as in
/// [`expected_stack_distances`]. All 0 when the total weight is 0.
pub fn miss_ratios(hist: &[(u64, f64)], dangling: f64, lines: &[f64]) -> Vec<f64> {
    let e = expected_stack_distances(hist, dangling);
    let total = e.iter().map(|&(_, w)| w).sum::<f64>() + dangling;
    if total <= 0.0 {
        return vec![0.0; lines.len()];
    }
    let at_least = suffix_weights(&e);
    lines
        .iter()
        .map(|&c| (at_least[e.partition_point(|&(sd, _)| sd < c)] + dangling) / total)
        .collect()
}

/// `out[i]` = total weight of `e[i..]` (one more entry, 0, at the end).
fn suffix_weights(e: &[(f64, f64)]) -> Vec<f64> {
    let mut out = vec![0.0; e.len() + 1];
    for i in (0..e.len()).rev() {
        out[i] = out[i + 1] + e[i].1;
    }
    out
}

/// The time-local StatStack miss-ratio curve of `profile` at `sizes_bytes` (each cache holds
/// `size / line_size` lines, rounded down), with the default [`Segmentation`]: method
/// `statstack`, policy `lru`, ratios per counted reference as in the
/// [module documentation](self). Errors when the profile has no sample.
pub fn mrc(profile: &Profile, sizes_bytes: &[u64], cold: Cold) -> Result<Mrc> {
    mrc_with(profile, sizes_bytes, cold, &Segmentation::default())
}

/// [`mrc`] with the stretches of `segmentation`.
pub fn mrc_with(
    profile: &Profile,
    sizes_bytes: &[u64],
    cold: Cold,
    segmentation: &Segmentation,
) -> Result<Mrc> {
    let e = local_distances(profile, segmentation)?;
    Ok(curve(profile, &e, sizes_bytes, cold))
}

/// The reuse samples' stack distances behind [`mrc_with`], ascending, weight 1 each: each
/// reuse's time-local expected distance over the stretches of `segmentation`, or its exact
/// distance where the sampler measured its window. Errors when the profile has no sample.
pub fn local_distances(profile: &Profile, segmentation: &Segmentation) -> Result<Vec<(f64, f64)>> {
    profile.expect_samples()?;
    let stretches = segments(profile, segmentation);
    // filter_map, not flatten: collected in place, in the distances' own allocation (16
    // bytes a sample either way), not beside it (13 MB on 800 K samples).
    // A reuse whose window the sampler measured takes its exact distance (a short reuse at a
    // sharp cliff, where the estimate is biased: `sampling::Windows`).
    let mut e: Vec<(f64, f64)> = local_stack_distances(profile, &stretches)?
        .into_iter()
        .zip(profile.samples())
        .filter_map(|(sd, s)| {
            let measured = || profile.measured_distance(s.position).map(|m| m as f64);
            sd.map(|sd| (measured().unwrap_or(sd), 1.0))
        })
        .collect();
    e.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    Ok(e)
}

/// The paper's StatStack curve, from the whole-trace reuse-time distribution (one stretch):
/// as [`mrc`] otherwise.
pub fn mrc_whole_trace(profile: &Profile, sizes_bytes: &[u64], cold: Cold) -> Result<Mrc> {
    profile.expect_samples()?;
    let e = expected_stack_distances(&profile.histogram(), profile.dangling() as f64);
    Ok(curve(profile, &e, sizes_bytes, cold))
}

/// The curve of the reuse samples' expected stack distances `e` (sorted, weight 1 each).
fn curve(profile: &Profile, e: &[(f64, f64)], sizes_bytes: &[u64], cold: Cold) -> Mrc {
    let samples = profile.samples().len() as f64;
    let dangling = profile.dangling() as f64;
    let at_least = suffix_weights(e);
    let line_size = profile.line_size().bytes();
    let points = sizes_bytes
        .iter()
        .map(|&size_bytes| {
            let lines = size_bytes / line_size;
            let c = lines as f64;
            let warm = at_least[e.partition_point(|&(sd, _)| sd < c)] / samples;
            MrcPoint {
                size_bytes,
                lines,
                miss_ratio: (cold == Cold::Estimate).then_some(warm + dangling / samples),
                miss_ratio_warm: warm,
            }
        })
        .collect();
    Mrc {
        method: "statstack".into(),
        policy: "lru".into(),
        line_size,
        points,
    }
}

#[cfg(test)]
mod tests;
