//! StatStack: LRU miss ratios from the same sampled reuse distances as StatCache (Eklöv &
//! Hagersten, *StatStack: efficient modeling of LRU caches*, ISPASS 2010; the formula as fixed
//! in `shared/LOCALITY.md`).
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
//! each reuse with `E[sd | d] ≥ C`. A binary search in the sorted expectations answers each size
//! in O(log S). Stack distances are lines (`shared/LOCALITY.md`); `C` = `size / line_size`.
//!
//! ## Cold misses and the curve
//! Dangling samples always enter `P(RT > u)` (they are real forward reuse times, ∞). With
//! [`Cold::Exclude`] they are not misses: `miss_ratio_warm(C) = #{reuse samples with E[sd] ≥ C}
//! / S`, misses per counted reference with cold misses left out (the paper's per-reuse ratio
//! times `1 − d`, see [`crate::sampling`]). [`Cold::Estimate`] adds each dangling sample as one
//! cold miss: `miss_ratio = miss_ratio_warm + D/S`. Curves have method `statstack`, policy
//! `lru`. The model uses the whole-trace distribution (no time slots, as in the paper).
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

/// The StatStack miss-ratio curve of `profile` at `sizes_bytes` (each cache holds
/// `size / line_size` lines, rounded down): method `statstack`, policy `lru`, ratios per
/// counted reference as in the [module documentation](self). Errors when the profile has no
/// sample.
pub fn mrc(profile: &Profile, sizes_bytes: &[u64], cold: Cold) -> Result<Mrc> {
    profile.expect_samples()?;
    let samples = profile.samples().len() as f64;
    let dangling = profile.dangling() as f64;
    let e = expected_stack_distances(&profile.histogram(), dangling);
    let at_least = suffix_weights(&e);
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
    Ok(Mrc {
        method: "statstack".into(),
        policy: "lru".into(),
        line_size,
        points,
    })
}

#[cfg(test)]
mod tests;
