//! The bounded timeline (module `merge`): merged intervals count exactly what intervals of
//! the length reached count, and the timeline stays under its cap on a long stream.

use super::{IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions, PhaseReport};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::{Batch, NO_PC};
use crate::sim::Geometry;

fn options(interval: u64, unit: IntervalUnit, cap: Option<usize>) -> PhaseOptions {
    PhaseOptions {
        interval,
        unit,
        k: KChoice::Fixed(2),
        methods: vec![
            Method::Setvector,
            Method::SetvectorVector,
            Method::Activity,
            Method::WaveletDc,
            Method::ReuseDistance,
        ],
        l2: Geometry::parse("4K,4,64").expect("valid"),
        restarts: 1,
        max_intervals: cap,
        ..PhaseOptions::default()
    }
}

/// `n` references, every fourth an instruction fetch, the data on a few working sets.
fn stream(n: u64) -> impl Iterator<Item = (u64, AccessKind)> {
    (0..n).map(|i| {
        let kind = if i % 4 == 3 {
            AccessKind::Instr
        } else {
            AccessKind::Load
        };
        let set = (i / 5000) % 3;
        (
            set << 24 | ((i * 2_654_435_761) % (64 << (6 + 2 * set))),
            kind,
        )
    })
}

/// The analysis fed `n` references of [`stream`] in batches of `batch`; `each` sees it after
/// every batch.
fn fed(o: PhaseOptions, n: u64, batch: usize, mut each: impl FnMut(&PhaseAnalysis)) -> PhaseReport {
    let mut a = PhaseAnalysis::new(o).expect("valid options");
    let mut b = Batch::new();
    let all: Vec<(u64, AccessKind)> = stream(n).collect();
    for part in all.chunks(batch) {
        b.clear();
        for &(addr, kind) in part {
            b.push_raw(addr, 8, kind, NO_PC);
        }
        a.observe(&b);
        each(&a);
    }
    a.finish().expect("intervals")
}

#[test]
fn merged_intervals_count_what_intervals_of_the_length_reached_count() {
    for unit in [IntervalUnit::Instructions, IntervalUnit::DataRefs] {
        for (cap, batch, n) in [
            (2, 100, 3_000),
            (3, 77, 20_000),
            (8, 4096, 50_000),
            (5, 1, 4_000),
        ] {
            let bounded = fed(options(16, unit, Some(cap)), n, batch, |_| {});
            let m = bounded.settings.merged;
            assert!(m > 0, "{cap} {n}: merged");
            assert_eq!(bounded.settings.interval, 16 << m);
            let long = fed(options(16 << m, unit, None), n, batch, |_| {});
            let rows = |r: &PhaseReport| -> Vec<_> {
                r.intervals
                    .iter()
                    .map(|i| (i.instructions, i.data_refs, i.l2_accesses, i.l2_hits))
                    .collect()
            };
            assert_eq!(
                rows(&bounded),
                rows(&long),
                "{unit:?}, cap {cap}, batch {batch}"
            );
            assert!(bounded.intervals.len() <= cap + 1);
            assert_eq!(bounded.settings.merged, m);
        }
    }
}

#[test]
fn short_runs_are_not_merged() {
    let bounded = fed(
        options(16, IntervalUnit::DataRefs, Some(1000)),
        3_000,
        64,
        |_| {},
    );
    let free = fed(options(16, IntervalUnit::DataRefs, None), 3_000, 64, |_| {});
    assert_eq!(bounded.intervals, free.intervals);
    let phases = |r: &PhaseReport| -> Vec<_> {
        r.methods
            .iter()
            .map(|m| (m.poec, m.inertia, m.phases.clone()))
            .collect()
    };
    assert_eq!(phases(&bounded), phases(&free));
    assert_eq!(bounded.settings, free.settings);
    assert_eq!(bounded.settings.merged, 0);
}

#[test]
fn the_timeline_stays_under_its_cap_on_a_long_stream() {
    // 10^6 references, 750 000 data, in intervals of 256: 2930 intervals unbounded. A batch
    // closes at most 2 intervals of the first length, so the timeline never passes the cap
    // by more than the pair that waits and the open interval.
    let cap = 64;
    let mut most = 0;
    let r = fed(
        options(256, IntervalUnit::DataRefs, Some(cap)),
        1_000_000,
        512,
        |a| {
            most = most.max(a.intervals());
        },
    );
    assert!(r.settings.merged >= 5);
    assert!(most <= cap + 3, "{most} intervals held");
    assert!(r.intervals.len() > cap / 2 && r.intervals.len() <= cap + 1);
    assert_eq!(r.data_refs, 750_000);
    assert_eq!(
        r.intervals.iter().map(|i| i.data_refs).sum::<u64>(),
        750_000
    );
}
