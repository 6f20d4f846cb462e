//! Per-thread curves in one pass against the single curve (issue: `mrc --per-thread` within
//! 1.5x of the exact curve's time): exact LRU stack distances over a native trace file of
//! 8 M references by four threads in runs of 10 000 (each a zipf stream over 2^16 lines of its
//! own), read through its block index on 2 threads, against the same plan per thread (with each
//! thread's reference count) in the same pass.
//!
//! Run: `cargo bench -p cachescope --bench per_thread -- --warm-up-time 1 --measurement-time 10`.

use std::hint::black_box;
use std::path::Path;

use cachescope::Batch;
use cachescope::parallel::{Both, CountPlan, PerThreadPlan, StackDistancePlan};
use cachescope::pass::{Pass, Plan};
use cachescope::reuse::Options;
use cachescope::trace::native::{Header, Writer};
use cachescope::trace::{AccessReader, OpenOptions};
use cachescope::workloads::{Params, Workload, generator};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const REFS: u64 = 8_000_000;
const THREADS: u32 = 4;
const RUN: usize = 10_000;

/// Writes the threaded trace: four zipf streams, dealt in runs, each in its own address range.
fn write_trace(path: &Path) {
    let mut streams: Vec<_> = (0..THREADS)
        .map(|t| {
            let p = Params {
                lines: 1 << 16,
                refs: Some(REFS / u64::from(THREADS)),
                seed: u64::from(t) + 1,
                ..Params::default()
            };
            generator(Workload::Zipf, &p).unwrap()
        })
        .collect();
    let file = std::fs::File::create(path).unwrap();
    let mut w = Writer::new(std::io::BufWriter::new(file), Header::new()).unwrap();
    let (mut from, mut out) = (vec![Batch::new(); THREADS as usize], Batch::new());
    let mut at = vec![0usize; THREADS as usize];
    loop {
        let mut any = false;
        for t in 0..THREADS as usize {
            if at[t] >= from[t].len() {
                if streams[t].read_batch(&mut from[t]).unwrap() == 0 {
                    continue;
                }
                at[t] = 0;
            }
            any = true;
            let end = (at[t] + RUN).min(from[t].len());
            out.set_thread(t as u32 + 1);
            for i in at[t]..end {
                let mut a = from[t].get(i);
                a.addr += u64::from(t as u32) << 36;
                out.push(a);
            }
            at[t] = end;
            if out.is_full() {
                w.write_batch(&out).unwrap();
                out.clear();
            }
        }
        if !any {
            break;
        }
    }
    w.write_batch(&out).unwrap();
    w.finish().unwrap();
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.cst");
    write_trace(&path);
    let options = Options::default();
    let mut g = c.benchmark_group("per_thread");
    g.throughput(Throughput::Elements(REFS));
    g.sample_size(10);
    let open = || cachescope::trace::open(&path, &OpenOptions::default()).unwrap();
    g.bench_function("exact/whole", |b| {
        b.iter(|| {
            let d = Pass::new(2).run(&mut open(), Plan(&StackDistancePlan { options }));
            black_box(d.unwrap())
        })
    });
    g.bench_function("exact/per_thread", |b| {
        let plan = Both(
            PerThreadPlan(StackDistancePlan { options }),
            PerThreadPlan(CountPlan { options }),
        );
        b.iter(|| black_box(Pass::new(2).run(&mut open(), Plan(&plan)).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
