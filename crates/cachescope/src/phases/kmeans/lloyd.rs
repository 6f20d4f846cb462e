//! Lloyd's iterations with Hamerly's bounds (Hamerly 2010, "Making k-means even faster"):
//! each point keeps an upper bound on its distance to its own centre and a lower bound on its
//! distance to every other, moved by how far the centres moved; a point whose bounds part is
//! not measured again. The first assignment is k-means++'s own: its seeding measured every
//! point's distance to every centre already. The sampled report clusters ~13 K intervals
//! (bzip2 -9 of 2 MB) of up to 256 values ten times per method after the pass: a quarter
//! of cachescope's own CPU time in `report --sampled -- bzip2` before (`perf record`).
//!
//! The clusters are bit for bit those of plain Lloyd (the reference in the tests): a point is
//! skipped only when its bounds part by a relative margin far above the rounding of the
//! distances (about `dims · ε`), so plain Lloyd's comparison of the computed distances would
//! keep its label too; the bounds are widened by that margin at every move, so that rounding
//! cannot make them cross; the distance a skipped point's inertia needs is measured again at
//! the end with the same arithmetic ([`dist2`]); an empty cluster (re-seeded from the
//! distances to the centres) first measures every skipped point, then drops the bounds.

use rand_pcg::Pcg64;

use super::{Clustering, dist2, dist2_below, plus_plus};

/// Relative margin of the bounds: rounding of a distance over `d` dimensions is about
/// `d · 1.1e-16` relative, far below it for any signature a report clusters.
const SLACK: f64 = 1e-9;

/// One k-means++ seeding followed by Lloyd iterations (at most `max_iterations`).
pub(super) fn lloyd(
    points: &[f64],
    dims: usize,
    n: usize,
    k: usize,
    max_iterations: u32,
    rng: &mut Pcg64,
) -> Clustering {
    let row = |i: usize| &points[i * dims..(i + 1) * dims];
    let seeding = plus_plus(points, dims, n, k, rng);
    let mut centroids = seeding.centroids;
    let k = centroids.len() / dims;
    // The first assignment is the seeding's (the same distances): every label changes from
    // none, so the first iteration moves on to the update.
    let mut labels = seeding.nearest;
    let mut dist = seeding.d2;
    // Bounds on the distance (not squared) to the own centre and to any other; `fresh`: `dist`
    // was measured against the current centres.
    let mut upper: Vec<f64> = dist.iter().map(|d| d.sqrt()).collect();
    let mut lower: Vec<f64> = seeding.second.iter().map(|d| d.sqrt()).collect();
    let mut fresh = vec![true; n];
    let mut seeded = true;
    let (mut sums, mut counts) = (vec![0.0; k * dims], vec![0usize; k]);
    let mut old = vec![0.0; k * dims];
    let mut converged = false;
    for _ in 0..max_iterations.max(1) {
        // The first assignment is the seeding's: every label is new.
        let first = std::mem::take(&mut seeded);
        let mut changed = first;
        for i in 0..if first { 0 } else { n } {
            if upper[i] * (1.0 + SLACK) < lower[i] * (1.0 - SLACK) {
                fresh[i] = false;
                continue;
            }
            // Plain Lloyd's choice: the first centre of least computed distance.
            let (mut bl, mut bd, mut second) = (0, f64::INFINITY, f64::INFINITY);
            for (c, centre) in centroids.chunks_exact(dims).enumerate() {
                let d = dist2(row(i), centre);
                if d < bd {
                    (second, bl, bd) = (bd, c, d);
                } else if d < second {
                    second = d;
                }
            }
            changed |= labels[i] != bl;
            (labels[i], dist[i], fresh[i]) = (bl, bd, true);
            (upper[i], lower[i]) = (bd.sqrt(), second.sqrt());
        }
        if !changed {
            converged = true;
            break;
        }
        sums.fill(0.0);
        counts.fill(0);
        for i in 0..n {
            counts[labels[i]] += 1;
            for (s, x) in sums[labels[i] * dims..].iter_mut().zip(row(i)) {
                *s += x;
            }
        }
        let reseed = counts.contains(&0);
        if reseed {
            refresh(&mut dist, &mut fresh, &labels, &centroids, points, dims);
        }
        old.copy_from_slice(&centroids);
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
        if reseed {
            upper.fill(f64::INFINITY);
            continue;
        }
        let moved: Vec<f64> = old
            .chunks_exact(dims)
            .zip(centroids.chunks_exact(dims))
            .map(|(a, b)| dist2(a, b).sqrt())
            .collect();
        // The largest move, and the largest of the others (what a point of that centre's
        // nearest other centre can have moved).
        let (mut top, mut first, mut next) = (0, 0.0f64, 0.0f64);
        for (c, &m) in moved.iter().enumerate() {
            if m > first {
                (next, top, first) = (first, c, m);
            } else if m > next {
                next = m;
            }
        }
        for i in 0..n {
            let own = moved[labels[i]];
            let other = if labels[i] == top { next } else { first };
            upper[i] = (upper[i] + own) * (1.0 + SLACK) + own * SLACK;
            lower[i] = (lower[i] - other) * (1.0 - SLACK) - other * SLACK;
        }
    }
    let mut inertia = 0.0;
    if converged {
        refresh(&mut dist, &mut fresh, &labels, &centroids, points, dims);
        for d in &dist {
            inertia += d;
        }
    } else {
        // Final assignment against the final centres.
        for (i, label) in labels.iter_mut().enumerate() {
            let (mut bl, mut bd) = (0, f64::INFINITY);
            for (c, centre) in centroids.chunks_exact(dims).enumerate() {
                if let Some(d) = dist2_below(row(i), centre, bd)
                    && d < bd
                {
                    (bl, bd) = (c, d);
                }
            }
            *label = bl;
            inertia += bd;
        }
    }
    Clustering {
        dims,
        labels,
        centroids,
        inertia,
    }
    .canonical()
}

/// Measures the distance of every skipped point to its centre (as plain Lloyd has it).
fn refresh(
    dist: &mut [f64],
    fresh: &mut [bool],
    labels: &[usize],
    centroids: &[f64],
    points: &[f64],
    dims: usize,
) {
    for (i, ok) in fresh.iter_mut().enumerate().filter(|(_, ok)| !**ok) {
        let c = labels[i];
        dist[i] = dist2(
            &points[i * dims..(i + 1) * dims],
            &centroids[c * dims..(c + 1) * dims],
        );
        *ok = true;
    }
}
