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

#[test]
fn distance_agrees_with_one_running_sum_at_every_length() {
    // Lengths around the eight-lane chunks, values whose squares are exact in binary, so the
    // two summation orders must agree to the bit.
    for n in 0..40usize {
        let a: Vec<f64> = (0..n).map(|i| (i * 7 % 13) as f64 * 0.5).collect();
        let b: Vec<f64> = (0..n).map(|i| (i * 5 % 11) as f64 * 0.25).collect();
        let naive: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
        assert_eq!(dist2(&a, &b), naive, "length {n}");
    }
}

proptest::proptest! {
    /// The count of bitwise-distinct rows, against a set of copied rows (a naive count), on
    /// rows drawn from a few values so that duplicates are common; 0.0 and -0.0 differ.
    #[test]
    fn distinct_points_counts_bitwise_distinct_rows(
        dims in 1usize..6,
        picks in proptest::collection::vec(0usize..4, 0..120),
    ) {
        let values = [0.0, -0.0, 1.5, f64::MAX];
        let pts: Vec<f64> = picks.iter().map(|&i| values[i]).collect();
        let pts = &pts[..pts.len() / dims * dims];
        let naive: std::collections::HashSet<Vec<u64>> = pts
            .chunks_exact(dims)
            .map(|r| r.iter().map(|x| x.to_bits()).collect())
            .collect();
        proptest::prop_assert_eq!(distinct_points(pts, dims), naive.len());
    }
}

proptest::proptest! {
    /// The early-exit distance is the full one to the bit, or `None` only when the full one
    /// is at least the bound, so Lloyd's assignments are those of [`dist2`].
    #[test]
    fn bounded_distance_is_exact_or_at_least_the_bound(
        pairs in proptest::collection::vec((-1e3f64..1e3, -1e3f64..1e3), 0..700),
        fraction in 0.0f64..1.5,
    ) {
        let (a, b): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let full = dist2(&a, &b);
        let bound = full * fraction;
        match dist2_below(&a, &b, bound) {
            Some(d) => proptest::prop_assert_eq!(d.to_bits(), full.to_bits()),
            None => proptest::prop_assert!(full >= bound),
        }
        proptest::prop_assert_eq!(
            dist2_below(&a, &b, f64::INFINITY).map(f64::to_bits),
            Some(full.to_bits())
        );
    }
}

/// Plain Lloyd (no bounds): the reference the bounded one must equal bit for bit.
fn plain_lloyd(
    points: &[f64],
    dims: usize,
    n: usize,
    k: usize,
    max_iterations: u32,
    rng: &mut Pcg64,
) -> Clustering {
    let row = |i: usize| &points[i * dims..(i + 1) * dims];
    let mut centroids = plus_plus(points, dims, n, k, rng).centroids;
    let k = centroids.len() / dims;
    let mut labels = vec![usize::MAX; n];
    let mut dist = vec![0.0; n];
    let (mut sums, mut counts) = (vec![0.0; k * dims], vec![0usize; k]);
    let mut converged = false;
    for _ in 0..max_iterations.max(1) {
        let mut changed = false;
        for i in 0..n {
            let (mut bl, mut bd) = (0, f64::INFINITY);
            for c in 0..k {
                let centre = &centroids[c * dims..(c + 1) * dims];
                if let Some(d) = dist2_below(row(i), centre, bd)
                    && d < bd
                {
                    (bl, bd) = (c, d);
                }
            }
            changed |= labels[i] != bl;
            labels[i] = bl;
            dist[i] = bd;
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
    // Final assignment against the final centres; after convergence the last one is it.
    let mut inertia = 0.0;
    for (i, label) in labels.iter_mut().enumerate() {
        if converged {
            inertia += dist[i];
            continue;
        }
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
    Clustering {
        dims,
        labels,
        centroids,
        inertia,
    }
    .canonical()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Hamerly's bounds change nothing: labels, centres and inertia bit for bit, on points
    /// in a few blobs (many skipped) and with duplicates (empty clusters re-seeded).
    #[test]
    fn bounded_lloyd_equals_plain_lloyd(
        raw in proptest::collection::vec((0u8..4, -1e3f64..1e3), 1..400),
        dims in 1usize..12,
        k in 1usize..6,
        seed in 0u64..1000,
        iterations in 1u32..30,
    ) {
        let points: Vec<f64> = raw
            .iter()
            .map(|&(blob, x)| f64::from(blob) * 5e3 + (x / 64.0).round())
            .collect();
        let n = points.len() / dims;
        let points = &points[..n * dims];
        proptest::prop_assume!(n > 0);
        let k = k.min(distinct_points(points, dims));
        proptest::prop_assume!(k > 0);
        let (mut a, mut b) = (seeded(seed), seeded(seed));
        let bounded = lloyd(points, dims, n, k, iterations, &mut a);
        let plain = plain_lloyd(points, dims, n, k, iterations, &mut b);
        proptest::prop_assert_eq!(&bounded.labels, &plain.labels);
        proptest::prop_assert_eq!(bounded.inertia.to_bits(), plain.inertia.to_bits());
        let bits = |c: &Clustering| c.centroids.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        proptest::prop_assert_eq!(bits(&bounded), bits(&plain));
    }
}
