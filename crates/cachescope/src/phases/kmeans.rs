//! k-means clustering of interval signatures, and the choice of k.
//!
//! - [`kmeans`]: Lloyd's algorithm (MacQueen 1967, the paper's \[10\]) from k-means++ seeding
//!   (Arthur & Vassilvitskii 2007: each next centre drawn with probability ∝ D(x)², the squared
//!   distance to the nearest centre already chosen), run `restarts` times from a seeded
//!   generator; the run with the lowest inertia `Σ |x − μ_label(x)|²` is kept. An empty cluster
//!   is re-seeded with the point farthest from its centre.
//! - [`kmeans_1d`]: for scalar signatures (magnitudes) and for the L2 hit rates, the *optimal*
//!   k-means partition by dynamic programming (Wang & Song 2011, "Ckmeans.1d.dp"): optimal
//!   clusters of sorted values are contiguous, `D[m][j] = min_i D[m−1][i−1] + cost(i, j)` with
//!   `cost` the within-segment sum of squares from prefix sums, and the optimal split index is
//!   monotone in `j`, so each layer is filled by divide and conquer in O(n log n).
//! - [`bic()`] and [`choose_k`]: the Bayesian information criterion of a clustering under a
//!   mixture of spherical Gaussians (Pelleg & Moore 2000, as SimPoint uses it, here with one
//!   variance per cluster), and SimPoint's rule: the smallest k whose BIC is at least 90 % of
//!   the way from the worst to the best.
//!
//! In every result fewer than k clusters are made when there are fewer distinct points, and
//! labels are canonical: cluster 0 holds the first point, cluster 1 the first point not in
//! cluster 0, and so on, so phase ids read in order of first appearance. Generators use only
//! `next_u64` of a [`Pcg64`] seeded through SplitMix64, so a seed gives the same clusters on every
//! platform and `rand` version.

mod bic;
mod lloyd;
mod optimal_1d;

use rand::Rng;
use rand_pcg::Pcg64;

pub use bic::{VARIANCE_FLOOR, bic, choose_k, variance};
use lloyd::lloyd;
pub use optimal_1d::kmeans_1d;

/// Points clustered, their assignment and the cluster centres.
#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// Dimensions per point.
    pub dims: usize,
    /// Cluster of each point, canonical (first appearance order), `0..k`.
    pub labels: Vec<usize>,
    /// Centre of each cluster, `k × dims`, row-major.
    pub centroids: Vec<f64>,
    /// Sum over points of the squared Euclidean distance to their centre.
    pub inertia: f64,
}

impl Clustering {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.centroids.len().checked_div(self.dims).unwrap_or(0)
    }

    /// Centre of cluster `c`.
    pub fn centroid(&self, c: usize) -> &[f64] {
        &self.centroids[c * self.dims..(c + 1) * self.dims]
    }

    /// Points in each cluster.
    pub fn sizes(&self) -> Vec<usize> {
        let mut s = vec![0; self.k()];
        for &l in &self.labels {
            s[l] += 1;
        }
        s
    }

    /// Renumbers clusters in order of first appearance (and drops empty ones).
    fn canonical(mut self) -> Clustering {
        let old_k = self.k();
        let mut map = vec![usize::MAX; old_k];
        let mut next = 0;
        for l in &mut self.labels {
            if map[*l] == usize::MAX {
                map[*l] = next;
                next += 1;
            }
            *l = map[*l];
        }
        let mut centroids = vec![0.0; next * self.dims];
        for (old, &new) in map.iter().enumerate() {
            if new != usize::MAX {
                centroids[new * self.dims..(new + 1) * self.dims]
                    .copy_from_slice(&self.centroids[old * self.dims..(old + 1) * self.dims]);
            }
        }
        self.centroids = centroids;
        self
    }
}

/// Settings of a k-means run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KMeansConfig {
    /// Independent k-means++ runs; the lowest inertia wins. At least 1.
    pub restarts: u32,
    /// Lloyd iterations per run at most.
    pub max_iterations: u32,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for KMeansConfig {
    fn default() -> KMeansConfig {
        KMeansConfig {
            restarts: 10,
            max_iterations: 100,
            seed: 1,
        }
    }
}

fn seeded(seed: u64) -> Pcg64 {
    crate::rng::seeded(seed, 0x6b6d_6561_6e73)
}

use crate::rng::unit;

/// Squared Euclidean distance. Eight partial sums, added in a fixed order: one running sum
/// is a chain of dependent additions the compiler may not reorder (floating point), which
/// made the 1024-dimension setvectors' clustering most of the phases' time after the pass;
/// eight chains vectorise. The order is fixed, so the result is the same on every run.
#[inline]
fn dist2(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            let d = x[i] - y[i];
            acc[i] += d * d;
        }
    }
    let mut tail = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        tail += (x - y) * (x - y);
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// [`dist2`], or `None` once it is sure to be at least `bound`: every 128 dimensions the eight
/// partial sums are combined in [`dist2`]'s order, and since rounding is monotone and every
/// term is ≥ 0, the full distance is at least that. A point is then dropped from a centre
/// exactly when [`dist2`] would not have beaten `bound`, so clusters do not change.
#[inline]
fn dist2_below(a: &[f64], b: &[f64], bound: f64) -> Option<f64> {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let combine = |acc: &[f64; 8]| {
        ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
    };
    for (j, (x, y)) in ca.zip(cb).enumerate() {
        for i in 0..8 {
            let d = x[i] - y[i];
            acc[i] += d * d;
        }
        if j % 16 == 15 && combine(&acc) >= bound {
            return None;
        }
    }
    let mut tail = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        tail += (x - y) * (x - y);
    }
    Some(combine(&acc) + tail)
}

/// Number of distinct points (bitwise equal rows count once).
pub fn distinct_points(points: &[f64], dims: usize) -> usize {
    if dims == 0 {
        return 0;
    }
    // Rows compared bit by bit where they lie: a sort by a copied key per row held a second
    // copy of the points (20 MB of setvectors on a 336 M-record trace, the report's peak).
    let mut rows: Vec<&[f64]> = points.chunks_exact(dims).collect();
    let order = |a: &[f64], b: &[f64]| {
        a.iter()
            .map(|x| x.to_bits())
            .cmp(b.iter().map(|x| x.to_bits()))
    };
    rows.sort_unstable_by(|a, b| order(a, b));
    rows.dedup_by(|a, b| order(a, b).is_eq());
    rows.len()
}

/// Clusters the `n = points.len() / dims` points of `points` (row-major) into at most `k`
/// clusters by k-means++ and Lloyd's algorithm, keeping the best of `config.restarts` runs.
pub fn kmeans(points: &[f64], dims: usize, k: usize, config: &KMeansConfig) -> Clustering {
    assert!(dims > 0 && points.len() % dims == 0);
    let n = points.len() / dims;
    let k = k.min(distinct_points(points, dims));
    if k == 0 {
        return Clustering {
            dims,
            labels: Vec::new(),
            centroids: Vec::new(),
            inertia: 0.0,
        };
    }
    let mut rng = seeded(config.seed);
    let mut best: Option<Clustering> = None;
    for _ in 0..config.restarts.max(1) {
        let c = lloyd(points, dims, n, k, config.max_iterations, &mut rng);
        if best.as_ref().is_none_or(|b| c.inertia < b.inertia) {
            best = Some(c);
        }
    }
    best.expect("at least one run").canonical()
}

/// k-means++ seeding: `k` centres, `k` ≤ distinct points, and each point's nearest of them
/// (the first on a tie), its distance and the next least: the distances the seeding measures
/// are Lloyd's first assignment's, so they are kept rather than measured again.
fn plus_plus(points: &[f64], dims: usize, n: usize, k: usize, rng: &mut Pcg64) -> Seeding {
    let row = |i: usize| &points[i * dims..(i + 1) * dims];
    let first = ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize;
    let mut centroids = row(first).to_vec();
    let mut d2: Vec<f64> = (0..n).map(|i| dist2(row(i), row(first))).collect();
    let (mut nearest, mut second) = (vec![0; n], vec![f64::INFINITY; n]);
    while centroids.len() < k * dims {
        let total: f64 = d2.iter().sum();
        // total > 0 while fewer centres than distinct points are chosen.
        let target = unit(rng) * total;
        let mut acc = 0.0;
        let mut pick = None;
        for (i, &d) in d2.iter().enumerate() {
            if d > 0.0 {
                pick = Some(i);
                acc += d;
                if acc > target {
                    break;
                }
            }
        }
        let Some(p) = pick else { break };
        let c = centroids.len() / dims;
        centroids.extend_from_slice(row(p));
        for (i, d) in d2.iter_mut().enumerate() {
            let e = dist2(row(i), row(p));
            if e < *d {
                (second[i], nearest[i], *d) = (*d, c, e);
            } else if e < second[i] {
                second[i] = e;
            }
        }
    }
    Seeding {
        centroids,
        nearest,
        d2,
        second,
    }
}

/// What [`plus_plus`] gives: the centres, and for each point its nearest centre, the squared
/// distance to it and to the next nearest (infinite with one centre).
struct Seeding {
    centroids: Vec<f64>,
    nearest: Vec<usize>,
    d2: Vec<f64>,
    second: Vec<f64>,
}

#[cfg(test)]
mod tests;
