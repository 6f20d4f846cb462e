//! Smith's associativity formula on exact and HOTL-converted stack distances, against
//! set-associative LRU simulation.

use cachescope::analysis::Analysis;
use cachescope::models::hotl::{Filmer, FootprintAnalysis};
use cachescope::models::smith::{self, Distances};
use cachescope::reuse::{Mrc, Options, StackDistanceAnalysis};
use cachescope::sim::{Geometry, Policy, SetAssoc};
use cachescope::workloads::{Params, Workload};
use cachescope::{Access, Batch};

mod common;
use common::workload_batches as batches;

/// Exact and HOTL distance distributions, and the simulated miss ratios (cold included) of
/// `ways`-way LRU caches at `sizes`.
fn run(batches: &[Batch], ways: u32, sizes: &[u64]) -> (Distances, Distances, Vec<f64>) {
    let o = Options::default();
    let mut sd = StackDistanceAnalysis::new(o);
    let mut fp = FootprintAnalysis::new(o, &[]).unwrap();
    let mut caches: Vec<SetAssoc> = sizes
        .iter()
        .map(|&s| SetAssoc::new(Geometry::new(s, ways, 64).unwrap(), Policy::Lru).unwrap())
        .collect();
    let mut misses = vec![0u64; sizes.len()];
    let mut refs = 0u64;
    for b in batches {
        sd.observe(b);
        fp.observe(b);
        for &a in &b.addrs {
            refs += 1;
            for (c, m) in caches.iter_mut().zip(&mut misses) {
                *m += u64::from(!c.access(a >> 6));
            }
        }
    }
    let exact = Distances::from_stack_distances(&sd.finish());
    let converted = Filmer::new(&fp.finish()).stack_distances();
    let sim = misses.iter().map(|&m| m as f64 / refs as f64).collect();
    (exact, converted, sim)
}

/// Uniform random references to `lines` lines at random addresses (SplitMix64 of the line
/// number; not a multiplicative hash, which spreads consecutive numbers too evenly): the
/// placement Smith's formula assumes.
fn scattered(lines: u64, refs: u64) -> Vec<Batch> {
    let mut x = 0x1234_5678u64;
    let refs: Vec<Access> = (0..refs)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (x >> 33) % lines;
            let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let line = (z ^ (z >> 31)) >> 24;
            Access::load(line << 6, 8)
        })
        .collect();
    refs.chunks(1 << 16)
        .map(|c| c.iter().copied().collect())
        .collect()
}

/// Mean and largest absolute error in percentage points.
fn errors(m: &Mrc, sim: &[f64]) -> (f64, f64) {
    let d: Vec<f64> = m
        .points
        .iter()
        .zip(sim)
        .map(|(p, s)| 100.0 * (p.miss_ratio.unwrap() - s).abs())
        .collect();
    (
        d.iter().sum::<f64>() / d.len() as f64,
        d.iter().fold(0.0, |a, &b| a.max(b)),
    )
}

#[test]
fn smith_against_set_associative_simulation() {
    let sizes: Vec<u64> = (6..=14).map(|k| 64u64 << k).collect(); // 4 KiB .. 1 MiB
    // Bounds on the mean error (pp). Smith assumes lines fall in sets at random: true of
    // `scattered`, nearly of `zipf` (hot lines scattered by a permutation); not of a contiguous
    // array (`random` over consecutive lines fills the sets evenly, so a direct-mapped cache
    // has fewer conflicts than the formula expects) nor of power-of-two strides
    // (`matmul-tiled`'s 512-byte rows conflict more than it expects).
    let cases = [
        (None, Params::default(), 0.2),
        (
            Some(Workload::Zipf),
            Params {
                lines: 20_000,
                refs: Some(600_000),
                ..Params::default()
            },
            2.0,
        ),
        (
            Some(Workload::Stencil),
            Params {
                n: 24,
                ..Params::default()
            },
            1.0,
        ),
        (
            Some(Workload::Random),
            Params {
                lines: 6000,
                refs: Some(600_000),
                ..Params::default()
            },
            8.0,
        ),
        (
            Some(Workload::MatmulTiled),
            Params {
                n: 64,
                tile: 16,
                ..Params::default()
            },
            8.0,
        ),
    ];
    for (w, p, bound) in cases {
        let trace = match w {
            Some(w) => batches(w, &p),
            None => scattered(6000, 600_000),
        };
        let w = w.map_or("scattered", |w| w.name());
        for ways in [1u32, 4, 8] {
            let (exact, converted, sim) = run(&trace, ways, &sizes);
            let e = errors(
                &smith::set_associative_mrc(&exact, ways, &sizes).unwrap(),
                &sim,
            );
            let h = errors(
                &smith::set_associative_mrc(&converted, ways, &sizes).unwrap(),
                &sim,
            );
            println!(
                "{w:12} {ways}-way: exact+smith mean {:.3} pp max {:.2} pp; hotl+smith mean {:.3} pp max {:.2} pp",
                e.0, e.1, h.0, h.1
            );
            assert!(
                e.0 <= bound,
                "{w} {ways}-way: exact+smith mean error {} pp",
                e.0
            );
            assert!(
                h.0 <= bound + 0.2,
                "{w} {ways}-way: hotl+smith mean error {} pp",
                h.0
            );
        }
    }
}

#[test]
fn one_set_is_the_fully_associative_curve() {
    let lines: Vec<u64> = (0..5000u64)
        .map(|i| (i * 7919) % 613 + (i % 3) * 1000)
        .collect();
    let batch: Batch = lines.iter().map(|&l| Access::load(l * 64, 8)).collect();
    let mut sd = StackDistanceAnalysis::new(Options::default());
    sd.observe(&batch);
    let sd = sd.finish();
    let d = Distances::from_stack_distances(&sd);
    let sizes: Vec<u64> = (0..700).step_by(7).map(|c| c * 64).collect();
    for (p, q) in smith::set_associative_mrc(&d, 1 << 20, &sizes)
        .unwrap()
        .points
        .iter()
        .zip(&sd.mrc(&sizes).points)
    {
        assert!((p.miss_ratio.unwrap() - q.miss_ratio.unwrap()).abs() < 1e-12);
        assert!((p.miss_ratio_warm - q.miss_ratio_warm).abs() < 1e-12);
    }
    assert!(smith::set_associative_mrc(&d, 0, &sizes).is_err());
    assert!(smith::miss_ratio(&d, 0, 4).is_err());
    let e = smith::miss_ratio(&d, 64, 4).unwrap();
    assert_eq!(
        e.miss_ratio.unwrap() - e.miss_ratio_warm,
        sd.cold as f64 / sd.refs as f64
    );
}
