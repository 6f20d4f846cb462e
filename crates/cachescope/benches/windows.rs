//! The reuse windows' counts (`sampling::Windows`, docs/sampled.md "Reuse windows measured"):
//! references read per second by `distinct_between` on a cyclic sweep, each line referenced
//! twice in a row (a run the count probes once), the reuse of a line's first reference asked
//! at one reference in 64 (within the counts' budget of 2^26 references and 16 a reference):
//!
//! - `sweep_1000`: 1,000 distinct lines between a reuse's references, within the first table;
//! - `sweep_3000`: 3,000, past the first table's half (2,048 lines) as at gzip's cliff (1,245
//!   distinct lines, many windows past 2,048), where the table grows during the count.
//!
//! Run: `cargo bench -p cachescope --bench windows -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::sampling::Windows;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// References of one iteration's stream.
const REFS: u64 = 1 << 18;
/// One reference in this many asks for its reuse's window.
const EVERY: u64 = 64;

/// The line at position `p` (from 1) of a sweep over `lines` lines, two references a line.
fn line(p: u64, lines: u64) -> u64 {
    ((p - 1) / 2) % lines
}

/// Feeds the stream to a fresh `Windows`, counting the asked reuses; returns their sum (so
/// the counts are not optimised away).
fn run(lines: u64) -> u64 {
    let mut w = Windows::default();
    let period = 2 * lines;
    let mut sum = 0;
    for p in 1..=REFS {
        // The first reference of a line's pair (odd `p`) reuses the second one a period ago.
        if p > period && p % EVERY == 1 {
            sum += w
                .distinct_between(p + 1 - period, p)
                .expect("within the ring and budget");
        }
        w.access(line(p, lines), p);
    }
    sum
}

fn windows(c: &mut Criterion) {
    let mut g = c.benchmark_group("windows");
    g.sample_size(10);
    for lines in [1_000u64, 3_000] {
        let period = 2 * lines;
        // Each count reads `period − 2` references, every line but the reused one.
        let counts = (period + 1..=REFS).filter(|p| p % EVERY == 1).count() as u64;
        assert_eq!(run(lines), counts * (lines - 1));
        g.throughput(Throughput::Elements(counts * (period - 2)));
        g.bench_function(format!("sweep_{lines}"), |b| {
            b.iter(|| black_box(run(lines)))
        });
    }
    g.finish();
}

criterion_group!(benches, windows);
criterion_main!(benches);
