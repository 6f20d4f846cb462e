//! Throughput of the attribution pass (`cachescope attribute`), in references per second.
//!
//! Input: the built-in `stencil` workload (mgrid's 27-point stencil, 3 arrays) with
//! instruction fetches, built in memory; an event log places three heap blocks over the three
//! arrays (so every reference takes the heap lookup) at position 0. The paper's cache (64 KiB,
//! 4-way, 32-byte lines), sampling 1 in 25000.
//!
//! Groups (`attribution`):
//! - `exact`: the simulation with a bucket per resident line, the sampled tables, no cost
//!   model, no curves: the core of the measurement;
//! - `full`: what `attribute` runs: plus four perturbed caches (the cost table) and the
//!   per-bucket stack distances (the curves).
//!
//! Measured on a shared 2-core VM under load (records per second, instruction fetches
//! included): `exact` 196 M/s, `full` 56 M/s.
//!
//! Run: `cargo bench -p cachescope --bench attribution -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::attribution::events::{Event, EventKind};
use cachescope::attribution::{Attribution, CostModel, Options};
use cachescope::workloads::{Params, Workload};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

fn batches() -> Vec<Batch> {
    let p = Params {
        n: 40,
        instructions: true,
        ..Params::default()
    };
    workload::batches(Workload::Stencil, &p)
}

fn events(batches: &[Batch]) -> Vec<Event> {
    // Three blocks that split the touched address range in three.
    let (lo, hi) = batches
        .iter()
        .flat_map(|b| b.addrs.iter().zip(&b.kinds))
        .filter(|(_, k)| k.is_data())
        .fold((u64::MAX, 0), |a, (&x, _)| (a.0.min(x), a.1.max(x)));
    let third = (hi - lo) / 3 + 1;
    (0..3)
        .map(|i| Event {
            position: 0,
            kind: EventKind::Alloc {
                addr: lo + i * third,
                size: third,
                stack: vec![0x1000 + i],
            },
        })
        .collect()
}

fn run(batches: &[Batch], events: &[Event], full: bool) -> u64 {
    let opts = Options {
        cost: full.then(CostModel::default),
        mrc: full,
        ..Options::default()
    };
    let ev = events.iter().cloned().map(Ok);
    let mut a = Attribution::new(opts, Some(Box::new(ev))).expect("valid options");
    for b in batches {
        a.observe(b);
    }
    a.finish().expect("no event errors").misses
}

fn bench(c: &mut Criterion) {
    let batches = batches();
    let events = events(&batches);
    let refs: u64 = batches.iter().map(|b| b.len() as u64).sum();
    let mut g = c.benchmark_group("attribution");
    g.throughput(Throughput::Elements(refs));
    g.sample_size(10);
    g.bench_function("exact", |b| {
        b.iter(|| black_box(run(&batches, &events, false)))
    });
    g.bench_function("full", |b| {
        b.iter(|| black_box(run(&batches, &events, true)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
