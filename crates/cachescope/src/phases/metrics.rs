//! How well a clustering of intervals predicts their L2 hit rates (Zwick et al. §4).
//!
//! With `N` intervals, phase `i` holding `n_i` of them, and `μ_i`, `σ_i` the mean and the
//! population standard deviation (divided by `n_i`) of their L2 hit rates:
//!
//! - CoV (Eq. 1, Lau et al.): `Σ_i (σ_i / μ_i) · n_i / N`, a fraction (not a percentage); a
//!   phase with `μ_i = 0` has every hit rate 0 and contributes 0.
//! - weighted σ (Eq. 2, Huffmire & Sherwood): `Σ_i σ_i · n_i / N`, in hit-rate units.
//! - PoEC (Eq. 3, in the reading of docs/definitions.md; the printed equation can never be
//!   positive): the hit rates are clustered into the same number k of classes as the method
//!   (optimal 1-D k-means, `kmeans::kmeans_1d`); the method's clusters are matched one-to-one
//!   to the classes so that the most intervals agree (Hungarian algorithm, `matching`); with
//!   `a` the fraction that agree, `PoEC = (a − 1/k) / (1 − 1/k)` clipped to [0, 1]. For k = 2
//!   this is `2 · (max(a, 1 − a) − 0.5)`. k is the larger of the two labelings' numbers of
//!   clusters (they differ only when one has fewer distinct values than asked for); PoEC is
//!   undefined (`None`) when both have a single cluster.
//!
//! Lower CoV and σ are better; PoEC near 1 is a clustering that follows the hit rates, near 0
//! one no better than chance.

use super::matching::max_weight_matching;

/// Mean and population standard deviation of `xs` (0, 0 when empty).
pub fn mean_std(xs: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = xs.into_iter().collect();
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// `(n_i, μ_i, σ_i)` of the values in each phase `0..k` (k = largest label + 1).
pub fn per_phase(labels: &[usize], values: &[f64]) -> Vec<(usize, f64, f64)> {
    let k = labels.iter().max().map_or(0, |&m| m + 1);
    (0..k)
        .map(|p| {
            let xs: Vec<f64> = labels
                .iter()
                .zip(values)
                .filter(|(l, _)| **l == p)
                .map(|(_, &x)| x)
                .collect();
            let (m, s) = mean_std(xs.iter().copied());
            (xs.len(), m, s)
        })
        .collect()
}

/// Eq. 1: `Σ_i (σ_i / μ_i) · n_i / N` over the phases of `labels`, on `values` (hit rates).
pub fn cov(labels: &[usize], values: &[f64]) -> f64 {
    let n = labels.len() as f64;
    per_phase(labels, values)
        .into_iter()
        .map(|(ni, m, s)| if m == 0.0 { 0.0 } else { s / m * ni as f64 / n })
        .sum()
}

/// Eq. 2: `Σ_i σ_i · n_i / N`.
pub fn sigma_weighted(labels: &[usize], values: &[f64]) -> f64 {
    let n = labels.len() as f64;
    per_phase(labels, values)
        .into_iter()
        .map(|(ni, _, s)| s * ni as f64 / n)
        .sum()
}

/// The fraction of intervals on which `clusters` and `classes` agree under the best one-to-one
/// matching of their labels, and the k it was computed for.
pub fn agreement(clusters: &[usize], classes: &[usize]) -> (f64, usize) {
    debug_assert_eq!(clusters.len(), classes.len());
    let k = clusters.iter().chain(classes).max().map_or(0, |&m| m + 1);
    if clusters.is_empty() {
        return (0.0, k);
    }
    let mut w = vec![vec![0i64; k]; k];
    for (&a, &b) in clusters.iter().zip(classes) {
        w[a][b] += 1;
    }
    let (_, agree) = max_weight_matching(&w);
    (agree as f64 / clusters.len() as f64, k)
}

/// PoEC of a method's `clusters` against the hit-rate `classes` (both labelings `0..k`).
pub fn poec(clusters: &[usize], classes: &[usize]) -> Option<f64> {
    let (a, k) = agreement(clusters, classes);
    if k < 2 {
        return None;
    }
    let chance = 1.0 / k as f64;
    Some(((a - chance) / (1.0 - chance)).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn poec_for_two_phases_is_the_intended_eq_3() {
        // 10 intervals; the method agrees with the classes on `agree` of them (under its
        // labels), so a = agree/10 before matching, and matching takes max(a, 1 − a).
        let classes = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1];
        for agree in 0..=10 {
            let clusters: Vec<usize> = classes
                .iter()
                .enumerate()
                .map(|(i, &c)| if i < agree { c } else { 1 - c })
                .collect();
            let a = agree as f64 / 10.0;
            let want = 2.0 * (a.max(1.0 - a) - 0.5);
            let got = poec(&clusters, &classes).unwrap();
            assert!(close(got, want), "agree {agree}: {got} vs {want}");
        }
        // Identical labelings and swapped labels both give 1.
        assert_eq!(poec(&[0, 1, 1, 0], &[0, 1, 1, 0]), Some(1.0));
        assert_eq!(poec(&[1, 0, 0, 1], &[0, 1, 1, 0]), Some(1.0));
        // One cluster against two classes of 3 and 1: a = 3/4, PoEC = 0.5.
        assert_eq!(poec(&[0, 0, 0, 0], &[0, 0, 1, 0]), Some(0.5));
        // A single cluster and a single class: undefined.
        assert_eq!(poec(&[0, 0], &[0, 0]), None);
    }

    #[test]
    fn poec_for_three_phases_uses_the_best_matching() {
        // Clusters are the classes renamed (0→2, 1→0, 2→1) except one interval.
        let classes = [0, 0, 1, 1, 2, 2];
        let clusters = [2, 2, 0, 0, 1, 0];
        // a = 5/6, PoEC = (5/6 − 1/3) / (2/3) = 3/4.
        assert!(close(poec(&clusters, &classes).unwrap(), 0.75));
        // Chance-level agreement is clipped at 0: a = 1/3 at best.
        assert_eq!(poec(&[0, 1, 2, 0, 1, 2], &[0, 0, 0, 0, 0, 0]), Some(0.0));
    }

    #[test]
    fn cov_and_weighted_sigma_hand_example() {
        // Phase 0: 0.2, 0.4 (μ 0.3, σ 0.1); phase 1: 0.9, 0.9, 0.6 (μ 0.8, σ √0.02).
        let labels = [0, 0, 1, 1, 1];
        let hit = [0.2, 0.4, 0.9, 0.9, 0.6];
        let s1 = 0.02f64.sqrt();
        assert!(close(
            sigma_weighted(&labels, &hit),
            0.1 * 2.0 / 5.0 + s1 * 3.0 / 5.0
        ));
        assert!(close(
            cov(&labels, &hit),
            (0.1 / 0.3) * 2.0 / 5.0 + (s1 / 0.8) * 3.0 / 5.0
        ));
        // One phase of constant hit rates: both 0; a phase of zeros adds nothing to CoV.
        assert_eq!(cov(&[0, 0, 1], &[0.5, 0.5, 0.0]), 0.0);
        assert_eq!(sigma_weighted(&[0, 0], &[0.5, 0.5]), 0.0);
        let (m, s) = mean_std([1.0, 3.0]);
        assert!(close(m, 2.0) && close(s, 1.0));
    }
}
