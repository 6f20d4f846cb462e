//! Throughput of the report's collection (`cachescope report` without the drawing), in data
//! references per second: every analysis of the one pass, then the models
//! (`Collector::finish`, OPT's curve included).
//!
//! Input: the built-in `phases` workload (three recurring memory phases, 2 M data references
//! with instruction fetches), built in memory, so decoding is not measured.
//!
//! Groups (`report_collect`):
//! - `one_thread`: every analysis on one thread, the models on one thread;
//! - `two_threads`: the analyses of `Collector::analyses_send` dealt alternately to two
//!   threads (the pass's first deal, without its moving of analyses between threads), the
//!   models with OPT's curve beside them.
//! - `pass_serial` and `pass_fanned`: the whole of `cachescope::report::collect` with 1 and 2
//!   threads, through the pass layer (`pass::Analyses` against `pass::Independent`: one decode,
//!   each batch broadcast to the threads owning the analyses, lanes moving to even the load),
//!   the workload generated as the trace (the same cost in both).
//!
//! Run: `cargo bench -p cachescope-report --bench collect -- --warm-up-time 1 --measurement-time 10`.

use std::hint::black_box;

use cachescope::analysis::Analysis;
use cachescope::trace::{AccessReader, Trace};
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Batch, Source};
use cachescope_report::collect::{CollectOptions, Collector};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn params() -> Params {
    Params {
        refs: Some(2_000_000),
        instructions: true,
        ..Params::default()
    }
}

fn batches() -> Vec<Batch> {
    let mut g = generator(Workload::Phases, &params()).expect("valid parameters");
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if g.read_batch(&mut b).expect("generators do not fail") == 0 {
            return out;
        }
        out.push(b);
    }
}

/// One report's collection over `batches`; returns the data references counted.
fn collect(batches: &[Batch], threads: usize) -> u64 {
    let mut c = Collector::new(CollectOptions::default())
        .expect("default options")
        .with_threads(threads);
    if threads > 1 {
        let (mut even, mut odd) = (Vec::new(), Vec::new());
        for (i, a) in c.analyses_send().into_iter().enumerate() {
            if i % 2 == 0 {
                even.push(a)
            } else {
                odd.push(a)
            }
        }
        std::thread::scope(|s| {
            for mut g in [even, odd] {
                s.spawn(move || {
                    batches
                        .iter()
                        .for_each(|b| g.iter_mut().for_each(|a| a.observe(b)))
                });
            }
        })
    } else {
        let mut all = c.analyses();
        for b in batches {
            all.iter_mut().for_each(|a| a.observe(b));
        }
    }
    let g = generator(Workload::Phases, &params()).expect("valid parameters");
    let trace = Trace::from_reader(Box::new(g), Source::Workload("phases".into()));
    c.finish(&trace).expect("a report").stats.refs
}

/// `cachescope::report::collect` over the generated workload with `threads` threads.
fn through_the_pass(threads: usize) -> u64 {
    let g = generator(Workload::Phases, &params()).expect("valid parameters");
    let mut trace = Trace::from_reader(Box::new(g), Source::Workload("phases".into()));
    cachescope::report::collect(&mut trace, CollectOptions::default(), threads)
        .expect("a report")
        .stats
        .refs
}

fn bench(c: &mut Criterion) {
    let batches = batches();
    let refs = collect(&batches, 1);
    let mut g = c.benchmark_group("report_collect");
    g.sample_size(10);
    g.throughput(Throughput::Elements(refs));
    g.bench_function("one_thread", |b| b.iter(|| black_box(collect(&batches, 1))));
    g.bench_function("two_threads", |b| {
        b.iter(|| black_box(collect(&batches, 2)))
    });
    for (name, threads) in [("pass_serial", 1), ("pass_fanned", 2)] {
        g.bench_function(name, |b| b.iter(|| black_box(through_the_pass(threads))));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // No plots: this crate turns on plotters' `ab_glyph` fonts, which then need a font
    // registered, and criterion's plotting panicked (FontUnavailable) after the first bench.
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
