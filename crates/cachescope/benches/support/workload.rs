//! Bench inputs: a built-in workload generated once into memory, and feeding it to an analysis.
#![allow(dead_code)]

use std::hint::black_box;

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::reuse::{Options, ReuseTimeAnalysis, StackDistanceAnalysis};
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use criterion::BenchmarkGroup;
use criterion::measurement::Measurement;

/// The whole trace of `w` under `p`, in batches.
pub fn batches(w: Workload, p: &Params) -> Vec<Batch> {
    let mut g = generator(w, p).expect("valid parameters");
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if g.read_batch(&mut b).expect("generators do not fail") == 0 {
            return out;
        }
        out.push(b);
    }
}

/// `refs` 8-byte loads of `w` (default parameters) over `lines` lines, in batches.
pub fn loads(w: Workload, lines: u64, refs: u64) -> Vec<Batch> {
    let p = Params {
        lines,
        refs: Some(refs),
        ..Params::default()
    };
    batches(w, &p)
}

/// Feeds every batch to `a`.
pub fn feed(a: &mut impl Analysis, batches: &[Batch]) {
    for b in batches {
        a.observe(b);
    }
}

/// The exact passes in `g`, on `trace`: stack distances and the LRU curve at `sizes` (named
/// `mrc_name`), and reuse times (`reuse_time`).
pub fn exact_passes<M: Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    trace: &[Batch],
    options: Options,
    sizes: &[u64],
    mrc_name: &str,
) {
    g.bench_function(mrc_name, |b| {
        b.iter(|| {
            let mut a = StackDistanceAnalysis::new(options);
            feed(&mut a, trace);
            black_box(a.finish().mrc(sizes))
        })
    });
    g.bench_function("reuse_time", |b| {
        b.iter(|| {
            let mut a = ReuseTimeAnalysis::new(options);
            feed(&mut a, trace);
            black_box(a.finish())
        })
    });
}
