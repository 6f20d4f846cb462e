//! The choice of k: the Bayesian information criterion of a clustering and SimPoint's rule
//! (see the parent module).

use super::{Clustering, dist2};

/// Variances below this fraction of the data's variance (per dimension) count as this much:
/// spreads under 1 % of the data's standard deviation are not told apart. Without a floor a
/// cluster of identical signatures (common: every loop interval has the same setvector) has an
/// infinite likelihood, and any split that isolates such points looks infinitely good.
pub const VARIANCE_FLOOR: f64 = 1e-4;

/// BIC of clustering `c` of `points` under a mixture of spherical Gaussians, one variance per
/// cluster (the X-means criterion of Pelleg & Moore 2000 with cluster-specific variances; the
/// shared-variance form favours splitting the one noisy cluster as soon as the others are
/// tight). With R points in M dimensions and cluster n holding `R_n` points with
/// within-cluster sum of squares `S_n`, `σ_n² = max(S_n / (M R_n), floor)`:
///
/// `ln L = Σ_n [ R_n ln(R_n / R) − (R_n M / 2) ln(2π σ_n²) − S_n / (2 σ_n²) ]`,
/// `BIC = ln L − (p / 2) ln R`, `p = (K − 1) + K M + K` free parameters,
///
/// with `floor` = [`VARIANCE_FLOOR`] × `data_variance` (see [`variance`]). Higher is better.
pub fn bic(points: &[f64], c: &Clustering, data_variance: f64) -> f64 {
    let dims = c.dims;
    let m = dims as f64;
    let r = c.labels.len() as f64;
    let k = c.k();
    if k == 0 || r == 0.0 {
        return f64::NEG_INFINITY;
    }
    let floor = (data_variance * VARIANCE_FLOOR).max(f64::MIN_POSITIVE);
    let mut ss = vec![0.0; k];
    for (row, &l) in points.chunks_exact(dims).zip(&c.labels) {
        ss[l] += dist2(row, c.centroid(l));
    }
    let loglik: f64 = c
        .sizes()
        .iter()
        .zip(&ss)
        .filter(|(n, _)| **n > 0)
        .map(|(&n, &s)| {
            let rn = n as f64;
            let var = (s / (m * rn)).max(floor);
            rn * (rn / r).ln()
                - rn * m / 2.0 * (2.0 * std::f64::consts::PI * var).ln()
                - s / (2.0 * var)
        })
        .sum();
    let params = (k as f64 - 1.0) + k as f64 * m + k as f64;
    loglik - params / 2.0 * r.ln()
}

/// Per-dimension variance of `points` about their mean (the one-cluster σ²).
pub fn variance(points: &[f64], dims: usize) -> f64 {
    let n = points.len() / dims.max(1);
    if n == 0 {
        return 0.0;
    }
    let mut mean = vec![0.0; dims];
    for r in points.chunks_exact(dims) {
        for (m, x) in mean.iter_mut().zip(r) {
            *m += x / n as f64;
        }
    }
    points
        .chunks_exact(dims)
        .map(|r| dist2(r, &mean))
        .sum::<f64>()
        / (n * dims) as f64
}

/// SimPoint's choice among candidate clusterings (in increasing k, with their BIC scores): the
/// first whose score is at least `min + 0.9 (max − min)`. Returns its index.
pub fn choose_k(scores: &[f64]) -> usize {
    let finite: Vec<f64> = scores.iter().copied().filter(|s| s.is_finite()).collect();
    if finite.is_empty() {
        return 0;
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let bar = lo + 0.9 * (hi - lo);
    scores
        .iter()
        .position(|&s| s.is_finite() && s >= bar)
        .unwrap_or(0)
}
