//! Every signature against a brute-force construction from its definition.

// Matrix code reads best with indices.
#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;
use crate::access::LineSize;
use crate::sim::Geometry;

/// Byte addresses drawn from a few hundred lines, cut into intervals at `cuts`.
fn intervals_of(addrs: &[u64], cuts: &[usize]) -> Vec<Vec<u64>> {
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c % (addrs.len() + 1)).collect();
    bounds.push(0);
    bounds.push(addrs.len());
    bounds.sort_unstable();
    bounds
        .windows(2)
        .map(|w| addrs[w[0]..w[1]].to_vec())
        .collect()
}

proptest! {
    #[test]
    fn setvectors_match_brute_force(
        raw in prop::collection::vec(0u64..4096, 0..600),
        cuts in prop::collection::vec(0usize..700, 0..5),
        bits in 1u32..=8,
    ) {
        // 2 KiB, 2-way, 32-byte lines: 32 sets; addresses over 128 lines.
        let g = Geometry::new(2048, 2, 32).unwrap();
        let addrs: Vec<u64> = raw.iter().map(|a| a * 3).collect();
        let ivs = intervals_of(&addrs, &cuts);
        let mut s = Setvectors::new(g, bits, true);
        for iv in &ivs {
            // Push in two pieces: state carries over within an interval.
            let (a, b) = iv.split_at(iv.len() / 2);
            s.push(a);
            s.push(b);
            s.end_interval();
        }
        for (i, iv) in ivs.iter().enumerate() {
            let mut per_set: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
            for &a in iv {
                per_set.entry((a / 32) % 32).or_default().insert(a / 32);
            }
            let want: Vec<u8> = (0..32)
                .map(|set| per_set.get(&set).map_or(0, |l| l.len().min((1 << bits) - 1)) as u8)
                .collect();
            prop_assert_eq!(s.vector(i).unwrap(), &want[..]);
            let mag = want.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
            prop_assert!((s.magnitudes()[i] - mag).abs() < 1e-9);
        }
    }

    #[test]
    fn activity_vectors_match_brute_force(
        raw in prop::collection::vec(0u64..1 << 20, 0..400),
        cuts in prop::collection::vec(0usize..500, 0..4),
        groups_log in 0u32..8,
    ) {
        // 64 KiB, 4-way, 64-byte lines: 256 sets.
        let g = Geometry::new(65536, 4, 64).unwrap();
        let groups = 1u64 << groups_log;
        let ivs = intervals_of(&raw, &cuts);
        let mut a = ActivityVectors::new(g, groups);
        for iv in &ivs {
            a.push(iv);
            a.end_interval();
        }
        for (i, iv) in ivs.iter().enumerate() {
            let mut want = vec![0u32; groups as usize];
            for &x in iv {
                let set = (x / 64) % 256;
                want[(set * groups / 256) as usize] += 1;
            }
            prop_assert_eq!(a.vector(i).unwrap(), &want[..]);
        }
    }

    #[test]
    fn reuse_histograms_match_a_naive_lru_stack(
        raw in prop::collection::vec(0u64..64, 1..400),
        cuts in prop::collection::vec(0usize..500, 0..4),
    ) {
        let addrs: Vec<u64> = raw.iter().map(|l| l * 64 + 5).collect();
        let ivs = intervals_of(&addrs, &cuts);
        let mut r = ReuseHistograms::new(LineSize::new(64).unwrap());
        for iv in &ivs {
            r.push(iv);
            r.end_interval();
        }
        // Naive LRU stack over the whole trace (not reset between intervals).
        let mut stack: Vec<u64> = Vec::new();
        for (i, iv) in ivs.iter().enumerate() {
            let mut counts = [0u64; REUSE_BINS];
            for &a in iv {
                let line = a / 64;
                let sd = stack.iter().rposition(|&l| l == line).map(|p| (stack.len() - 1 - p) as u64);
                if let Some(p) = stack.iter().position(|&l| l == line) {
                    stack.remove(p);
                }
                stack.push(line);
                counts[reuse_bin(sd)] += 1;
            }
            let n = iv.len().max(1) as f64;
            let want: Vec<f32> = counts.iter().map(|&c| (c as f64 / n) as f32).collect();
            prop_assert_eq!(r.histogram(i).unwrap(), &want[..]);
        }
    }

    #[test]
    fn wavelet_image_is_the_box_scaled_400_row_histogram(
        raw in prop::collection::vec(any::<u64>(), 0..300),
        modulo in prop::sample::select(vec![16u64, 1000, 16384, 48 << 10, 1 << 20]),
    ) {
        let mut w = WaveletImages::new(modulo, 1);
        for (i, chunk) in raw.chunks(19).enumerate() {
            w.push(chunk, i % SIDE);
        }
        // Huffmire & Sherwood: m = ⌊(a mod M)·400/M⌋, 400 rows, then 25 rows per output row.
        let mut big = vec![[0u64; SIDE]; 400];
        for (i, chunk) in raw.chunks(19).enumerate() {
            for &a in chunk {
                big[((u128::from(a % modulo) * 400) / u128::from(modulo)) as usize][i % SIDE] += 1;
            }
        }
        let img = w.image();
        for r in 0..SIDE {
            for c in 0..SIDE {
                let want: u64 = (25 * r..25 * r + 25).map(|m| big[m][c]).sum();
                prop_assert_eq!(img[r][c], want as f64);
            }
        }
    }

    #[test]
    fn svd_reconstructs_and_is_orthogonal(cells in prop::collection::vec(0u32..50, 256)) {
        let mut m: Image = [[0.0; SIDE]; SIDE];
        for (i, &x) in cells.iter().enumerate() {
            // Sparse-ish, as address images are.
            m[i / SIDE][i % SIDE] = if x < 30 { 0.0 } else { f64::from(x) };
        }
        let (sigma, us, vs) = svd(&m);
        let scale = sigma[0].max(1.0);
        for r in 0..SIDE {
            for c in 0..SIDE {
                let back: f64 = (0..SIDE).map(|j| us[j][r] * vs[j][c]).sum();
                prop_assert!((back - m[r][c]).abs() < 1e-9 * scale, "{back} vs {}", m[r][c]);
            }
        }
        for j in 0..SIDE {
            prop_assert!(j == 0 || sigma[j] <= sigma[j - 1]);
            let norm: f64 = us[j].iter().map(|x| x * x).sum::<f64>().sqrt();
            prop_assert!((norm - sigma[j]).abs() < 1e-9 * scale);
            for l in 0..j {
                let dot_u: f64 = (0..SIDE).map(|i| us[j][i] * us[l][i]).sum();
                let dot_v: f64 = (0..SIDE).map(|i| vs[j][i] * vs[l][i]).sum();
                prop_assert!(dot_u.abs() < 1e-9 * scale * scale);
                prop_assert!(dot_v.abs() < 1e-9);
            }
        }
    }
}

#[test]
fn haar_hand_examples() {
    // A constant: only the average, 16/√16 = 4.
    let mut x = [1.0; SIDE];
    haar_1d(&mut x);
    assert!((x[0] - 4.0).abs() < 1e-12);
    assert!(x[1..].iter().all(|c| c.abs() < 1e-12));
    // Alternating ±1: only the finest details, each 2/√2 = √2.
    let mut x: [f64; SIDE] = std::array::from_fn(|i| if i % 2 == 0 { 1.0 } else { -1.0 });
    haar_1d(&mut x);
    assert!(x[..8].iter().all(|c| c.abs() < 1e-12));
    assert!(x[8..].iter().all(|c| (c - 2f64.sqrt()).abs() < 1e-12));
    // A step: first half 1, second half 0 → average 2, coarsest detail 2.
    let mut x: [f64; SIDE] = std::array::from_fn(|i| if i < 8 { 1.0 } else { 0.0 });
    haar_1d(&mut x);
    assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12);
    assert!(x[2..].iter().all(|c| c.abs() < 1e-12));
}

#[test]
fn haar_2d_preserves_energy_and_puts_the_mean_top_left() {
    let m: Image = std::array::from_fn(|r| std::array::from_fn(|c| ((r * 7 + c * 3) % 11) as f64));
    let h = haar_2d(&m);
    let energy = |a: &Image| a.iter().flatten().map(|x| x * x).sum::<f64>();
    assert!((energy(&m) - energy(&h)).abs() < 1e-9 * energy(&m));
    let sum: f64 = m.iter().flatten().sum();
    assert!((h[0][0] - sum / 16.0).abs() < 1e-9);
    // Weights: bin min(max(i, j), 5).
    assert_eq!(haar_weight(0, 0), 5.00);
    assert_eq!(haar_weight(0, 1), 0.83);
    assert_eq!(haar_weight(3, 2), 0.52);
    assert_eq!(haar_weight(15, 0), 0.30);
}

#[test]
fn svd_of_a_rank_one_image() {
    // m = a bᵀ: σ₁ = |a||b|, σ₁u₁ = a|b| (positive), the rest 0.
    let a: [f64; SIDE] = std::array::from_fn(|i| (i % 5) as f64);
    let b: [f64; SIDE] = std::array::from_fn(|i| 1.0 + (i % 3) as f64);
    let m: Image = std::array::from_fn(|r| std::array::from_fn(|c| a[r] * b[c]));
    let (sigma, us, _) = svd(&m);
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((sigma[0] - na * nb).abs() < 1e-9);
    assert!(sigma[1..].iter().all(|s| s.abs() < 1e-9));
    for i in 0..SIDE {
        assert!((us[0][i] - a[i] * nb).abs() < 1e-9);
    }
}

#[test]
fn wavelet_signatures_are_stored_per_interval() {
    let mut w = WaveletImages::new(16384, 2);
    // Interval 0: every reference in row 0, column 0; interval 1: empty.
    w.push(&[0, 64, 128, 1 << 20], 0);
    w.end_interval();
    w.end_interval();
    assert_eq!(w.coefficients().len(), 512);
    assert_eq!(w.svd_signatures().len(), 64);
    // A single pixel of 4: the 2-D transform is 4·c_i·c_j with c the 1-D transform of a unit
    // impulse at 0 (1/4 for the average and the coarsest detail, then 1/√8, 1/2, 1/√2, 0…).
    let mut c = [0.0; SIDE];
    c[0] = 1.0;
    haar_1d(&mut c);
    let s8 = 8f64.sqrt().recip();
    let impulse = [0.25, 0.25, s8, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5f64.sqrt()];
    for (i, want) in impulse.iter().enumerate() {
        assert!((c[i] - want).abs() < 1e-12, "{i}: {}", c[i]);
    }
    for i in 0..SIDE {
        for j in 0..SIDE {
            let want = 4.0 * c[i] * c[j] * haar_weight(i, j);
            assert!((f64::from(w.coefficients()[i * SIDE + j]) - want).abs() < 1e-6);
        }
    }
    // σ₁u₁ is the pixel's column: 4 at row 0.
    assert_eq!(w.svd_signatures()[0], 4.0);
    assert!(w.coefficients()[256..].iter().all(|&c| c == 0.0));
}

proptest! {
    #[test]
    fn interval_set_matches_a_hash_set(
        ops in prop::collection::vec((0u64..20_000, prop::bool::weighted(0.001)), 0..20_000),
    ) {
        // Lines spread over a range that makes the set grow past its initial 4096 slots.
        let mut s = super::setvector::IntervalSet::new();
        let mut naive = std::collections::HashSet::new();
        for (line, clear) in ops {
            if clear {
                s.clear();
                naive.clear();
            }
            // Line 0 stands for u64::MAX, the line stored apart.
            let line = if line == 0 { u64::MAX } else { line * 7919 };
            s.touch(&[line]);
            prop_assert_eq!(s.insert(line), naive.insert(line));
            prop_assert_eq!(s.len(), naive.len());
        }
    }
}

/// The sampled magnitude of `lines` (line numbers, one interval) at `rate`, squared.
fn sampled_square(g: Geometry, lines: &[u64], rate: f64) -> f64 {
    let shift = g.line_size().shift();
    let addrs: Vec<u64> = lines.iter().map(|l| l << shift).collect();
    let mut s = Setvectors::new(g, 8, false).sampled(rate);
    s.push(&addrs);
    s.end_interval();
    s.magnitudes()[0].powi(2)
}

/// Every subset of 7 lines over 2 sets (5 in one, 2 in the other), each the sample of a
/// stream whose lines are kept with probability `R` independently: the expected squared
/// magnitude is `R²·Σ N_s²` (here `R²·29`); the plain magnitude's is `R(1 − R)·7` more.
#[test]
fn sampled_setvector_magnitudes_are_unbiased_by_brute_force() {
    let g = Geometry::new(256, 2, 64).unwrap(); // 2 sets
    let lines = [0u64, 2, 4, 6, 8, 1, 3];
    for rate in [0.1f64, 0.3, 0.5, 0.9] {
        let (mut debiased, mut plain) = (0.0, 0.0);
        for mask in 0u32..1 << lines.len() {
            let kept: Vec<u64> = (0..lines.len())
                .filter(|&i| mask >> i & 1 == 1)
                .map(|i| lines[i])
                .collect();
            let k = kept.len() as i32;
            let p = rate.powi(k) * (1.0 - rate).powi(lines.len() as i32 - k);
            let d = sampled_square(g, &kept, rate);
            // Each set's term c·(c − 1 + R) is never negative.
            assert!(d >= 0.0);
            debiased += p * d;
            plain += p * sampled_square(g, &kept, 1.0);
        }
        let want = rate * rate * 29.0;
        assert!(
            (debiased - want).abs() < 1e-9,
            "rate {rate}: {debiased} vs {want}"
        );
        let noise = rate * (1.0 - rate) * 7.0;
        assert!((plain - want - noise).abs() < 1e-9, "rate {rate}: {plain}");
    }
}

/// At rate 1 the sampled setvectors are the plain ones, to the bit.
#[test]
fn sampled_setvectors_at_rate_one_are_the_plain_ones() {
    let g = Geometry::new(2048, 2, 32).unwrap();
    let addrs: Vec<u64> = (0..3000u64).map(|i| (i * 2_654_435_761) % 40_000).collect();
    let (mut a, mut b) = (
        Setvectors::new(g, 5, false),
        Setvectors::new(g, 5, false).sampled(1.0),
    );
    for part in addrs.chunks(700) {
        a.push(part);
        a.end_interval();
        b.push(part);
        b.end_interval();
    }
    assert_eq!(a.magnitudes(), b.magnitudes());
}

/// The case of awk's seed 2 at rate 0.01 (docs/accuracy/sampled.md), by hand: in the
/// miniature L2 (8 sets of 20 ways) 950 intervals of the bulk hold 0 or 1 sampled line
/// (alternately), 3 cold intervals 3 sampled lines in every set. The plain magnitudes are 0, 1
/// and √72; 2-means on their scale splits the bulk (its two halves cost 950/4 around one
/// centre, the cold intervals less beside the ones). The sampled magnitudes are 0, √0.01 and
/// √(8·(9 − 2.97)): the bulk's spread is a hundredth, and the 3 cold intervals are the phase.
#[test]
fn sampled_magnitudes_keep_a_noisy_bulk_together() {
    use crate::phases::kmeans::kmeans_1d;
    let g = Geometry::new(8 * 20 * 64, 20, 64).unwrap();
    let cold: Vec<u64> = (0..24u64).map(|i| 1000 + i).collect(); // 3 lines per set
    let run = |rate: f64| {
        let mut s = Setvectors::new(g, 8, false).sampled(rate);
        for i in 0..953u64 {
            if (300..303).contains(&i) {
                s.push(&cold.iter().map(|l| l << 6).collect::<Vec<_>>());
            } else if i % 2 == 1 {
                s.push(&[(i % 8) << 6]);
            }
            s.end_interval();
        }
        let unit = full_magnitude(20, 8);
        let m: Vec<f64> = s.magnitudes().iter().map(|&m| log_scale(m, unit)).collect();
        (s.magnitudes().to_vec(), kmeans_1d(&m, 2).labels)
    };
    let (plain, labels) = run(1.0);
    assert_eq!((plain[0], plain[1]), (0.0, 1.0));
    assert!((plain[300] - 72f64.sqrt()).abs() < 1e-12);
    // The plain magnitudes: the empty intervals apart from the rest.
    assert_ne!(labels[0], labels[1]);
    let (sampled, labels) = run(0.01);
    assert!((sampled[1] - 0.1).abs() < 1e-12);
    assert!((sampled[300] - (8.0f64 * (9.0 - 0.99 * 3.0)).sqrt()).abs() < 1e-12);
    let cold_label = labels[300];
    for (i, &l) in labels.iter().enumerate() {
        assert_eq!(l == cold_label, (300..303).contains(&i), "interval {i}");
    }
}
