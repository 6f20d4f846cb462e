//! The model against the brute-force machine under every replacement policy, with references
//! of 1-32 bytes at any byte of 16-byte lines, so that many straddle two or three lines: the
//! model takes the line of the first byte (docs/threads.md), and so does the machine. Random
//! threaded traces in their own order (`random.rs` deals them a quantum at a time, under LRU),
//! several geometries, core counts, shared and private levels, split L1s and write-backs.

use proptest::prelude::*;

use super::brute::Machine;
use super::tuple;
use crate::access::{Access, AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::interleave::tests::batches;
use crate::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig, Policy, Writes};

const LINE: u64 = 16;

/// Shapes of 16-byte lines with power-of-two ways (tree PLRU needs them).
const SHAPES: [&str; 5] = ["32,1,16", "64,2,16", "64,4,16", "128,2,16", "256,4,16"];

#[derive(Clone, Debug)]
struct Case {
    cores: u32,
    split: bool,
    /// Shapes of the levels, top down (1 to 3).
    levels: Vec<usize>,
    /// Shared levels at the bottom (none of a split L1).
    shared: usize,
    policy: Policy,
    writes: Option<bool>,
    trace: Vec<(ThreadId, Access)>,
}

fn policies() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Lru),
        Just(Policy::Fifo),
        any::<u64>().prop_map(|seed| Policy::Random { seed }),
        Just(Policy::Plru),
        Just(Policy::Srrip),
        any::<u64>().prop_map(|seed| Policy::Brrip { seed }),
        any::<u64>().prop_map(|seed| Policy::Drrip { seed }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let kinds = prop_oneof![
        3 => Just(AccessKind::Load),
        3 => Just(AccessKind::Store),
        1 => Just(AccessKind::Modify),
        2 => Just(AccessKind::Instr)
    ];
    let runs = prop::collection::vec(
        (
            1u32..5,
            prop::collection::vec((kinds, 0u64..40 * LINE, 1u32..=32), 1..10),
        ),
        1..40,
    );
    (
        1u32..5,
        any::<bool>(),
        prop::collection::vec(0usize..5, 1..4),
        0usize..4,
        policies(),
        prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        runs,
    )
        .prop_map(|(cores, split, levels, shared, policy, writes, runs)| {
            let shared = shared.min(levels.len() - usize::from(split));
            let trace = runs
                .into_iter()
                .flat_map(|(t, accesses)| {
                    accesses.into_iter().map(move |(kind, addr, size)| {
                        let a = Access {
                            addr,
                            size,
                            kind,
                            pc: None,
                        };
                        (t, a)
                    })
                })
                .collect();
            Case {
                cores,
                split,
                levels,
                shared,
                policy,
                writes,
                trace,
            }
        })
}

fn geometry(k: usize) -> Geometry {
    Geometry::parse(SHAPES[k]).unwrap()
}

type Counted = Vec<([u64; 9], [Option<u64>; 2])>;

fn counted(c: &crate::sim::CacheCounts) -> ([u64; 9], [Option<u64>; 2]) {
    (tuple(c), [c.writebacks, c.writebacks_received])
}

/// The fast model's counts of every cache, and its coherence misses per line.
fn fast(c: &Case) -> (Counted, Vec<(u64, u64)>) {
    let n = c.levels.len();
    let levels = c
        .levels
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let name = format!("L{}", k + 1);
            if k >= n - c.shared {
                LevelSpec::shared(&name, geometry(s))
            } else {
                LevelSpec::private(&name, geometry(s))
            }
        })
        .collect();
    let mut config = MultiCoreConfig::new(c.cores, levels);
    config.l1i = c.split.then(|| geometry((c.levels[0] + 1) % SHAPES.len()));
    config.policy = c.policy;
    config.by_line = true;
    config.writes = c.writes.map(|allocate| Writes { allocate });
    let mut sim = MultiCore::new(&config).unwrap();
    for b in batches(&c.trace, 7) {
        sim.observe(&b);
    }
    let r = sim.finish();
    let counts = r.caches.iter().map(|x| counted(&x.counts)).collect();
    (counts, sim.coherence_by_line().unwrap())
}

/// The brute force's, each reference at the line of its first byte.
fn slow(c: &Case) -> (Counted, Vec<(u64, u64)>) {
    let n = c.levels.len();
    let levels: Vec<(Geometry, bool)> = c
        .levels
        .iter()
        .enumerate()
        .map(|(k, &s)| (geometry(s), k >= n - c.shared))
        .collect();
    let l1i = c.split.then(|| geometry((c.levels[0] + 1) % SHAPES.len()));
    let mut m = Machine::with_policy(c.cores, l1i, &levels, &[], c.writes, c.policy);
    for &(t, a) in &c.trace {
        m.access(t, a.kind, a.addr / LINE);
    }
    let counts = m.counts().iter().map(counted).collect();
    let mut by_line = m.by_line.clone();
    by_line.sort_unstable();
    (counts, by_line)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn agrees_with_the_brute_force_machine_under_every_policy(c in case()) {
        prop_assert_eq!(fast(&c), slow(&c), "{:?}", c.policy);
    }
}

#[test]
fn a_reference_straddling_a_line_counts_at_its_first_bytes_line() {
    // Core 0 writes 8 bytes at the end of line 0 (into line 1), then core 1 reads line 1:
    // line 1 was never written, so no coherence miss and no transfer.
    for policy in [Policy::Lru, Policy::Plru, Policy::Drrip { seed: 5 }] {
        let at = |addr, size, kind| Access {
            addr,
            size,
            kind,
            pc: None,
        };
        let c = Case {
            cores: 2,
            split: false,
            levels: vec![1],
            shared: 0,
            policy,
            writes: Some(true),
            trace: vec![
                (1, at(LINE - 4, 8, AccessKind::Store)),
                (2, at(LINE, 4, AccessKind::Load)),
                (2, at(0, 4, AccessKind::Load)),
            ],
        };
        let (counts, lines) = fast(&c);
        assert_eq!((counts.clone(), lines.clone()), slow(&c));
        // [refs, hits, misses, cold, capacity, conflict, coherence, invalidations, transfers]
        let transfers: u64 = counts.iter().map(|k| k.0[8]).sum();
        assert_eq!(transfers, 1, "line 0 only: {counts:?}");
        assert_eq!(lines, Vec::<(u64, u64)>::new());
    }
}
