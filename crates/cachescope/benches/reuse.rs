//! Exact distance analysis throughput (references per second) over 1 Mi distinct lines.
//!
//! Two 20 M-reference streams of 8-byte loads from the built-in workloads, generated once into
//! memory: `random` (uniform over 2^20 lines, all touched: reuses are ~1 M lines deep and the
//! line table misses the cache on every reference, the worst case) and `zipf` (s = 1 over 2^20
//! lines, 950 550 of them touched: a hot head and a long tail). Each iteration feeds every batch
//! to a fresh analysis, then (for stack distances) evaluates the exact LRU curve at the
//! default 57 sizes, so the times include compaction and curve evaluation.
//!
//! Measured on one core of a 2-core Xeon (Sapphire Rapids, KVM guest, other jobs running),
//! with the default layout (exact below 2^16):
//!
//! | stream | stack distances + LRU curve | reuse times |
//! |---|---|---|
//! | zipf, 1 Mi lines | 27–28 M references/s | 46 M references/s |
//! | uniform, 1 Mi lines | 24–25 M references/s | 41 M references/s |
//!
//! and random replacement at 15 sizes, 3.3 M references/s (50 M cache accesses/s).
//!
//! Run: `cargo bench -p cachescope --bench reuse -- --warm-up-time 2 --measurement-time 12`.

use std::hint::black_box;

use cachescope::reuse::{Options, RandomReplacementAnalysis, default_sizes, sizes_log_range};
use cachescope::workloads::Workload;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

const LINES: u64 = 1 << 20;
const REFS: u64 = 20_000_000;

fn distances(c: &mut Criterion) {
    let sizes = default_sizes();
    let options = Options::default();
    for w in [Workload::Random, Workload::Zipf] {
        let trace = workload::loads(w, LINES, REFS);
        let mut g = c.benchmark_group(format!("reuse/{}_1Mi_lines_20M_refs", w.name()));
        g.throughput(Throughput::Elements(REFS));
        g.sample_size(10);
        workload::exact_passes(&mut g, &trace, options, &sizes, "stack_distance_mrc");
        g.finish();
    }

    // Random replacement: one cache per size, 1 per octave from 4 KiB to 64 MiB (15 sizes).
    let refs = 2_000_000;
    let trace = workload::loads(Workload::Zipf, LINES, refs);
    let sizes = sizes_log_range(4 << 10, 64 << 20, 1).unwrap();
    let mut g = c.benchmark_group("reuse/zipf_1Mi_lines_2M_refs");
    g.throughput(Throughput::Elements(refs));
    g.sample_size(10);
    g.bench_function("random_replacement_15_sizes", |b| {
        b.iter(|| {
            let mut a = RandomReplacementAnalysis::new(options, &sizes, 1);
            workload::feed(&mut a, &trace);
            black_box(a.finish())
        })
    });
    g.finish();
}

criterion_group!(benches, distances);
criterion_main!(benches);
