//! Prefetchers in the multi-core model: one core against the single-core cache and
//! hierarchy (a workload and random traces, every count), and two cores by hand (a prefetch
//! of a line the other core wrote takes it as a read does).

use proptest::prelude::*;

use super::{g, run, workload};
use crate::access::{Access, AccessKind};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::sim::{
    CacheCounts, HierarchyConfig, LevelSpec, MissStats, MultiCore, MultiCoreConfig, PrefetchPolicy,
    SimAnalysis, SimOptions, Writes,
};

const NEXT: PrefetchPolicy = PrefetchPolicy::NextLine { degree: 2 };
const STRIDE: PrefetchPolicy = PrefetchPolicy::Stride {
    degree: 2,
    distance: 3,
};

/// A single-core level's counts in the multi-core cache's terms.
fn single(s: &MissStats) -> [Option<u64>; 9] {
    [
        Some(s.line_accesses),
        Some(s.line_misses),
        s.writebacks,
        s.writebacks_received,
        s.prefetches,
        s.useful_prefetches,
        s.useless_prefetches,
        s.used_bytes,
        s.fetched_bytes,
    ]
}

fn multi(c: &CacheCounts) -> [Option<u64>; 9] {
    [
        Some(c.refs),
        Some(c.misses),
        c.writebacks,
        c.writebacks_received,
        c.prefetches,
        c.useful_prefetches,
        c.useless_prefetches,
        c.used_bytes,
        c.fetched_bytes,
    ]
}

/// One core with one private cache against `SimAnalysis::cache`, and with a split L1 over a
/// private L2 and a shared L3 against the single-core hierarchy, prefetchers `p` at every
/// level (`p[0]` the L1I's).
fn one_core_agrees(trace: &[Batch], p: [PrefetchPolicy; 4], writes: Option<Writes>) {
    let shapes = ["256,2,64", "512,2,64", "2K,4,64", "8K,4,64"];
    let opts = SimOptions {
        writes,
        prefetch: p[1],
        utilization: true,
        ..SimOptions::default()
    };
    let mut h = HierarchyConfig::new(g(shapes[0]), g(shapes[1]), g(shapes[2]));
    h.l3 = Some(g(shapes[3]));
    h.writes = writes;
    h.prefetch = p;
    let mut hier = SimAnalysis::hierarchy(&h, opts).unwrap();
    let mut cache = SimAnalysis::cache(g(shapes[1]), crate::sim::Policy::Lru, opts).unwrap();
    let mut config = MultiCoreConfig::new(
        1,
        vec![
            LevelSpec::private("L1D", g(shapes[1])),
            LevelSpec::private("L2", g(shapes[2])),
            LevelSpec::shared("L3", g(shapes[3])),
        ],
    );
    config.l1i = Some(g(shapes[0]));
    config.writes = writes;
    config.utilization = true;
    config.prefetch = p.to_vec();
    let mut machine = MultiCore::new(&config).unwrap();
    let mut one = MultiCoreConfig::new(1, vec![LevelSpec::private("cache", g(shapes[1]))]);
    (one.writes, one.utilization, one.prefetch) = (writes, true, vec![p[1]]);
    let mut one = MultiCore::new(&one).unwrap();
    for b in trace {
        hier.observe(b);
        machine.observe(b);
        cache.observe(b);
        one.observe(b);
    }
    let (want, got) = (hier.finish(), machine.finish());
    for (w, c) in want.levels.iter().zip(&got.caches) {
        assert_eq!(
            single(&w.stats),
            multi(&c.counts),
            "{p:?} {writes:?} {}",
            w.name
        );
    }
    let (want, got) = (cache.finish(), one.finish());
    assert_eq!(
        single(&want.levels[0].stats),
        multi(&got.caches[0].counts),
        "{p:?} {writes:?} cache"
    );
}

const WRITES: [Option<Writes>; 3] = [
    None,
    Some(Writes { allocate: true }),
    Some(Writes { allocate: false }),
];

#[test]
fn one_core_prefetches_as_the_single_core_simulators_do() {
    let mut trace = workload();
    for b in &mut trace {
        for (kind, &addr) in b.kinds.iter_mut().zip(&b.addrs) {
            if *kind == AccessKind::Load && (addr >> 6) % 3 == 0 {
                *kind = AccessKind::Store;
            }
        }
    }
    let none = PrefetchPolicy::None;
    for p in [
        [none, NEXT, none, none],
        [none, STRIDE, none, none],
        [NEXT, STRIDE, NEXT, STRIDE],
    ] {
        for writes in WRITES {
            one_core_agrees(&trace, p, writes);
        }
    }
}

fn policy(k: u8) -> PrefetchPolicy {
    match k {
        0 => PrefetchPolicy::None,
        1 => NEXT,
        2 => PrefetchPolicy::NextLine { degree: 1 },
        3 => STRIDE,
        _ => PrefetchPolicy::Stride {
            degree: 1,
            distance: 1,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random strided runs by a few instructions, loads, stores and fetches mixed.
    #[test]
    fn one_core_agrees_on_random_traces(
        runs in prop::collection::vec(
            (0u8..4, 1u64..5, 0u64..512, -4i64..5, 1usize..12), 1..40),
        levels in prop::array::uniform4(0u8..5),
        w in 0usize..3,
    ) {
        let mut b = Batch::new();
        for (kind, pc, start, stride, n) in runs {
            let kind = [AccessKind::Load, AccessKind::Store, AccessKind::Modify, AccessKind::Instr]
                [usize::from(kind)];
            for k in 0..n as i64 {
                let line = (start as i64 + stride * k).rem_euclid(512) as u64;
                b.push(Access { addr: line * 64 + 8, size: 8, kind, pc: Some(pc) });
            }
        }
        one_core_agrees(&[b], levels.map(policy), WRITES[w]);
    }
}

fn two_cores() -> MultiCoreConfig {
    let mut c = MultiCoreConfig::new(2, vec![LevelSpec::private("L1", g("32K,8,64"))]);
    c.writes = Some(Writes { allocate: true });
    c.prefetch = vec![PrefetchPolicy::NextLine { degree: 1 }];
    c
}

/// (refs, hits, misses, coherence, invalidations, transfers, writebacks, prefetches, useful,
/// useless) of core `k`'s L1.
fn counts(r: &crate::sim::MultiCoreReport, k: usize) -> [u64; 10] {
    let c = &r.caches[k].counts;
    [
        c.refs,
        c.hits,
        c.misses,
        c.coherence,
        c.invalidations,
        c.transfers,
        c.writebacks.unwrap(),
        c.prefetches.unwrap(),
        c.useful_prefetches.unwrap(),
        c.useless_prefetches.unwrap(),
    ]
}

#[test]
fn a_prefetch_takes_a_line_the_other_core_wrote_as_a_read_does() {
    use AccessKind::{Load as L, Store as S};
    // Thread 2 (first seen: core 0) writes line 0x41 (its miss prefetches 0x42). Thread 1
    // (core 1) misses line 0x40 and prefetches 0x41: core 0's modified copy supplies it and
    // turns clean and shared, its data written back (one write-back at core 0). Thread 1's
    // load of 0x41 hits the prefetched line (useful, and as a tagged line's first use it
    // prefetches 0x42), with no transfer; thread 2 still hits
    // its shared copy, and its next write takes the line from core 1 (an invalidation there).
    let r = run(
        &two_cores(),
        &[
            (2, S, 0x1040),
            (1, L, 0x1000),
            (1, L, 0x1040),
            (2, L, 0x1040),
            (2, S, 0x1040),
        ],
    );
    assert_eq!(counts(&r, 1), [2, 1, 1, 0, 1, 0, 0, 2, 1, 0]);
    assert_eq!(counts(&r, 0), [3, 2, 1, 0, 0, 0, 1, 1, 0, 0]);
    // Without the prefetcher thread 1's load of 0x41 is a miss the owner supplies.
    let mut plain = two_cores();
    plain.prefetch.clear();
    let r = run(&plain, &[(2, S, 0x1040), (1, L, 0x1000), (1, L, 0x1040)]);
    assert_eq!(r.caches[1].counts.transfers, 1);
    assert!(r.caches[1].counts.prefetches.is_none());
}

#[test]
fn a_prefetched_line_another_core_writes_before_its_use_was_useless() {
    use AccessKind::{Load as L, Store as S};
    // As above, but thread 2 writes 0x41 again before thread 1 uses it: core 1's prefetched
    // copy is invalidated unused (useless), and thread 1's load is a miss that core 0's
    // modified copy serves (a transfer, a second write-back there; the miss prefetches 0x42).
    // The miss classes follow the demand stream, as the single-core 3C does: its first
    // demand for 0x41 is a cold miss, not a coherence miss.
    let r = run(
        &two_cores(),
        &[
            (2, S, 0x1040),
            (1, L, 0x1000),
            (2, S, 0x1040),
            (1, L, 0x1040),
        ],
    );
    assert_eq!(counts(&r, 1), [2, 0, 2, 0, 1, 1, 0, 2, 0, 1]);
    assert_eq!(counts(&r, 0), [2, 1, 1, 0, 0, 0, 2, 1, 0, 0]);
}
