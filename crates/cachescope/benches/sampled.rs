//! The sampled report's throughput (issue 57: `report --sampled` against Cachegrind's pace):
//! its analyses on the sampled records, and the whole report of a stream read as a sampled
//! one ([`cachescope::report::sampled::collect`]).
//!
//! The trace: 20 M 8-byte loads of the built-in `zipf` workload over 2^20 lines, generated once
//! into memory, read as the sampled stream at rate 0.1 (about 2 M sampled records; the default
//! rate, 0.01, keeps too few of a trace this size to time):
//!
//! - `analyses`: every analysis of the sampled report (SHARDS, the two-level simulation, the
//!   footprint, the miniatures, OPT's spill, the phases) fed the sampled batches already in
//!   memory, on one thread, without the models after the pass (records per second);
//! - `report_threads_N`: the whole sampled report of the workload, filtered as it is
//!   generated, with the models after the pass, on N threads (full-stream references per
//!   second: what a sampled `report` of a trace file or a workload costs);
//! - `stage_calls_all` and `stage_calls_first_only`: the sampled stage alone
//!   ([`Trace::sampled`]) over 4 M references of a recorded program's mix (three fetches to a
//!   load, a call event every 16 references), already in memory, at rate 0.01, passing every
//!   call event, or only the first ([`Trace::sampled_first_call_only`], as `report --sampled`
//!   reads without `--sampled-calls`: each thread's run filtered whole, calls skipped).
//! - `filter_fixed_size`: the fixed-size line filter alone ([`SpatialFilter::keep`], its
//!   set of sampled hashes full at 2^18 lines, as `report --sampled`'s default bound) over
//!   4 M references, three in four to a hot 2^12 lines and the rest anywhere in 2^22
//!   (references per second: the stage's and the tool stream reader's filtering).
//!
//! Run: `cargo bench -p cachescope --bench sampled -- --warm-up-time 1 --measurement-time 5`.

use std::hint::black_box;

use cachescope::batch::{CallOp, EnterKind};
use cachescope::report::CollectOptions;
use cachescope::report::sampled::{SampledCollector, collect, reuse_options};
use cachescope::spatial::{SpatialFilter, SpatialOptions};
use cachescope::trace::AccessReader;
use cachescope::trace::Trace;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, AccessKind, Batch, Source};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const LINES: u64 = 1 << 20;
const REFS: u64 = 20_000_000;

fn params() -> Params {
    Params {
        lines: LINES,
        refs: Some(REFS),
        ..Params::default()
    }
}

fn spatial() -> SpatialOptions {
    SpatialOptions {
        rate: 0.1,
        ..SpatialOptions::default()
    }
}

/// The workload's trace, read as a sampled stream.
fn workload() -> Trace {
    let g = generator(Workload::Zipf, &params()).expect("valid parameters");
    Trace::from_reader(Box::new(g), Source::Workload("zipf".into()))
}

/// The sampled batches of the workload, in memory.
fn sampled_batches() -> Vec<Batch> {
    let mut trace = workload();
    trace
        .sampled(spatial(), Some(reuse_options(&CollectOptions::default())))
        .expect("valid options");
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if trace.read_batch(&mut b).expect("generators do not fail") == 0 {
            return out;
        }
        b.index_data();
        out.push(b);
    }
}

/// References of the stage's benchmarks.
const STAGE_REFS: u64 = 4_000_000;

/// Batches in memory, read in order.
struct InMemory(std::vec::IntoIter<Batch>);

impl AccessReader for InMemory {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        *batch = self.0.next().unwrap_or_default();
        Ok(batch.len())
    }
}

/// A recorded program's mix: three fetches to a data reference (over 2^16 lines), a call
/// event every 16 references.
fn calls_batches() -> Vec<Batch> {
    let (mut out, mut b) = (Vec::new(), Batch::new());
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..STAGE_REFS {
        if b.is_full() {
            out.push(std::mem::take(&mut b));
        }
        if i % 16 == 0 {
            let op = CallOp::Enter {
                key: i,
                kind: EnterKind::Call,
            };
            b.push_call(1, op);
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let kind = if i % 4 == 3 {
            AccessKind::Load
        } else {
            AccessKind::Instr
        };
        b.push(Access {
            kind,
            ..Access::load((x % (1 << 16)) * 64, 8)
        });
    }
    out.push(b);
    out
}

fn bench_stage(c: &mut Criterion) {
    let batches = calls_batches();
    let mut g = c.benchmark_group("sampled");
    g.sample_size(10);
    g.throughput(Throughput::Elements(STAGE_REFS));
    for first_only in [false, true] {
        let name = if first_only { "first_only" } else { "all" };
        g.bench_function(format!("stage_calls_{name}"), |b| {
            b.iter_batched(
                || batches.clone(),
                |batches| {
                    let reader = InMemory(batches.into_iter());
                    let mut trace =
                        Trace::from_reader(Box::new(reader), Source::Workload("calls".into()));
                    let options = SpatialOptions {
                        rate: 0.01,
                        ..SpatialOptions::default()
                    };
                    trace.sampled(options, None).expect("valid options");
                    if first_only {
                        trace.sampled_first_call_only();
                    }
                    let (mut out, mut kept) = (Batch::new(), 0);
                    while trace.read_batch(&mut out).expect("in memory") > 0 {
                        kept += out.len();
                    }
                    black_box(kept)
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let batches = sampled_batches();
    let records: usize = batches.iter().map(Batch::len).sum();
    let mut g = c.benchmark_group("sampled");
    g.sample_size(10);
    g.throughput(Throughput::Elements(records as u64));
    g.bench_function("analyses", |b| {
        b.iter(|| {
            let mut collector =
                SampledCollector::new(CollectOptions::default(), spatial()).expect("valid");
            for batch in &batches {
                for a in collector.analyses() {
                    a.observe(batch);
                }
            }
            black_box(collector)
        })
    });
    g.throughput(Throughput::Elements(REFS));
    for threads in [1, 2] {
        g.bench_function(format!("report_threads_{threads}"), |b| {
            b.iter(|| {
                let mut trace = workload();
                black_box(collect(
                    &mut trace,
                    CollectOptions::default(),
                    spatial(),
                    threads,
                ))
                .expect("a report")
            })
        });
    }
    g.finish();
}

/// The filter's references: three in four to a hot 2^12 lines, the rest anywhere in 2^22.
fn filter_lines() -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..STAGE_REFS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 4 == 0 {
                x % (1 << 22)
            } else {
                x % (1 << 12)
            }
        })
        .collect()
}

fn bench_filter(c: &mut Criterion) {
    let lines = filter_lines();
    let options = SpatialOptions {
        rate: 1.0,
        max_lines: Some(1 << 18),
        ..SpatialOptions::default()
    };
    // Filled first with other lines: the bench times a full sample's lookups and evictions.
    let mut full = SpatialFilter::new(&options).expect("valid options");
    for l in 0..1u64 << 18 {
        full.keep(l + (1 << 40));
    }
    let mut g = c.benchmark_group("sampled");
    g.sample_size(10);
    g.throughput(Throughput::Elements(STAGE_REFS));
    g.bench_function("filter_fixed_size", |b| {
        b.iter_batched(
            || full.clone(),
            |mut f| black_box(lines.iter().filter(|&&l| f.keep(l)).count()),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench, bench_stage, bench_filter);
criterion_main!(benches);
