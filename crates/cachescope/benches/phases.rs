//! Phase-classification throughput: each signature in data references per second, the ground
//! truth, the whole one-pass analysis, and the clustering.
//!
//! Inputs, generated once into memory (8-byte loads, 64-byte lines):
//! - `phases`: the planted workload with a 4 MiB random phase (`lines` = 65 536), cut to 6 M
//!   references: 1 M each of loop (4096 lines), stream (125 000 fresh lines) and random, twice.
//! - `zipf`: Zipf(0.8) over 1 Mi lines, 4 M references: 810 856 distinct lines, 144 000
//!   per interval, the hard case for the setvectors' distinct-line set.
//!
//! Intervals are 250 000 data references (about 1 M instructions of a program with 0.25 data
//! references per instruction); the L2 is the default 1 MiB, 16-way, 64 B (1024 sets).
//!
//! Groups:
//! - `signature`: one builder each ([`Setvectors`], [`ActivityVectors`], [`ReuseHistograms`],
//!   [`WaveletImages`] with its per-interval Haar transform and SVD) fed the data addresses, and
//!   the ground truth's exact L2 alone;
//! - `analysis`: [`PhaseAnalysis`] over the batches with every method (all signatures, the
//!   interval splitter and the ground truth);
//! - `clustering`: k = 4, 10 restarts, on 512 intervals' signatures of `phases` (cut into 512
//!   intervals): the 1-D optimum of the setvector magnitudes, and k-means++ on activity
//!   (64 dims), reuse distance (34), wavelet (256), wavelet-svd (64) and setvector-vector (1024).
//!
//! Measured on one core of a shared 2-core VM (criterion medians; the machine ran other jobs,
//! load average 3 to 6, so expect ±20 %):
//!
//! | signature | phases | zipf |
//! |---|---|---|
//! | setvector | 142 M refs/s (7.0 ns) | 77 M refs/s (13 ns) |
//! | activity | 207 M refs/s (4.8 ns) | 289 M refs/s (3.5 ns) |
//! | reuse-distance | 26 M refs/s (39 ns) | 21 M refs/s (47 ns) |
//! | wavelet (+ Haar, SVD per interval) | 141 M refs/s (7.1 ns) | 399 M refs/s (2.5 ns) |
//! | ground truth (exact L2) | 134 M refs/s (7.4 ns) | 111 M refs/s (9.0 ns) |
//! | whole analysis, every method | 23 M refs/s (43 ns) | 12 M refs/s (81 ns) |
//!
//! Clustering the 512 intervals of `phases` (k = 4, 10 restarts), and the same time per
//! reference of its 6 M references: setvector (1-D optimum) 0.028 ms (0.005 ns); activity
//! 7.8 ms (1.3 ns); reuse-distance 1.7 ms (0.28 ns); wavelet 28 ms (4.7 ns); wavelet-svd 4.8 ms
//! (0.8 ns); setvector-vector 59 ms (9.8 ns). The stack-distance signature dominates the pass.
//! Earlier versions, for the record: setvectors in a hashbrown set ran zipf at 52 M refs/s;
//! 16-byte generation-stamped slots at 44 M; the 8-byte slots here at 77–83 M, 70–78 M without
//! the chunk's slot prefetch. Per-reference `StackDistance::access` ran reuse-distance at
//! 5.7 M refs/s on zipf, against 19–21 M through `StackDistanceAnalysis`'s chunked path.
//!
//! The setvector filter size (`RECENT` in signature/setvector.rs) was chosen here: 256, 1024
//! and 4096 entries within noise on `phases` (213–221 M refs/s in one run); on `zipf` 1024 gave
//! 60–83 M against 58 M for 256 and 4096, within this machine's noise too.
//!
//! Run: `cargo bench -p cachescope --bench phases -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::analysis::Analysis;
use cachescope::phases::kmeans::{KMeansConfig, kmeans, kmeans_1d};
use cachescope::phases::signature::{ActivityVectors, ReuseHistograms, Setvectors, WaveletImages};
use cachescope::phases::{PhaseAnalysis, PhaseOptions};
use cachescope::sim::{Cache, Geometry, Policy};
use cachescope::workloads::{Params, Workload};
use cachescope::{Batch, LineSize};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

/// Data references per interval.
const INTERVAL: usize = 250_000;

fn inputs() -> Vec<(&'static str, Vec<Batch>)> {
    let phases = Params {
        lines: 1 << 16,
        refs: Some(6_000_000),
        ..Params::default()
    };
    let zipf = Params {
        lines: 1 << 20,
        refs: Some(4_000_000),
        zipf_s: 0.8,
        ..Params::default()
    };
    vec![
        ("phases", workload::batches(Workload::Phases, &phases)),
        ("zipf", workload::batches(Workload::Zipf, &zipf)),
    ]
}

fn l2() -> Geometry {
    Geometry::parse("1M,16,64").expect("valid geometry")
}

/// Feeds `addrs` interval by interval: `push(chunk, column)` for each sixteenth, then `end()`.
fn by_interval<S>(
    addrs: &[u64],
    s: &mut S,
    push: impl Fn(&mut S, &[u64], usize),
    end: impl Fn(&mut S),
) {
    for interval in addrs.chunks(INTERVAL) {
        for (c, col) in interval.chunks(INTERVAL.div_ceil(16)).enumerate() {
            push(s, col, c);
        }
        end(s);
    }
}

fn bench_signatures(c: &mut Criterion, inputs: &[(&str, Vec<Batch>)]) {
    let mut group = c.benchmark_group("signature");
    group.sample_size(10);
    for (name, data) in inputs {
        let addrs: Vec<u64> = data.iter().flat_map(|b| b.addrs.iter().copied()).collect();
        group.throughput(Throughput::Elements(addrs.len() as u64));
        group.bench_function(BenchmarkId::new("setvector", name), |b| {
            b.iter(|| {
                let mut s = Setvectors::new(l2(), 8, false);
                by_interval(
                    black_box(&addrs),
                    &mut s,
                    |s, a, _| s.push(a),
                    Setvectors::end_interval,
                );
                s.magnitudes().len()
            })
        });
        group.bench_function(BenchmarkId::new("activity", name), |b| {
            b.iter(|| {
                let mut s = ActivityVectors::new(l2(), 64);
                by_interval(
                    black_box(&addrs),
                    &mut s,
                    |s, a, _| s.push(a),
                    ActivityVectors::end_interval,
                );
                s.vectors().len()
            })
        });
        group.bench_function(BenchmarkId::new("reuse-distance", name), |b| {
            b.iter(|| {
                let mut s = ReuseHistograms::new(LineSize::DEFAULT);
                by_interval(
                    black_box(&addrs),
                    &mut s,
                    |s, a, _| s.push(a),
                    ReuseHistograms::end_interval,
                );
                s.histograms().len()
            })
        });
        group.bench_function(BenchmarkId::new("wavelet", name), |b| {
            b.iter(|| {
                let mut s = WaveletImages::new(16 << 10, 4);
                by_interval(
                    black_box(&addrs),
                    &mut s,
                    WaveletImages::push,
                    WaveletImages::end_interval,
                );
                s.coefficients().len()
            })
        });
        group.bench_function(BenchmarkId::new("ground-truth", name), |b| {
            b.iter(|| {
                let mut cache = Cache::new(l2(), Policy::Lru).unwrap();
                cache.access_all(black_box(&addrs).iter().map(|a| a >> 6))
            })
        });
    }
    group.finish();
}

fn bench_analysis(c: &mut Criterion, inputs: &[(&str, Vec<Batch>)]) {
    let mut group = c.benchmark_group("analysis");
    group.sample_size(10);
    for (name, data) in inputs {
        let refs: usize = data.iter().map(Batch::len).sum();
        group.throughput(Throughput::Elements(refs as u64));
        group.bench_function(BenchmarkId::new("all-methods", name), |b| {
            b.iter(|| {
                let mut a = PhaseAnalysis::new(PhaseOptions {
                    interval: INTERVAL as u64,
                    ..PhaseOptions::default()
                })
                .unwrap();
                for batch in data {
                    a.observe(black_box(batch));
                }
                a.intervals()
            })
        });
    }
    group.finish();
}

fn bench_clustering(c: &mut Criterion, inputs: &[(&str, Vec<Batch>)]) {
    let addrs: Vec<u64> = inputs[0].1.iter().flat_map(|b| b.addrs.clone()).collect();
    let per = addrs.len().div_ceil(512);
    let mut sv = Setvectors::new(l2(), 8, true);
    let mut act = ActivityVectors::new(l2(), 64);
    let mut reuse = ReuseHistograms::new(LineSize::DEFAULT);
    let mut wav = WaveletImages::new(16 << 10, 4);
    for interval in addrs.chunks(per) {
        for (c, col) in interval.chunks(per.div_ceil(16)).enumerate() {
            sv.push(col);
            act.push(col);
            reuse.push(col);
            wav.push(col, c);
        }
        sv.end_interval();
        act.end_interval();
        reuse.end_interval();
        wav.end_interval();
    }
    let f = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let sets = sv.sets();
    let features: Vec<(&str, Vec<f64>, usize)> = vec![
        (
            "activity",
            act.vectors().iter().map(|&x| f64::from(x)).collect(),
            64,
        ),
        ("reuse-distance", f(reuse.histograms()), 34),
        ("wavelet", f(wav.coefficients()), 256),
        ("wavelet-svd", f(wav.svd_signatures()), 64),
        (
            "setvector-vector",
            sv.vectors()
                .unwrap()
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            sets,
        ),
    ];
    let config = KMeansConfig::default();
    let mut group = c.benchmark_group("clustering");
    group.sample_size(10);
    let magnitudes = sv.magnitudes().to_vec();
    group.bench_function("setvector-1d-optimal", |b| {
        b.iter(|| kmeans_1d(black_box(&magnitudes), 4).inertia)
    });
    for (name, points, dims) in &features {
        group.bench_function(*name, |b| {
            b.iter(|| kmeans(black_box(points), *dims, 4, &config).inertia)
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let inputs = inputs();
    bench_signatures(c, &inputs);
    bench_analysis(c, &inputs);
    bench_clustering(c, &inputs);
}

criterion_group!(phases, benches);
criterion_main!(phases);
