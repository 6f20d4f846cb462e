//! Chunk-parallel throughput (references per second) of the mergeable analyses, 1 and 2
//! threads, on a native trace file read through its block index (decode included).
//!
//! The trace: 16 M references of the built-in `zipf` workload over 2^18 lines (s = 1), written
//! once to a temporary native file. Each iteration opens the file and runs the whole plan,
//! merge included. The end-to-end figures on a 100 M-reference trace, with MPI, are made by
//! `scripts/scale.sh` and recorded in `docs/scale.md`.
//!
//! Run: `cargo bench -p cachescope --bench parallel -- --warm-up-time 1 --measurement-time 10`.

use std::hint::black_box;
use std::path::Path;

use cachescope::Batch;
use cachescope::parallel::{
    self, Chunked, Chunking, FootprintPlan, ReuseTimePlan, StackDistancePlan, StatsPlan,
};
use cachescope::reuse::Options;
use cachescope::trace::native::{Header, Writer};
use cachescope::trace::{AccessReader, OpenOptions};
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

fn bench_plan<P: Chunked>(c: &mut Criterion, name: &str, path: &Path, plan: &P) {
    let mut group = c.benchmark_group(format!("parallel/{name}"));
    group.throughput(Throughput::Elements(REFS));
    group.sample_size(10);
    for threads in [1, 2] {
        group.bench_function(format!("{threads} threads"), |b| {
            b.iter(|| {
                let mut t = cachescope::trace::open(path, &OpenOptions::default()).unwrap();
                let chunking = Chunking::threads(threads);
                black_box(parallel::run(&mut t, plan, &chunking, |_| {}).unwrap());
            })
        });
    }
    group.finish();
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
}

criterion_group!(parallel_benches, benches);
criterion_main!(parallel_benches);
