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

/// The sampled references of `n` references of [`stream`] (one line in `keep`, by line
/// number) with their places in the full stream, and the data references and fetches before
/// each place.
/// Sampled references as (address, place); per place, (data references, fetches) before it.
type Kept = Vec<(u64, usize)>;
type Before = Vec<(u64, u64)>;

fn sampled_stream(n: u64, keep: u64) -> (Kept, Before) {
    let (mut kept, mut before) = (Vec::new(), Vec::new());
    let (mut data, mut instrs) = (0, 0);
    for (p, (addr, kind)) in stream(n).enumerate() {
        before.push((data, instrs));
        if kind == AccessKind::Instr {
            instrs += 1;
        } else {
            if (addr >> 6).wrapping_mul(0x9e37_79b9_7f4a_7c15) % keep == 0 {
                kept.push((addr, p));
            }
            data += 1;
        }
    }
    before.push((data, instrs));
    (kept, before)
}

/// The analysis fed the sampled stream cut into batches ending at the full-stream places
/// `ends` (sorted, the last the stream's end): each batch spans from the end before.
fn fed_sampled(o: PhaseOptions, n: u64, keep: u64, ends: &[usize]) -> PhaseReport {
    use crate::batch::ThreadSpan;
    use crate::spatial::{Limit, LineHash};
    let (kept, before) = sampled_stream(n, keep);
    let mut a = PhaseAnalysis::new(o).expect("valid options");
    let mut b = Batch::new();
    let (mut from, mut next) = ((0, 0), 0);
    for &end in ends {
        let to = before[end];
        b.start_sampled(LineHash::new(1), Limit::ALL);
        while next < kept.len() && kept[next].1 < end {
            let (addr, p) = kept[next];
            let (d, i) = before[p];
            b.push_sampled(addr, 8, AccessKind::Load, NO_PC, d, i);
            next += 1;
        }
        b.sampling_mut().expect("sampled").span.push(ThreadSpan {
            loads: to.0 - from.0,
            instrs: to.1 - from.1,
            ..ThreadSpan::default()
        });
        a.observe(&b);
        from = to;
    }
    assert_eq!(next, kept.len(), "every sampled reference fed");
    a.finish().expect("intervals")
}

/// What a phases section shows: the intervals (counts, hit rates, labels) and each method's
/// score, clustering and phases.
fn shown(r: &PhaseReport) -> impl PartialEq + std::fmt::Debug {
    let methods: Vec<_> = r
        .methods
        .iter()
        .map(|m| (m.poec, m.k, m.inertia, m.phases.clone()))
        .collect();
    (r.intervals.clone(), methods, r.settings.clone())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// A sampled stream's batches each span many intervals: cut anywhere, the bounded
    /// timeline is the same, and its counts are what intervals of the length reached count.
    #[test]
    fn sampled_batches_cut_anywhere_give_the_same_phases(
        ends in proptest::collection::vec(0usize..40_000, 0..6),
        unit in proptest::sample::select(vec![IntervalUnit::Instructions, IntervalUnit::DataRefs]),
        cap in 2usize..12,
    ) {
        let n = 40_000;
        let mut ends = ends;
        ends.push(n as usize);
        ends.sort_unstable();
        let o = || options(64, unit, Some(cap));
        let cut = fed_sampled(o(), n, 3, &ends);
        let whole = fed_sampled(o(), n, 3, &[n as usize]);
        proptest::prop_assert_eq!(shown(&cut), shown(&whole));
        let m = whole.settings.merged;
        proptest::prop_assert!(m > 0 && whole.intervals.len() <= cap + 1);
        let long = fed_sampled(options(64 << m, unit, None), n, 3, &ends);
        let rows = |r: &PhaseReport| -> Vec<_> {
            r.intervals
                .iter()
                .map(|i| (i.instructions, i.data_refs, i.l2_accesses, i.l2_hits))
                .collect()
        };
        proptest::prop_assert_eq!(rows(&cut), rows(&long));
    }
}
