//! Multi-core model throughput, in references per second (`simulate --cores`).
//!
//! Input, built in memory: two threads of 1.5 M data references each, dealt 100 references
//! at a time (the default quantum's slice when counting references). Thread 1 runs the
//! tiled 96×96 matrix multiply, thread 2 the 27-point stencil on a 48³ grid; every tenth
//! reference of either is instead a store (thread 1) or a load (thread 2) of one of 64 lines
//! both use, so lines move between the cores all the time. 3 M references in all.
//!
//! Groups:
//! - `multicore`: `MultiCore` with two cores, each a private 32 KiB 8-way L1 (64-byte lines),
//!   over a shared 8 MiB 16-way LL, every miss classified (the four classes are always
//!   counted); then the same with the per-line coherence counts on (`by_line`).
//! - `interleave`: the `Interleaver` splitting the trace and dealing it back at that quantum
//!   (the pass `simulate --cores` makes before the model's): with the default memory limit
//!   (1 Mi accesses, so most of the 3 M are spilled to temporary native traces and read
//!   back), and all in memory.
//!
//! Measured in CPU time of the bench thread (`support/cpu_time.rs`) on a shared 2-core VM
//! (load average about 4 from other builds): `multicore` 26.6 M references/s (`by_line`
//! 27.2 M: the same within the noise; 5% of the references are coherence misses here),
//! `interleave` 48.9 M spilling and 49.8 M in memory (copying columns twice, bound by memory
//! bandwidth rather than by the spill). Before the owners' memo (`protocol.rs`), in wall
//! time on the machine loaded at 6, `multicore` was 20.8 M.
//!
//! Run: `cargo bench -p cachescope --bench multicore -- --warm-up-time 1 --measurement-time 5`.

use std::hint::black_box;
use std::num::NonZeroU64;

use cachescope::interleave::{DEFAULT_MEMORY, Interleaver};
use cachescope::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig};
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload};
use cachescope::{AccessKind, Batch};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/cpu_time.rs"]
mod cpu_time;
#[path = "support/workload.rs"]
mod workload;

use cpu_time::CpuTime;

/// References per turn.
const SLICE: usize = 100;

/// The two threads' references, dealt `SLICE` at a time, in batches.
fn two_threads() -> Vec<Batch> {
    let base = Params {
        refs: Some(1_500_000),
        ..Params::default()
    };
    let kernels = [
        workload::batches(
            Workload::MatmulTiled,
            &Params {
                n: 96,
                tile: 16,
                ..base.clone()
            },
        ),
        workload::batches(Workload::Stencil, &Params { n: 48, ..base }),
    ];
    let streams: Vec<Vec<(u64, AccessKind)>> = kernels
        .iter()
        .enumerate()
        .map(|(t, batches)| {
            let shared = if t == 0 {
                AccessKind::Store
            } else {
                AccessKind::Load
            };
            batches
                .iter()
                .flat_map(|b| b.addrs.iter().zip(&b.kinds))
                .enumerate()
                .map(|(i, (&a, &k))| {
                    if i % 10 == 9 {
                        (0x7000_0000 + (i as u64 / 10 % 64) * 64, shared)
                    } else {
                        (a, k)
                    }
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut b = Batch::new();
    let slices = streams[0].len().max(streams[1].len()).div_ceil(SLICE);
    for s in 0..slices {
        for (t, stream) in streams.iter().enumerate() {
            let part = stream.get(s * SLICE..((s + 1) * SLICE).min(stream.len()));
            for &(addr, kind) in part.into_iter().flatten() {
                b.set_thread(1 + t as u32);
                b.push_raw(addr, 8, kind, 0);
                if b.is_full() {
                    out.push(std::mem::replace(&mut b, Batch::new()));
                }
            }
        }
    }
    out.push(b);
    out
}

fn config(by_line: bool) -> MultiCoreConfig {
    let g = |s: &str| Geometry::parse(s).expect("valid geometry");
    let mut c = MultiCoreConfig::new(
        2,
        vec![
            LevelSpec::private("L1", g("32K,8,64")),
            LevelSpec::shared("LL", g("8M,16,64")),
        ],
    );
    c.by_line = by_line;
    c
}

fn bench(c: &mut Criterion<CpuTime>) {
    let trace = two_threads();
    let refs: usize = trace.iter().map(Batch::len).sum();
    let mut sim = MultiCore::new(&config(false)).unwrap();
    workload::feed(&mut sim, &trace);
    let r = sim.finish();
    eprintln!(
        "two threads: {refs} references; L1 misses {} (coherence {}), LL misses {}",
        r.totals[0].counts.misses, r.totals[0].counts.coherence, r.totals[1].counts.misses
    );
    let mut group = c.benchmark_group("multicore");
    group.throughput(Throughput::Elements(refs as u64));
    group.sample_size(10);
    for (name, by_line) in [("l1_private_ll_shared", false), ("by_line", true)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sim = MultiCore::new(&config(by_line)).unwrap();
                workload::feed(&mut sim, black_box(&trace));
                sim.finish().totals[0].counts.misses
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("interleave");
    group.throughput(Throughput::Elements(refs as u64));
    group.sample_size(10);
    for (name, memory) in [
        ("split_and_deal", DEFAULT_MEMORY),
        ("in_memory", usize::MAX),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let quantum = NonZeroU64::new(SLICE as u64).unwrap();
                let mut split = Interleaver::with_memory(quantum, memory);
                workload::feed(&mut split, black_box(&trace));
                let mut merged = split.finish().unwrap();
                let mut batch = Batch::new();
                let mut n = 0;
                while merged.read_batch(&mut batch).unwrap() > 0 {
                    n += batch.len();
                }
                n
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = bench
}
criterion_main!(benches);
