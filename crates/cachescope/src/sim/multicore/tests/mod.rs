//! Tests of the multi-core model: hand-computed sharing, placement, the checks of the
//! configuration, one core against the single-core simulators, and (`random.rs`) the brute
//! force on random threaded traces.

mod brute;
mod policies;
mod prefetch;
mod random;
mod timed;
mod utilization;

use crate::access::{Access, AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::sim::{
    CacheCounts, Geometry, HierarchyConfig, LevelSpec, MultiCore, MultiCoreConfig, MultiCoreReport,
    Policy, SimAnalysis, SimOptions,
};
use crate::trace::AccessReader;
use crate::workloads::{Params, Workload, generator};

fn g(s: &str) -> Geometry {
    Geometry::parse(s).unwrap()
}

/// Runs `config` over `(thread, kind, address)` accesses, in this order.
fn run(config: &MultiCoreConfig, accesses: &[(ThreadId, AccessKind, u64)]) -> MultiCoreReport {
    let mut b = Batch::new();
    for &(t, kind, addr) in accesses {
        b.set_thread(t);
        b.push(Access {
            addr,
            size: 8,
            kind,
            pc: None,
        });
    }
    let mut sim = MultiCore::new(config).unwrap();
    sim.observe(&b);
    sim.finish()
}

fn l1_only(cores: u32) -> MultiCoreConfig {
    MultiCoreConfig::new(cores, vec![LevelSpec::private("L1", g("32K,8,64"))])
}

/// (refs, hits, misses, cold, capacity, conflict, coherence, invalidations, transfers).
fn tuple(c: &CacheCounts) -> [u64; 9] {
    [
        c.refs,
        c.hits,
        c.misses,
        c.cold,
        c.capacity,
        c.conflict,
        c.coherence,
        c.invalidations,
        c.transfers,
    ]
}

#[test]
fn two_threads_writing_one_line_in_turn_miss_on_coherence_after_the_first_two() {
    let writes: Vec<_> = (0..10)
        .map(|k| (1 + k % 2, AccessKind::Store, 0x1000))
        .collect();
    let r = run(&l1_only(2), &writes);
    // Each write after the first takes the line from the other core (a transfer) and
    // invalidates its copy; every miss after the two cold ones is a coherence miss.
    assert_eq!(tuple(&r.totals[0].counts), [10, 0, 10, 2, 0, 0, 8, 9, 9]);
    assert_eq!(tuple(&r.caches[0].counts), [5, 0, 5, 1, 0, 0, 4, 5, 4]);
    assert_eq!(tuple(&r.caches[1].counts), [5, 0, 5, 1, 0, 0, 4, 4, 5]);
}

#[test]
fn readers_share_a_line_and_a_write_takes_it_from_them() {
    use AccessKind::{Load as L, Store as S};
    let r = run(
        &l1_only(2),
        &[
            (1, S, 64),
            (2, L, 64),
            (1, L, 64),
            (2, L, 64),
            (1, S, 64),
            (2, L, 64),
        ],
    );
    // Core 1 reads core 0's modified line (a transfer; core 0 keeps a shared copy and hits);
    // core 0's second write invalidates core 1's copy, whose next read is a coherence miss
    // served by core 0 again.
    assert_eq!(tuple(&r.caches[0].counts), [3, 2, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(tuple(&r.caches[1].counts), [3, 1, 2, 1, 0, 0, 1, 1, 2]);
}

#[test]
fn a_line_the_shadow_would_have_lost_anyway_is_a_capacity_miss() {
    use AccessKind::{Load as L, Store as S};
    // Two-line fully associative L1s: core 0 loses line 0 to core 1's write, then touches
    // three other lines, which would have evicted it anyway (core 1 still supplies it).
    let config = MultiCoreConfig::new(2, vec![LevelSpec::private("L1", g("128,2,64"))]);
    let r = run(
        &config,
        &[
            (1, L, 0),
            (2, S, 0),
            (1, L, 64),
            (1, L, 128),
            (1, L, 192),
            (1, L, 0),
        ],
    );
    assert_eq!(tuple(&r.caches[0].counts), [5, 0, 5, 4, 1, 0, 0, 1, 1]);
    // Without the detour the same miss is a coherence miss.
    let r = run(&config, &[(1, L, 0), (2, S, 0), (1, L, 64), (1, L, 0)]);
    assert_eq!(tuple(&r.caches[0].counts), [3, 0, 3, 2, 0, 0, 1, 1, 1]);
}

#[test]
fn a_transfer_skips_the_shared_level() {
    let config = MultiCoreConfig::new(
        2,
        vec![
            LevelSpec::private("L1", g("32K,8,64")),
            LevelSpec::shared("LL", g("1M,16,64")),
        ],
    );
    let writes: Vec<_> = (0..10)
        .map(|k| (1 + k % 2, AccessKind::Store, 0x1000))
        .collect();
    let r = run(&config, &writes);
    // Only the very first miss goes to memory through the LL.
    assert_eq!(tuple(&r.totals[1].counts), [1, 0, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(r.totals[0].counts.coherence, 8);
}

#[test]
fn threads_go_round_robin_by_first_appearance_unless_pinned() {
    let loads = [
        (5, AccessKind::Load, 0),
        (3, AccessKind::Load, 0),
        (9, AccessKind::Load, 0),
    ];
    let cores = |r: &MultiCoreReport| -> Vec<(ThreadId, u32)> {
        r.placement.iter().map(|p| (p.thread, p.core)).collect()
    };
    assert_eq!(cores(&run(&l1_only(2), &loads)), [(5, 0), (3, 1), (9, 0)]);
    let mut pinned = l1_only(2);
    pinned.pins = vec![(3, 0)];
    assert_eq!(cores(&run(&pinned, &loads)), [(5, 0), (3, 0), (9, 1)]);
    // Both writers pinned to one core share its cache: no coherence at all.
    pinned.pins = vec![(2, 0)];
    let writes: Vec<_> = (0..10)
        .map(|k| (1 + k % 2, AccessKind::Store, 0x1000))
        .collect();
    let r = run(&pinned, &writes);
    assert_eq!(tuple(&r.totals[0].counts), [10, 9, 1, 1, 0, 0, 0, 0, 0]);
}

#[test]
fn coherence_misses_are_counted_per_line_on_request() {
    let mut config = l1_only(2);
    let mut accesses = Vec::new();
    for k in 0..20u32 {
        accesses.push((1 + k % 2, AccessKind::Store, 0x1000 + 8 * u64::from(k % 2)));
        accesses.push((1 + k % 2, AccessKind::Load, 0x8000 + 64 * u64::from(k % 2)));
    }
    let mut sim = MultiCore::new(&config).unwrap();
    assert_eq!(sim.coherence_by_line(), None);
    config.by_line = true;
    sim = MultiCore::new(&config).unwrap();
    let mut b = Batch::new();
    for &(t, kind, addr) in &accesses {
        b.set_thread(t);
        b.push(Access {
            addr,
            size: 8,
            kind,
            pc: None,
        });
    }
    sim.observe(&b);
    // The falsely shared line 0x1000/64 pays every coherence miss; the private lines none.
    let total = sim.finish().totals[0].counts.coherence;
    assert_eq!(total, 18);
    assert_eq!(sim.coherence_by_line(), Some(vec![(0x1000 / 64, 18)]));
}

#[test]
fn impossible_machines_are_refused_with_the_reason() {
    let err = |c: MultiCoreConfig| MultiCore::new(&c).unwrap_err().to_string();
    assert!(err(l1_only(0)).contains("give 1 to 1024"));
    let mut c = l1_only(2);
    c.pins = vec![(2, 2)];
    assert!(err(c.clone()).contains("pinned to core 2, but the 2 cores are numbered 0 to 1"));
    c.pins = vec![(2, 1), (2, 0)];
    assert!(err(c).contains("both core 1 and core 0"));
    let c = MultiCoreConfig::new(
        2,
        vec![
            LevelSpec::shared("L1", g("32K,8,64")),
            LevelSpec::private("L2", g("1M,16,64")),
        ],
    );
    assert!(err(c).contains("a private cache cannot sit below a shared one"));
    let c = MultiCoreConfig::new(
        2,
        vec![
            LevelSpec::private("L1", g("32K,8,64")),
            LevelSpec::private("L2", g("1M,16,128")),
        ],
    );
    assert!(err(c).contains("one line size"));
    let mut c = MultiCoreConfig::new(2, vec![LevelSpec::shared("L1D", g("32K,8,64"))]);
    c.l1i = Some(g("32K,8,64"));
    assert!(err(c).contains("private to each core"));
}

/// A workload with instruction fetches, on one thread.
fn workload() -> Vec<Batch> {
    let p = Params {
        refs: Some(60_000),
        lines: 3000,
        instructions: true,
        ..Params::default()
    };
    let mut source = generator(Workload::Phases, &p).unwrap();
    let mut out = Vec::new();
    let mut b = Batch::new();
    while source.read_batch(&mut b).unwrap() > 0 {
        out.push(std::mem::take(&mut b));
    }
    out
}

#[test]
fn one_core_counts_what_the_single_core_simulators_count() {
    let trace = workload();
    for policy in [
        Policy::Lru,
        Policy::Fifo,
        Policy::Random { seed: 7 },
        Policy::Plru,
        Policy::Drrip { seed: 3 },
    ] {
        let opts = SimOptions {
            three_c: true,
            ..SimOptions::default()
        };
        // One data cache.
        let mut single = SimAnalysis::cache(g("8K,4,64"), policy, opts).unwrap();
        let mut config = MultiCoreConfig::new(1, vec![LevelSpec::private("cache", g("8K,4,64"))]);
        config.policy = policy;
        let mut multi = MultiCore::new(&config).unwrap();
        // A split L1 over an L2 and a shared L3.
        let mut h = HierarchyConfig::new(g("4K,2,64"), g("8K,4,64"), g("64K,8,64"));
        h.l3 = Some(g("256K,16,64"));
        h.policy = policy;
        let mut hier = SimAnalysis::hierarchy(&h, opts).unwrap();
        let mut config = MultiCoreConfig::new(
            1,
            vec![
                LevelSpec::private("L1D", g("8K,4,64")),
                LevelSpec::private("L2", g("64K,8,64")),
                LevelSpec::shared("L3", g("256K,16,64")),
            ],
        );
        config.l1i = Some(g("4K,2,64"));
        config.policy = policy;
        let mut split = MultiCore::new(&config).unwrap();
        for b in &trace {
            single.observe(b);
            multi.observe(b);
            hier.observe(b);
            split.observe(b);
        }
        for (want, got) in [
            (single.finish(), multi.finish()),
            (hier.finish(), split.finish()),
        ] {
            assert_eq!(want.levels.len(), got.caches.len());
            for (w, c) in want.levels.iter().zip(&got.caches) {
                let three = w.stats.three_c.unwrap();
                let c = &c.counts;
                assert_eq!(
                    (
                        w.stats.refs,
                        w.stats.misses,
                        three.cold,
                        three.capacity,
                        three.conflict
                    ),
                    (c.refs, c.misses, c.cold, c.capacity, c.conflict),
                    "{policy:?} {}",
                    w.name
                );
                assert_eq!((c.coherence, c.invalidations, c.transfers), (0, 0, 0));
            }
        }
    }
}

#[test]
fn write_backs_come_from_evictions_and_from_a_read_of_a_modified_line() {
    use AccessKind::{Load, Store};
    // Direct-mapped private L1s of two lines (0x0 and 0x80 share a set) over a shared L2.
    let mut config = MultiCoreConfig::new(
        2,
        vec![
            LevelSpec::private("L1", g("128,1,64")),
            LevelSpec::shared("L2", g("4K,4,64")),
        ],
    );
    config.writes = Some(crate::sim::Writes { allocate: true });
    let r = run(
        &config,
        &[
            // Core 0 writes A: dirty in its L1, fetched from L2 as a read.
            (1, Store, 0x0),
            // Core 1 reads it: core 0 supplies it and its copy turns clean, written back to L2.
            (2, Load, 0x0),
            // Core 0 writes it again (a hit): core 1's copy goes.
            (1, Store, 0x0),
            // B evicts the dirty A from core 0's L1: written back again.
            (1, Load, 0x80),
        ],
    );
    let wb = |k: usize| {
        let c = &r.caches[k].counts;
        (c.refs, c.hits, c.writebacks, c.writebacks_received)
    };
    assert_eq!(wb(0), (3, 1, Some(2), Some(0)), "core 0's L1");
    assert_eq!(wb(1), (1, 0, Some(0), Some(0)), "core 1's L1");
    assert_eq!(r.caches[1].counts.transfers, 1);
    assert_eq!(r.caches[1].counts.invalidations, 1);
    assert_eq!(wb(2), (2, 0, Some(0), Some(2)), "the shared L2");
    // Untracked, the counts are absent and the rest unchanged.
    config.writes = None;
    let plain = run(&config, &[(1, Store, 0x0), (2, Load, 0x0)]);
    assert_eq!(plain.caches[0].counts.writebacks, None);
    assert_eq!(plain.caches[1].counts.transfers, 1);
}

#[test]
fn one_core_counts_the_write_backs_of_the_single_core_hierarchy() {
    use crate::sim::Writes;
    // The workload loads only: some of its loads become stores and modifies.
    let mut trace = workload();
    for b in &mut trace {
        for (kind, &addr) in b.kinds.iter_mut().zip(&b.addrs) {
            if *kind == AccessKind::Load {
                *kind = match (addr >> 6) % 5 {
                    0 | 1 => AccessKind::Store,
                    2 => AccessKind::Modify,
                    _ => AccessKind::Load,
                };
            }
        }
    }
    for allocate in [true, false] {
        let writes = Some(Writes { allocate });
        let mut h = HierarchyConfig::new(g("4K,2,64"), g("8K,4,64"), g("64K,8,64"));
        h.l3 = Some(g("256K,16,64"));
        h.writes = writes;
        let mut hier = SimAnalysis::hierarchy(&h, SimOptions::default()).unwrap();
        let mut config = MultiCoreConfig::new(
            1,
            vec![
                LevelSpec::private("L1D", g("8K,4,64")),
                LevelSpec::private("L2", g("64K,8,64")),
                LevelSpec::shared("L3", g("256K,16,64")),
            ],
        );
        config.l1i = Some(g("4K,2,64"));
        config.writes = writes;
        let mut split = MultiCore::new(&config).unwrap();
        for b in &trace {
            hier.observe(b);
            split.observe(b);
        }
        let (want, got) = (hier.finish(), split.finish());
        assert!(want.levels[1].stats.writebacks.unwrap() > 0);
        for (w, c) in want.levels.iter().zip(&got.caches) {
            let c = &c.counts;
            assert_eq!(
                (
                    w.stats.refs,
                    w.stats.misses,
                    w.stats.writebacks,
                    w.stats.writebacks_received
                ),
                (c.refs, c.misses, c.writebacks, c.writebacks_received),
                "allocate {allocate}, {}",
                w.name
            );
        }
    }
}
