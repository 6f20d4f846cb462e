//! The L2 model's cost against the two-level simulation it replaces.
//!
//! - `model/<variant>`: [`l2_mrc`] at five L2 sizes (LRU) from the exact L1 histogram of a
//!   Zipf stream (s = 0.8) over 1 Mi lines, 4 M references: about 66 000 exact bins below
//!   2^16 and log bins above (the layout [`crate::reuse`] records millions of distinct
//!   distances in). The model never looks at the trace again.
//! - `two-level`: the exact simulation (L1 of 512 lines, five LRU L2s) over the same 4 M
//!   references, already in memory (no decoding).
//!
//! Run: `cargo bench -p cachescope --bench l2 -- --warm-up-time 1 --measurement-time 3`.
//!
//! Measured on one core of a 2-core Xeon shared with other jobs: see the report in the
//! module documentation of `models::l2` (model in milliseconds, simulation in seconds).

use std::hint::black_box;

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sim::Policy;
use cachescope::workloads::{Params, Workload};
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

const L2_SIZES: [u64; 5] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20];

fn batches() -> Vec<Batch> {
    let p = Params {
        lines: 1 << 20,
        zipf_s: 0.8,
        refs: Some(4_000_000),
        ..Params::default()
    };
    workload::batches(Workload::Zipf, &p)
}

fn bench(c: &mut Criterion) {
    let batches = batches();
    let mut sd = StackDistanceAnalysis::new(Options::default());
    for b in &batches {
        sd.observe(b);
    }
    let h = L1Histogram::from_stack_distances(&sd.finish());
    eprintln!("L1 histogram: {} masses", h.masses.len());
    let mut g = c.benchmark_group("l2");
    g.sample_size(10);
    for v in Variant::ALL {
        g.bench_function(format!("model/{}", v.method()), |bench| {
            bench.iter(|| l2_mrc(black_box(&h), 512, &L2_SIZES, Policy::Lru, v).expect("valid"))
        });
    }
    g.bench_function("two-level", |bench| {
        bench.iter(|| {
            let mut sim = TwoLevelAnalysis::new(64, 512, &L2_SIZES, Policy::Lru).expect("valid");
            for b in &batches {
                sim.observe(b);
            }
            black_box(sim.finish())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
