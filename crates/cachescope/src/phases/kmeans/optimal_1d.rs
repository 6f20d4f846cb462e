//! Optimal k-means of scalar values by dynamic programming (Wang & Song 2011,
//! "Ckmeans.1d.dp"): see the parent module.

use super::Clustering;

/// The optimal k-means partition of scalar `values` into at most `k` clusters (exact, by
/// dynamic programming over the distinct sorted values weighted by multiplicity).
pub fn kmeans_1d(values: &[f64], k: usize) -> Clustering {
    // Distinct values with multiplicities, centred on the mean for precision.
    let n = values.len();
    let mean = if n == 0 {
        0.0
    } else {
        values.iter().sum::<f64>() / n as f64
    };
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut xs: Vec<f64> = Vec::new();
    let mut ws: Vec<f64> = Vec::new();
    for &v in &sorted {
        if xs
            .last()
            .is_some_and(|&l: &f64| l.to_bits() == (v - mean).to_bits())
        {
            *ws.last_mut().expect("pushed with xs") += 1.0;
        } else {
            xs.push(v - mean);
            ws.push(1.0);
        }
    }
    let d = xs.len();
    let k = k.min(d);
    if k == 0 {
        return Clustering {
            dims: 1,
            labels: Vec::new(),
            centroids: Vec::new(),
            inertia: 0.0,
        };
    }
    // Prefix sums of weights, w·x and w·x².
    let mut pw = vec![0.0; d + 1];
    let mut p1 = vec![0.0; d + 1];
    let mut p2 = vec![0.0; d + 1];
    for i in 0..d {
        pw[i + 1] = pw[i] + ws[i];
        p1[i + 1] = p1[i] + ws[i] * xs[i];
        p2[i + 1] = p2[i] + ws[i] * xs[i] * xs[i];
    }
    // Within-cluster sum of squares of distinct values i..=j.
    let cost = |i: usize, j: usize| -> f64 {
        let w = pw[j + 1] - pw[i];
        let s = p1[j + 1] - p1[i];
        (p2[j + 1] - p2[i] - s * s / w).max(0.0)
    };
    let mut prev: Vec<f64> = (0..d).map(|j| cost(0, j)).collect();
    // split[m][j]: first index of the last cluster in the best m+1-cluster split of 0..=j.
    let mut split: Vec<Vec<u32>> = vec![vec![0; d]];
    for m in 1..k {
        let mut cur = vec![f64::INFINITY; d];
        let mut arg = vec![0u32; d];
        fill_layer(m, m, d - 1, m, d - 1, &prev, &cost, &mut cur, &mut arg);
        prev = cur;
        split.push(arg);
    }
    // Walk back: cluster boundaries over distinct values.
    let mut first_of = vec![0usize; k];
    let mut j = d - 1;
    for m in (0..k).rev() {
        let i = split[m][j] as usize;
        first_of[m] = i;
        if m > 0 {
            j = i - 1;
        }
    }
    let cluster_of_distinct = |idx: usize| first_of.partition_point(|&f| f <= idx) - 1;
    let mut centroids = vec![0.0; k];
    for (m, c) in centroids.iter_mut().enumerate() {
        let hi = if m + 1 < k {
            first_of[m + 1] - 1
        } else {
            d - 1
        };
        let lo = first_of[m];
        *c = (p1[hi + 1] - p1[lo]) / (pw[hi + 1] - pw[lo]) + mean;
    }
    let labels: Vec<usize> = values
        .iter()
        .map(|&v| {
            let x = v - mean;
            let idx = xs.partition_point(|&y| y.total_cmp(&x).is_lt());
            cluster_of_distinct(idx)
        })
        .collect();
    let inertia = values
        .iter()
        .zip(&labels)
        .map(|(&v, &l)| (v - centroids[l]) * (v - centroids[l]))
        .sum();
    Clustering {
        dims: 1,
        labels,
        centroids,
        inertia,
    }
    .canonical()
}

/// Fills `cur[j]` for `j` in `lo..=hi` of layer `m` (m + 1 clusters), knowing the optimal split
/// lies in `opt_lo..=opt_hi` (monotone in `j`).
#[allow(clippy::too_many_arguments)]
fn fill_layer(
    m: usize,
    lo: usize,
    hi: usize,
    opt_lo: usize,
    opt_hi: usize,
    prev: &[f64],
    cost: &dyn Fn(usize, usize) -> f64,
    cur: &mut [f64],
    arg: &mut [u32],
) {
    if lo > hi {
        return;
    }
    let mid = (lo + hi) / 2;
    let (mut best, mut best_i) = (f64::INFINITY, opt_lo.max(m));
    for i in opt_lo.max(m)..=opt_hi.min(mid) {
        let c = prev[i - 1] + cost(i, mid);
        if c < best {
            (best, best_i) = (c, i);
        }
    }
    cur[mid] = best;
    arg[mid] = best_i as u32;
    if mid > lo {
        fill_layer(m, lo, mid - 1, opt_lo, best_i, prev, cost, cur, arg);
    }
    fill_layer(m, mid + 1, hi, best_i, opt_hi, prev, cost, cur, arg);
}
