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
//! - [`bic`] and [`choose_k`]: the Bayesian information criterion of a clustering under a
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
mod optimal_1d;

use rand::Rng;
use rand_pcg::Pcg64;

pub use bic::{VARIANCE_FLOOR, bic, choose_k, variance};
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

/// SplitMix64's output function, to spread a small seed over the PCG state.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn seeded(seed: u64) -> Pcg64 {
    let hi = splitmix64(seed);
    let lo = splitmix64(seed ^ 0x5851_f42d_4c95_7f2d);
    Pcg64::new((u128::from(hi) << 64) | u128::from(lo), 0x6b6d_6561_6e73)
}

/// Uniform in [0, 1) with 53 random bits.
fn unit(rng: &mut Pcg64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[inline]
fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Number of distinct points (bitwise equal rows count once).
pub fn distinct_points(points: &[f64], dims: usize) -> usize {
    if dims == 0 {
        return 0;
    }
    let mut rows: Vec<&[f64]> = points.chunks_exact(dims).collect();
    let key = |r: &[f64]| r.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    rows.sort_by_cached_key(|r| key(r));
    rows.dedup_by(|a, b| key(a) == key(b));
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

/// k-means++ seeding: `k` centres, `k` ≤ distinct points.
fn plus_plus(points: &[f64], dims: usize, n: usize, k: usize, rng: &mut Pcg64) -> Vec<f64> {
    let row = |i: usize| &points[i * dims..(i + 1) * dims];
    let first = ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize;
    let mut centroids = row(first).to_vec();
    let mut d2: Vec<f64> = (0..n).map(|i| dist2(row(i), row(first))).collect();
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
        centroids.extend_from_slice(row(p));
        for (i, d) in d2.iter_mut().enumerate() {
            *d = d.min(dist2(row(i), row(p)));
        }
    }
    centroids
}

/// One k-means++ seeding followed by Lloyd iterations.
fn lloyd(
    points: &[f64],
    dims: usize,
    n: usize,
    k: usize,
    max_iterations: u32,
    rng: &mut Pcg64,
) -> Clustering {
    let row = |i: usize| &points[i * dims..(i + 1) * dims];
    let mut centroids = plus_plus(points, dims, n, k, rng);
    let k = centroids.len() / dims;
    let mut labels = vec![usize::MAX; n];
    let mut dist = vec![0.0; n];
    for _ in 0..max_iterations.max(1) {
        let mut changed = false;
        for i in 0..n {
            let (mut bl, mut bd) = (0, f64::INFINITY);
            for c in 0..k {
                let d = dist2(row(i), &centroids[c * dims..(c + 1) * dims]);
                if d < bd {
                    (bl, bd) = (c, d);
                }
            }
            changed |= labels[i] != bl;
            labels[i] = bl;
            dist[i] = bd;
        }
        if !changed {
            break;
        }
        let mut sums = vec![0.0; k * dims];
        let mut counts = vec![0usize; k];
        for i in 0..n {
            counts[labels[i]] += 1;
            for (s, x) in sums[labels[i] * dims..].iter_mut().zip(row(i)) {
                *s += x;
            }
        }
        for c in 0..k {
            let centre = &mut centroids[c * dims..(c + 1) * dims];
            if counts[c] == 0 {
                // Re-seed an empty cluster with the point farthest from its centre.
                let far = (0..n)
                    .max_by(|&a, &b| dist[a].total_cmp(&dist[b]))
                    .expect("n ≥ k ≥ 1");
                centre.copy_from_slice(row(far));
                dist[far] = 0.0;
            } else {
                for (m, s) in centre.iter_mut().zip(&sums[c * dims..]) {
                    *m = s / counts[c] as f64;
                }
            }
        }
    }
    // Final assignment against the final centres.
    let mut inertia = 0.0;
    for (i, label) in labels.iter_mut().enumerate() {
        let (mut bl, mut bd) = (0, f64::INFINITY);
        for (c, centre) in centroids.chunks_exact(dims).enumerate() {
            let d = dist2(row(i), centre);
            if d < bd {
                (bl, bd) = (c, d);
            }
        }
        *label = bl;
        inertia += bd;
    }
    Clustering {
        dims,
        labels,
        centroids,
        inertia,
    }
    .canonical()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every way to cut sorted distinct values into k contiguous groups: the minimum
    /// within-group sum of squares.
    fn brute_1d(values: &[f64], k: usize) -> f64 {
        let mut s = values.to_vec();
        s.sort_by(f64::total_cmp);
        s.dedup();
        let n = s.len();
        let k = k.min(n);
        let counts: Vec<usize> = s
            .iter()
            .map(|x| values.iter().filter(|v| *v == x).count())
            .collect();
        let mut best = f64::INFINITY;
        // Cut positions: bitmask over the n - 1 gaps with exactly k - 1 cuts.
        for mask in 0u32..(1 << (n - 1)) {
            if mask.count_ones() as usize != k - 1 {
                continue;
            }
            let mut total = 0.0;
            let mut start = 0;
            for end in 1..=n {
                if end == n || mask & (1 << (end - 1)) != 0 {
                    let w: f64 = counts[start..end].iter().map(|&c| c as f64).sum();
                    let m: f64 = (start..end).map(|i| s[i] * counts[i] as f64).sum::<f64>() / w;
                    total += (start..end)
                        .map(|i| counts[i] as f64 * (s[i] - m) * (s[i] - m))
                        .sum::<f64>();
                    start = end;
                }
            }
            best = best.min(total);
        }
        best
    }

    #[test]
    fn one_dimension_hand_example() {
        let c = kmeans_1d(&[10.0, 1.0, 2.0, 11.0, 1.0, 30.0], 3);
        assert_eq!(c.labels, [0, 1, 1, 0, 1, 2]);
        for (m, want) in c.centroids.iter().zip([10.5, 4.0 / 3.0, 30.0]) {
            assert!((m - want).abs() < 1e-12, "{m} {want}");
        }
        assert!((c.inertia - (0.5 + 2.0 / 3.0)).abs() < 1e-12);
        // Fewer distinct values than k: one cluster per value.
        let c = kmeans_1d(&[5.0, 5.0, 7.0], 4);
        assert_eq!((c.k(), c.labels.clone()), (2, vec![0, 0, 1]));
        assert_eq!(kmeans_1d(&[], 3).k(), 0);
    }

    proptest! {
        #[test]
        fn one_dimension_is_optimal(values in prop::collection::vec(0u8..40, 1..11), k in 1usize..5) {
            let v: Vec<f64> = values.iter().map(|&x| f64::from(x) / 4.0).collect();
            let c = kmeans_1d(&v, k);
            let brute = brute_1d(&v, k);
            prop_assert!((c.inertia - brute).abs() < 1e-9, "{} vs {}", c.inertia, brute);
            // Each point sits with the nearest centre (optimal clusters are Voronoi cells).
            for (x, &l) in v.iter().zip(&c.labels) {
                let d = (x - c.centroids[l]).abs();
                for m in 0..c.k() {
                    prop_assert!(d <= (x - c.centroids[m]).abs() + 1e-9);
                }
            }
            // Lloyd never beats the optimum.
            let l = kmeans(&v, 1, k, &KMeansConfig::default());
            prop_assert!(l.inertia >= c.inertia - 1e-9);
        }
    }

    /// Three planted 2-D blobs: k-means recovers them exactly from every seed.
    #[test]
    fn kmeans_finds_planted_blobs() {
        let centres = [(0.0, 0.0), (10.0, 0.0), (5.0, 9.0)];
        let mut rng = seeded(99);
        let mut points = Vec::new();
        let mut truth = Vec::new();
        for i in 0..300 {
            let b = (i * 7) % 3;
            let (cx, cy) = centres[b];
            points.push(cx + unit(&mut rng) - 0.5);
            points.push(cy + unit(&mut rng) - 0.5);
            truth.push(b);
        }
        for seed in 0..5 {
            let c = kmeans(
                &points,
                2,
                3,
                &KMeansConfig {
                    seed,
                    ..KMeansConfig::default()
                },
            );
            // Canonical labels follow first appearance: blob 0, then 1, then 2.
            assert_eq!(c.labels, truth, "seed {seed}");
            for (b, &(cx, cy)) in centres.iter().enumerate() {
                let m = c.centroid(b);
                assert!(
                    (m[0] - cx).abs() < 0.15 && (m[1] - cy).abs() < 0.15,
                    "{m:?}"
                );
            }
        }
        // The same seed gives the same clustering.
        let cfg = KMeansConfig {
            seed: 3,
            restarts: 2,
            max_iterations: 50,
        };
        assert_eq!(kmeans(&points, 2, 5, &cfg), kmeans(&points, 2, 5, &cfg));
    }

    #[test]
    fn bic_rule_picks_the_planted_number_of_blobs() {
        let mut rng = seeded(5);
        for planted in [2usize, 3, 4] {
            let mut points = Vec::new();
            for i in 0..400 {
                let b = i % planted;
                points.push(b as f64 * 20.0 + unit(&mut rng) * 2.0);
                points.push((b * b) as f64 * 7.0 + unit(&mut rng) * 2.0);
            }
            let var = variance(&points, 2);
            let scores: Vec<f64> = (1..=8)
                .map(|k| {
                    bic(
                        &points,
                        &kmeans(&points, 2, k, &KMeansConfig::default()),
                        var,
                    )
                })
                .collect();
            assert_eq!(choose_k(&scores) + 1, planted, "{scores:?}");
        }
    }

    #[test]
    fn duplicates_and_empty_input() {
        let pts = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0];
        let c = kmeans(&pts, 2, 5, &KMeansConfig::default());
        assert_eq!(
            (c.k(), c.labels.clone(), c.inertia),
            (2, vec![0, 0, 1], 0.0)
        );
        assert_eq!(distinct_points(&pts, 1), 2);
        assert_eq!(kmeans(&[], 3, 2, &KMeansConfig::default()).k(), 0);
    }
}
