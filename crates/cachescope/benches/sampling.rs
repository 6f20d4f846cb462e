//! Sampling throughput (references per second): the StatCache sampler at rate 10^−4 next to
//! merely decoding the same trace, and next to the exact stack-distance pass.
//!
//! The trace: 10 M 8-byte loads of the built-in `zipf` workload (s = 1 over 2^20 lines, hot
//! lines scattered), generated once, kept both as batches in memory and encoded in memory in
//! the native format. Each iteration makes a fresh analysis and runs it to its result
//! (`finish`, and for stack distances the exact LRU curve at the default sizes):
//!
//! - `decode`: the native reader decodes every batch, nothing else (the baseline);
//! - `decode+sample`: the same, each batch also fed to the sampler;
//! - `sample` and `stack_distance`: the analysis alone on the batches already in memory.
//!
//! Measured on one core of a 2-core Xeon (KVM guest, other jobs running), `--warm-up-time 1
//! --measurement-time 3`:
//!
//! | pass | references/s |
//! |---|---|
//! | decode | see the report |
//!
//! Run: `cargo bench -p cachescope --bench sampling -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::analysis::Analysis;
use cachescope::reuse::{Options, StackDistanceAnalysis, default_sizes};
use cachescope::sampling::{Sampler, SamplerOptions};
use cachescope::trace::AccessReader;
use cachescope::trace::native::{Header, Reader, Writer};
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Batch, Source};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const LINES: u64 = 1 << 20;
const REFS: u64 = 10_000_000;

/// The whole trace of `w`, in batches.
fn batches(w: Workload, refs: u64) -> Vec<Batch> {
    let p = Params {
        lines: LINES,
        refs: Some(refs),
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

/// Decodes the native trace in `bytes`, handing every batch to `f`; returns the accesses read.
fn decode(bytes: &[u8], batch: &mut Batch, mut f: impl FnMut(&Batch)) -> u64 {
    let mut r = Reader::new(bytes, Source::Memory).unwrap();
    let mut total = 0;
    while r.read_batch(batch).unwrap() > 0 {
        f(batch);
        total += batch.len() as u64;
    }
    total
}

fn sampling(c: &mut Criterion) {
    let trace = batches(Workload::Zipf, REFS);
    let mut w = Writer::new(Vec::new(), Header::new()).unwrap();
    for b in &trace {
        w.write_batch(b).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    let options = SamplerOptions::default();
    let sizes = default_sizes();

    let mut g = c.benchmark_group(format!(
        "sampling/zipf_1Mi_lines_{}M_refs",
        REFS / 1_000_000
    ));
    g.throughput(Throughput::Elements(REFS));
    g.sample_size(10);
    let mut batch = Batch::new();
    g.bench_function("decode", |b| {
        b.iter(|| {
            let n = decode(&bytes, &mut batch, |b| {
                black_box(b);
            });
            assert_eq!(n, REFS);
        })
    });
    g.bench_function("decode+sample_1e-4", |b| {
        b.iter(|| {
            let mut s = Sampler::new(options).unwrap();
            decode(&bytes, &mut batch, |b| s.observe(b));
            black_box(s.finish())
        })
    });
    g.bench_function("sample_1e-4", |b| {
        b.iter(|| {
            let mut s = Sampler::new(options).unwrap();
            for b in &trace {
                s.observe(b);
            }
            black_box(s.finish())
        })
    });
    g.bench_function("stack_distance_mrc", |b| {
        b.iter(|| {
            let mut a = StackDistanceAnalysis::new(Options::default());
            for b in &trace {
                a.observe(b);
            }
            black_box(a.finish().mrc(&sizes))
        })
    });
    g.finish();
}

criterion_group!(benches, sampling);
criterion_main!(benches);
