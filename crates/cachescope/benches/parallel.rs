//! Chunk-parallel throughput (references per second) of the mergeable analyses, 1 and 2
//! threads, on a native trace file read through its block index (decode included).
//!
//! The trace: 16 M references of the built-in `zipf` workload over 2^18 lines (s = 1), written
//! once to a temporary native file. Each iteration opens the file and runs the whole plan,
//! merge included. The end-to-end figures on a 100 M-reference trace, with MPI, are made by
//! `scripts/scale.sh` and recorded in `docs/scale.md`.
//!
//! `parallel/merge/*` times the sequential part alone: merging the partial of a second chunk
//! into the first's, two chunks of 8 M references over 2^20 lines (each chunk touches nearly
//! every line), the case of two threads on `scripts/scale.sh`'s trace; throughput is in lines
//! of the second chunk merged per second. `parallel/decode` reads the file alone, on one thread
//! and decoded by two (`parallel::decode_in_parallel`); `parallel/sample` is StatCache sampling
//! (on 2 threads one sampler fed by parallel decoding, on 4 by segments).
//!
//! Run: `cargo bench -p cachescope --bench parallel -- --warm-up-time 1 --measurement-time 10`.

use std::hint::black_box;
use std::path::Path;

use cachescope::Batch;
use cachescope::parallel::{
    self, Chunked, FootprintPlan, ReuseTimePlan, StackDistancePlan, StatsPlan, Wire,
};
use cachescope::pass::{Pass, Plan, Sampling};
use cachescope::reuse::Options;
use cachescope::sampling::SamplerOptions;
use cachescope::trace::native::{Header, Writer};
use cachescope::trace::{AccessReader, OpenOptions, Trace};
use cachescope::workloads::{Params, Workload, generator};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const LINES: u64 = 1 << 18;
const REFS: u64 = 16_000_000;

/// Writes the zipf trace to `path`.
fn write_trace(path: &Path) {
    let p = Params {
        lines: LINES,
        refs: Some(REFS),
        ..Params::default()
    };
    let mut g = generator(Workload::Zipf, &p).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = Writer::new(std::io::BufWriter::new(file), Header::new()).unwrap();
    let mut b = Batch::new();
    while g.read_batch(&mut b).unwrap() > 0 {
        w.write_batch(&b).unwrap();
    }
    w.finish().unwrap();
}

/// Group `parallel/{name}`: for each thread count, `pass` run over the freshly opened trace at
/// `path` (opening included), throughput in references.
fn bench_threads<R>(
    c: &mut Criterion,
    name: &str,
    path: &Path,
    threads: &[usize],
    pass: impl Fn(&mut Trace, usize) -> R,
) {
    let mut group = c.benchmark_group(format!("parallel/{name}"));
    group.throughput(Throughput::Elements(REFS));
    group.sample_size(10);
    for &n in threads {
        group.bench_function(format!("{n} threads"), |b| {
            b.iter(|| {
                let mut t = cachescope::trace::open(path, &OpenOptions::default()).unwrap();
                black_box(pass(&mut t, n))
            })
        });
    }
    group.finish();
}

fn bench_plan<P: Wire>(c: &mut Criterion, name: &str, path: &Path, plan: &P) {
    bench_threads(c, name, path, &[1, 2], |t, n| {
        Pass::new(n).run(t, Plan(plan)).unwrap()
    });
}

/// Lines of the merge benchmarks' trace.
const MERGE_LINES: u64 = 1 << 20;
/// References per chunk of the merge benchmarks.
const MERGE_CHUNK: u64 = 8_000_000;

/// The two chunks of the merge benchmarks: zipf over [`MERGE_LINES`] lines.
fn merge_chunks() -> [Vec<Batch>; 2] {
    let p = Params {
        lines: MERGE_LINES,
        refs: Some(2 * MERGE_CHUNK),
        ..Params::default()
    };
    let mut g = generator(Workload::Zipf, &p).unwrap();
    let mut chunks = [Vec::new(), Vec::new()];
    let mut seen = 0;
    let mut b = Batch::new();
    while g.read_batch(&mut b).unwrap() > 0 {
        chunks[usize::from(seen >= MERGE_CHUNK)].push(b.clone());
        seen += b.len() as u64;
    }
    chunks
}

/// Times `plan.merge` of the second chunk's partial into the first's.
fn bench_merge<P: Chunked>(c: &mut Criterion, name: &str, chunks: &[Vec<Batch>; 2], plan: &P)
where
    P::Partial: Clone,
{
    use cachescope::analysis::Analysis;
    let sealed = |i: usize, start: u64| {
        let mut w = plan.worker(start);
        for b in &chunks[i] {
            w.observe(b);
        }
        plan.seal(w)
    };
    let (first, second) = (sealed(0, 0), sealed(1, MERGE_CHUNK));
    let mut group = c.benchmark_group("parallel/merge");
    group.throughput(Throughput::Elements(MERGE_LINES));
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter_batched(
            || (first.clone(), second.clone()),
            |(mut acc, next)| {
                plan.merge(&mut acc, next);
                black_box(acc)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn bench_sample(c: &mut Criterion, path: &Path) {
    let options = SamplerOptions::default();
    // 2 threads: one sampler fed by parallel decoding; 4: by segments.
    bench_threads(c, "sample", path, &[1, 2, 4], |t, n| {
        Pass::new(n).run(t, Sampling(options)).unwrap()
    });
}

/// Reading the whole file, one thread against [`parallel::decode_in_parallel`].
fn bench_decode(c: &mut Criterion, path: &Path) {
    bench_threads(c, "decode", path, &[1, 2], |t, n| {
        parallel::decode_in_parallel(t, n).unwrap();
        let mut batch = Batch::new();
        let mut refs = 0;
        while t.read_batch(&mut batch).unwrap() > 0 {
            refs += batch.len();
        }
        refs
    });
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zipf.cst");
    write_trace(&path);
    let options = Options::default();
    bench_plan(c, "stack-distances", &path, &StackDistancePlan { options });
    bench_plan(c, "reuse-times", &path, &ReuseTimePlan { options });
    bench_plan(
        c,
        "footprint",
        &path,
        &FootprintPlan::new(options, &[]).unwrap(),
    );
    bench_plan(
        c,
        "stats",
        &path,
        &StatsPlan {
            line_size: options.line_size,
        },
    );
    bench_decode(c, &path);
    bench_sample(c, &path);
    let chunks = merge_chunks();
    bench_merge(
        c,
        "footprint",
        &chunks,
        &FootprintPlan::new(options, &[]).unwrap(),
    );
    bench_merge(c, "reuse-times", &chunks, &ReuseTimePlan { options });
}

criterion_group!(parallel_benches, benches);
criterion_main!(parallel_benches);
