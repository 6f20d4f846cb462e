//! The model, fed through the interleaver, against the brute-force machine fed through the
//! brute-force dealer, on random threaded traces: several geometries, core counts, shared
//! and private levels, split L1s, pins and quanta. Every count of every cache, the placement
//! and the per-line coherence misses must agree exactly.

use std::num::NonZeroU64;

use proptest::prelude::*;

use super::brute::Machine;
use super::tuple;
use crate::access::{Access, AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::interleave::Interleaver;
use crate::interleave::tests::{batches, brute};
use crate::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig};
use crate::trace::AccessReader;

/// Small shapes of 16-byte lines, so random traces over 40 lines evict and conflict.
const SHAPES: [&str; 5] = ["32,1,16", "64,2,16", "64,4,16", "128,2,16", "256,4,16"];

#[derive(Clone, Debug)]
struct Case {
    cores: u32,
    split: bool,
    /// Shapes of the levels below the first (0 to 2 of them).
    levels: Vec<usize>,
    first: usize,
    /// Shared levels at the bottom (at most all the levels; none of a split L1).
    shared: usize,
    pins: Vec<(ThreadId, u32)>,
    quantum: u64,
    memory: usize,
    /// `Some(allocate)`: write-backs tracked, with or without write-allocate.
    writes: Option<bool>,
    trace: Vec<(ThreadId, Access)>,
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
            prop::collection::vec((kinds, 0u64..40, 0u64..16), 1..10),
        ),
        1..40,
    );
    (
        1u32..5,
        any::<bool>(),
        0usize..5,
        prop::collection::vec(0usize..5, 0..3),
        0usize..4,
        prop::collection::vec((1u32..6, 0u32..4), 0..3),
        0u64..6,
        (
            0usize..20,
            prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        ),
        runs,
    )
        .prop_map(
            |(cores, split, first, levels, shared, pins, quantum, (memory, writes), runs)| {
                let total = levels.len() + 1;
                let shared = shared.min(total - usize::from(split));
                // One pin per thread, to a core that exists.
                let mut seen = Vec::new();
                let pins = pins
                    .into_iter()
                    .filter(|&(t, _)| {
                        let new = !seen.contains(&t);
                        seen.push(t);
                        new
                    })
                    .map(|(t, c)| (t, c % cores))
                    .collect();
                let trace = runs
                    .into_iter()
                    .flat_map(|(t, accesses)| {
                        accesses.into_iter().map(move |(kind, line, offset)| {
                            // Lines 0-19 and 1024-1043: pairs sharing an owner-memo slot.
                            let line = line % 20 + line / 20 * 1024;
                            let a = Access {
                                addr: line * 16 + offset,
                                size: 1,
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
                    first,
                    shared,
                    pins,
                    quantum,
                    memory,
                    writes,
                    trace,
                }
            },
        )
}

/// Every count of every cache (as `super::tuple` lists them, then its write-backs made and
/// received), the placement, and the coherence misses per line.
type Counted = (
    Vec<([u64; 9], [Option<u64>; 2])>,
    Vec<(ThreadId, u32)>,
    Vec<(u64, u64)>,
);

fn counted(c: &crate::sim::CacheCounts) -> ([u64; 9], [Option<u64>; 2]) {
    (tuple(c), [c.writebacks, c.writebacks_received])
}

fn geometry(k: usize) -> Geometry {
    Geometry::parse(SHAPES[k]).unwrap()
}

/// The fast model's counts, placement and per-line coherence misses.
fn fast(c: &Case) -> Counted {
    let shapes: Vec<usize> = std::iter::once(c.first)
        .chain(c.levels.iter().copied())
        .collect();
    let n = shapes.len();
    let levels = shapes
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
    config.l1i = c.split.then(|| geometry((c.first + 1) % SHAPES.len()));
    config.pins = c.pins.clone();
    config.by_line = true;
    config.writes = c.writes.map(|allocate| crate::sim::Writes { allocate });
    let mut sim = MultiCore::new(&config).unwrap();
    let input = batches(&c.trace, 7);
    match NonZeroU64::new(c.quantum) {
        None => input.iter().for_each(|b| sim.observe(b)),
        Some(q) => {
            let mut il = Interleaver::with_memory(q, c.memory);
            input.iter().for_each(|b| il.observe(b));
            let mut merged = il.finish().unwrap();
            let mut b = Batch::new();
            while merged.read_batch(&mut b).unwrap() > 0 {
                sim.observe(&b);
            }
        }
    }
    let r = sim.finish();
    let counts = r.caches.iter().map(|x| counted(&x.counts)).collect();
    let placement = r.placement.iter().map(|p| (p.thread, p.core)).collect();
    (counts, placement, sim.coherence_by_line().unwrap())
}

/// The brute force's.
fn slow(c: &Case) -> Counted {
    let shapes: Vec<usize> = std::iter::once(c.first)
        .chain(c.levels.iter().copied())
        .collect();
    let n = shapes.len();
    let levels: Vec<(Geometry, bool)> = shapes
        .iter()
        .enumerate()
        .map(|(k, &s)| (geometry(s), k >= n - c.shared))
        .collect();
    let l1i = c.split.then(|| geometry((c.first + 1) % SHAPES.len()));
    let mut m = Machine::new(c.cores, l1i, &levels, &c.pins, c.writes);
    let order = if c.quantum == 0 {
        c.trace.clone()
    } else {
        brute(&c.trace, c.quantum)
    };
    for (t, a) in order {
        m.access(t, a.kind, a.addr / 16);
    }
    let counts = m.counts().iter().map(counted).collect();
    let mut by_line = m.by_line.clone();
    by_line.sort_unstable();
    (counts, m.placement.clone(), by_line)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn agrees_with_the_brute_force_machine(c in case()) {
        let (fast_counts, fast_placement, fast_lines) = fast(&c);
        let (slow_counts, slow_placement, slow_lines) = slow(&c);
        prop_assert_eq!(fast_placement, slow_placement);
        prop_assert_eq!(fast_counts, slow_counts);
        prop_assert_eq!(fast_lines, slow_lines);
    }
}

#[test]
fn the_brute_force_sees_coherence_and_transfers() {
    // Guards the property above against agreeing on nothing: a typical case has them.
    let c = Case {
        cores: 2,
        split: false,
        levels: vec![4],
        first: 1,
        shared: 1,
        pins: vec![],
        quantum: 2,
        memory: 3,
        writes: Some(true),
        trace: (0..400u64)
            .map(|i| {
                let kind = if i % 3 == 0 {
                    AccessKind::Store
                } else {
                    AccessKind::Load
                };
                // Three hot lines, written by both threads, and a scan over 24.
                let addr = if i % 4 == 3 {
                    (i * 7 % 24) * 16
                } else {
                    (i % 3) * 16 + (i % 2) * 4
                };
                (
                    1 + (i / 5 % 2) as ThreadId,
                    Access {
                        addr,
                        size: 4,
                        kind,
                        pc: None,
                    },
                )
            })
            .collect(),
    };
    let (counts, _, lines) = slow(&c);
    let sum = |i: usize| counts.iter().map(|k| k.0[i]).sum::<u64>();
    let writebacks = |i: usize| counts.iter().map(|k| k.1[i].unwrap()).sum::<u64>();
    assert!(
        sum(6) > 0 && sum(7) > 0 && sum(8) > 0 && sum(4) + sum(5) > 0,
        "{counts:?}"
    );
    assert!(writebacks(0) > 0 && writebacks(1) > 0, "{counts:?}");
    assert!(!lines.is_empty());
    assert_eq!(fast(&c), slow(&c));
}
