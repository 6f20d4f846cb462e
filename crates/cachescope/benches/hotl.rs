//! HOTL throughput (references per second, one core): the footprint pass (Xiang formula)
//! against the exact stack-distance pass and the reuse-time pass on the same batches.
//!
//! Streams of 8-byte loads from the built-in workloads, generated once into memory, 10 M
//! references each: `zipf` (s = 1) and `random` (uniform) over 64 Ki, 256 Ki and 1 Mi lines.
//! Each iteration feeds every batch to a fresh analysis and finishes it (for the footprint,
//! also the 256-per-octave curve and the HOTL miss-ratio curve at the paper's 3073 sizes;
//! for stack distances, the exact LRU curve at the same sizes), so the times include
//! everything a `mrc` run does after decoding.
//!
//! Run: `cargo bench -p cachescope --bench hotl -- --warm-up-time 1 --measurement-time 3`.
//!
//! Measured on one core of a 2-core Xeon (Sapphire Rapids, KVM guest) with other jobs running
//! (load average about 5, so every figure is low by an unknown factor, the same for all
//! columns), M references/s:
//!
//! | stream | footprint | + HOTL curve, 3073 sizes | stack distances + LRU curve | reuse times |
//! |---|---|---|---|---|
//! | zipf, 64 Ki lines | 119–133 | 128–134 | 58–60 | 111–113 |
//! | zipf, 256 Ki lines | 75–80 | 67–75 | 31–34 | 61–62 |
//! | random, 256 Ki lines | 56–64 | 50–65 | 31–32 | 54–55 |
//! | zipf, 1 Mi lines | 46–48 | 45–47 | 25–26 | 40–41 |
//! | random, 1 Mi lines | 37 | 36 | 22 | 32 |
//!
//! The footprint pass is 1.7–2.3 times the stack-distance pass on the same batches: one table
//! lookup per reference against a lookup and a tree update; both are bound by the line table's
//! cache misses once it outgrows the L2 cache (2 MiB per core here), so the ratio falls as the
//! lines grow.

use std::hint::black_box;

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::models::hotl::{self, FootprintAnalysis};
use cachescope::reuse::{Options, ReuseTimeAnalysis, StackDistanceAnalysis, sizes_log_range};
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const REFS: u64 = 10_000_000;

/// The whole trace of `w` over `lines` lines, in batches.
fn batches(w: Workload, lines: u64) -> Vec<Batch> {
    let p = Params {
        lines,
        refs: Some(REFS),
        ..Params::default()
    };
    let mut g = generator(w, &p).unwrap();
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if g.read_batch(&mut b).unwrap() == 0 {
            return out;
        }
        out.push(b);
    }
}

fn feed(a: &mut impl Analysis, batches: &[Batch]) {
    for b in batches {
        a.observe(b);
    }
}

fn passes(c: &mut Criterion) {
    let options = Options::default();
    let sizes = sizes_log_range(16 << 10, 64 << 20, 256).unwrap();
    assert_eq!(sizes.len(), 3073);
    for (w, lines) in [
        (Workload::Zipf, 1u64 << 16),
        (Workload::Zipf, 1 << 18),
        (Workload::Random, 1 << 18),
        (Workload::Zipf, 1 << 20),
        (Workload::Random, 1 << 20),
    ] {
        let trace = batches(w, lines);
        let mut g = c.benchmark_group(format!("hotl/{}_{}Ki_lines", w.name(), lines >> 10));
        g.throughput(Throughput::Elements(REFS));
        g.sample_size(10);
        g.bench_function("footprint", |b| {
            b.iter(|| {
                let mut a = FootprintAnalysis::new(options, &[]).unwrap();
                feed(&mut a, &trace);
                black_box(a.finish())
            })
        });
        g.bench_function("footprint_mrc_3073", |b| {
            b.iter(|| {
                let mut a = FootprintAnalysis::new(options, &[]).unwrap();
                feed(&mut a, &trace);
                black_box(hotl::mrc(&a.finish(), &sizes))
            })
        });
        g.bench_function("stack_distance_mrc_3073", |b| {
            b.iter(|| {
                let mut a = StackDistanceAnalysis::new(options);
                feed(&mut a, &trace);
                black_box(a.finish().mrc(&sizes))
            })
        });
        g.bench_function("reuse_time", |b| {
            b.iter(|| {
                let mut a = ReuseTimeAnalysis::new(options);
                feed(&mut a, &trace);
                black_box(a.finish())
            })
        });
        g.finish();
    }
}

criterion_group!(benches, passes);
criterion_main!(benches);
