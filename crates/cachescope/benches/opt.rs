//! OPT's all-sizes curve, in references per second (criterion's `thrpt`, elements = counted
//! references).
//!
//! Inputs: 8 M data loads of three built-in workloads: `zipf-256K` (Zipf(1.0) over 256 Ki
//! lines), `zipf-4M` (Zipf(0.8) over 4 Mi lines: a footprint beyond every CPU cache) and
//! `phases-64K` (loop, stream and random phases over 64 Ki lines).
//! - `curve`: the whole of `mrc --method exact --policy opt` after decoding: [`OptAnalysis`]
//!   spilling ids to a temporary file, the backward pass for next uses, the stack and the
//!   curve.
//! - `stack`: [`OptStack`] alone, over ids and next uses prepared in memory: the all-sizes
//!   algorithm itself; `stack-bounded-32K` the same stack bounded at 512 lines
//!   ([`OptStack::bounded`], what `mrc --policy opt --sizes …` up to 32 KiB runs).
//! - `spill`: the spill and the backward pass read back with nothing done per reference: what
//!   `curve` costs besides the stack.
//!
//! Recorded programs: `OPT_BENCH_TRACES="a.cst b.cst"` adds each trace's data references
//! (held in memory, so decoding is not timed), named by file stem, to the three benches above
//! (`scripts/real-traces.sh` records such traces).
//!
//! Run: `cargo bench -p cachescope --bench opt -- --warm-up-time 1 --measurement-time 10`.
//! Figures are in docs/opt.md.

use std::collections::HashMap;
use std::hint::black_box;

use cachescope::Batch;
use cachescope::opt::{NextUseSpill, OptAnalysis, OptStack};
use cachescope::reuse::{Options, default_sizes};
use cachescope::trace::{OpenOptions, open};
use cachescope::workloads::{Params, Workload};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

fn trace(w: Workload, lines: u64, zipf_s: f64) -> Vec<Batch> {
    let p = Params {
        refs: Some(8_000_000),
        lines,
        zipf_s,
        ..Params::default()
    };
    workload::batches(w, &p)
}

/// The data references of the native traces named in `OPT_BENCH_TRACES`, each by file stem.
fn recorded() -> Vec<(String, Vec<Batch>)> {
    let Ok(paths) = std::env::var("OPT_BENCH_TRACES") else {
        return Vec::new();
    };
    paths
        .split_whitespace()
        .map(|path| {
            let path = std::path::Path::new(path);
            let mut trace = open(path, &OpenOptions::default())
                .unwrap_or_else(|e| panic!("OPT_BENCH_TRACES: {e}"));
            let (mut all, mut b) = (Vec::new(), Batch::new());
            let mut data = Batch::new();
            while trace.read_batch(&mut b).expect("a readable trace") > 0 {
                for i in (0..b.len()).filter(|&i| b.kinds[i].is_data()) {
                    data.push_raw(b.addrs[i], b.sizes[i], b.kinds[i], b.pcs[i]);
                }
                if data.len() >= 1 << 16 {
                    all.push(std::mem::take(&mut data));
                }
            }
            all.push(data);
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            (stem.unwrap_or_default(), all)
        })
        .collect()
}

/// Dense ids and next uses of the data lines, computed in memory.
fn prepared(batches: &[Batch]) -> (Vec<u32>, Vec<u64>) {
    let lines: Vec<u64> = batches
        .iter()
        .flat_map(|b| b.addrs.iter().zip(&b.kinds))
        .filter(|(_, k)| k.is_data())
        .map(|(a, _)| a >> 6)
        .collect();
    let mut ids = HashMap::new();
    let id = lines
        .iter()
        .map(|&l| {
            let n = ids.len() as u32;
            *ids.entry(l).or_insert(n)
        })
        .collect();
    let mut next = vec![u64::MAX; lines.len()];
    let mut last = HashMap::new();
    for i in (0..lines.len()).rev() {
        next[i] = last.insert(lines[i], i as u64).unwrap_or(u64::MAX);
    }
    (id, next)
}

fn bench_opt(c: &mut Criterion) {
    let mut group = c.benchmark_group("opt");
    group.sample_size(10);
    let sizes = default_sizes();
    let built = [
        ("zipf-256K", trace(Workload::Zipf, 1 << 18, 1.0)),
        ("zipf-4M", trace(Workload::Zipf, 1 << 22, 0.8)),
        ("phases-64K", trace(Workload::Phases, 1 << 16, 1.0)),
    ];
    let built = built.into_iter().map(|(n, b)| (n.to_string(), b));
    for (name, batches) in built.chain(recorded()) {
        let name = name.as_str();
        let (id, next) = prepared(&batches);
        group.throughput(Throughput::Elements(id.len() as u64));
        group.bench_function(BenchmarkId::new("curve", name), |b| {
            b.iter(|| {
                let mut a = OptAnalysis::new(Options::default()).unwrap();
                workload::feed(&mut a, &batches);
                black_box(a.finish(&sizes).unwrap())
            })
        });
        group.bench_function(BenchmarkId::new("stack", name), |b| {
            b.iter(|| {
                let mut s = OptStack::new();
                s.access_all(&id, &next);
                black_box(s.misses(1 << 14))
            })
        });
        group.bench_function(BenchmarkId::new("stack-bounded-32K", name), |b| {
            b.iter(|| {
                let mut s = OptStack::bounded(512);
                s.access_all(&id, &next);
                black_box(s.misses(512))
            })
        });
        group.bench_function(BenchmarkId::new("spill", name), |b| {
            b.iter(|| {
                let mut s = NextUseSpill::new(Options::default()).unwrap();
                workload::feed(&mut s, &batches);
                let mut sum = 0u64;
                s.finish()
                    .unwrap()
                    .for_each(|i, n| sum = sum.wrapping_add(u64::from(i) ^ n))
                    .unwrap();
                black_box(sum)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_opt);
criterion_main!(benches);
