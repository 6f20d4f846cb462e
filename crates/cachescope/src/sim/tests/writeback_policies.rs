//! Write-backs under every replacement policy, with references of 1-32 bytes that straddle
//! 32-byte lines (Cachegrind's mapping: a reference misses a level when either of its two
//! lines does; like Cachegrind, the simulators take no reference wider than a line), against brute-force caches (`brute.rs`, one per policy) with the dirty lines kept
//! beside them: one cache, and an L1D over an L2, with and without write-allocate.

use std::collections::HashSet;

use proptest::prelude::*;

use super::batch;
use super::brute::Brute;
use crate::access::AccessKind::{self, Load, Modify, Store};
use crate::analysis::Analysis;
use crate::sim::{
    Geometry, HierarchyConfig, LineMapping, MissStats, Op, Policy, SimAnalysis, SimOptions, Writes,
};

const LINE: u64 = 32;

/// A brute-force cache with its dirty lines and the counts a level reports.
struct Naive {
    cache: Brute,
    dirty: HashSet<u64>,
    allocate: bool,
    stats: MissStats,
}

impl Naive {
    fn new(g: Geometry, p: Policy, allocate: bool) -> Naive {
        Naive {
            cache: Brute::new(g, p),
            dirty: HashSet::new(),
            allocate,
            stats: MissStats {
                writebacks: Some(0),
                writebacks_received: Some(0),
                ..MissStats::default()
            },
        }
    }

    /// `line` filled (or touched), dirty when `dirty`: the dirty line it evicted, if any.
    fn fill(&mut self, line: u64, dirty: bool) -> Option<u64> {
        let (_, evicted) = self.cache.access_evicting(line);
        if dirty {
            self.dirty.insert(line);
        }
        let written = evicted.filter(|v| self.dirty.remove(v));
        if written.is_some() {
            *self.stats.writebacks.as_mut().unwrap() += 1;
        }
        written
    }

    /// A demand access to one line: hit, and the dirty line it evicted. A store that misses
    /// under no-write-allocate fills nothing.
    fn demand(&mut self, line: u64, op: Op) -> (bool, Option<u64>) {
        let hit = self.cache.holds(line);
        self.stats.line_accesses += 1;
        self.stats.line_misses += u64::from(!hit);
        if !hit && op == Op::Write && !self.allocate {
            return (false, None);
        }
        (hit, self.fill(line, op != Op::Read))
    }

    /// A write-back from above: installed dirty; the dirty line it evicted.
    fn receive(&mut self, line: u64) -> Option<u64> {
        *self.stats.writebacks_received.as_mut().unwrap() += 1;
        self.fill(line, true)
    }

    fn count_ref(&mut self, hit: bool) {
        self.stats.refs += 1;
        self.stats.misses += u64::from(!hit);
    }
}

/// The lines a reference of `size` bytes at `addr` touches: one, or two when it straddles.
fn lines(addr: u64, size: u32) -> Vec<u64> {
    let (first, last) = (addr / LINE, (addr + u64::from(size) - 1) / LINE);
    (first..=last).collect()
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

/// Sets and ways (powers of two: tree PLRU needs them) of 32-byte lines.
fn shape() -> impl Strategy<Value = Geometry> {
    (0u32..4, 0u32..4)
        .prop_map(|(s, w)| Geometry::new((1 << s) * (1 << w) * LINE, 1 << w, LINE).unwrap())
}

/// References of 1-32 bytes over a span of lines, at any byte: many straddle.
fn trace() -> impl Strategy<Value = Vec<(AccessKind, u64, u32)>> {
    (2u64..48).prop_flat_map(|span| {
        proptest::collection::vec(
            (
                prop_oneof![Just(Load), Just(Store), Just(Modify)],
                0..span * LINE,
                1u32..=32,
            ),
            0..300,
        )
    })
}

/// The policy a hierarchy gives level `k` (1 = L1D, 2 = L2): its seed plus k.
fn at_level(p: Policy, k: u64) -> Policy {
    p.seed().map_or(p, |s| p.with_seed(s.wrapping_add(k)))
}

fn options(allocate: bool) -> SimOptions {
    SimOptions {
        mapping: LineMapping::Straddle,
        writes: Some(Writes { allocate }),
        ..SimOptions::default()
    }
}

fn counts(s: &MissStats) -> [Option<u64>; 6] {
    [
        Some(s.refs),
        Some(s.misses),
        Some(s.line_accesses),
        Some(s.line_misses),
        s.writebacks,
        s.writebacks_received,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn one_cache_writes_back_as_the_brute_force_does(
        g in shape(),
        p in policies(),
        allocate in any::<bool>(),
        t in trace(),
    ) {
        let mut naive = Naive::new(g, p, allocate);
        for &(kind, addr, size) in &t {
            let mut hit = true;
            for line in lines(addr, size) {
                hit &= naive.demand(line, Op::of(kind)).0;
            }
            naive.count_ref(hit);
        }
        let mut sim = SimAnalysis::cache(g, p, options(allocate)).unwrap();
        sim.observe(&batch(&t));
        let levels = sim.finish().levels;
        prop_assert_eq!(counts(&levels[0].stats), counts(&naive.stats), "{:?} {:?}", p, g);
    }

    #[test]
    fn two_levels_write_back_as_the_brute_force_does(
        g1 in shape(),
        g2 in shape(),
        p in policies(),
        allocate in any::<bool>(),
        t in trace(),
    ) {
        let (mut l1, mut l2) = (
            Naive::new(g1, at_level(p, 1), allocate),
            Naive::new(g2, at_level(p, 2), allocate),
        );
        for &(kind, addr, size) in &t {
            let op = Op::of(kind);
            // The farthest level a line came from: 0 the L1D, 1 the L2, 2 memory.
            let mut worst = 0;
            for line in lines(addr, size) {
                let (hit, victim) = l1.demand(line, op);
                if let Some(v) = victim {
                    l2.receive(v);
                }
                if hit {
                    continue;
                }
                let below = if op == Op::Write && !allocate { Op::Write } else { Op::Read };
                let (hit2, _) = l2.demand(line, below); // its dirty victim goes to memory
                worst = worst.max(if hit2 { 1 } else { 2 });
            }
            l1.count_ref(worst == 0);
            if worst >= 1 {
                l2.count_ref(worst == 1);
            }
        }
        let l1i = Geometry::new(LINE, 1, LINE).unwrap();
        let mut config = HierarchyConfig::new(l1i, g1, g2);
        config.policy = p;
        let mut sim = SimAnalysis::hierarchy(&config, options(allocate)).unwrap();
        sim.observe(&batch(&t));
        let levels = sim.finish().levels;
        prop_assert_eq!(counts(&levels[1].stats), counts(&l1.stats), "L1D {:?}", p);
        prop_assert_eq!(counts(&levels[2].stats), counts(&l2.stats), "L2 {:?}", p);
    }
}

#[test]
fn the_brute_force_straddles_and_writes_back_under_every_policy() {
    // Guards the properties above against agreeing on nothing: a store of 8 bytes at the
    // end of a line dirties two lines, and a sweep past the cache writes both back.
    for p in [
        Policy::Lru,
        Policy::Fifo,
        Policy::Random { seed: 1 },
        Policy::Plru,
        Policy::Srrip,
        Policy::Brrip { seed: 1 },
        Policy::Drrip { seed: 1 },
    ] {
        let g = Geometry::new(4 * LINE, 2, LINE).unwrap();
        let mut t = vec![(Store, LINE - 4, 8)];
        t.extend((2..40).map(|l| (Load, l * LINE, 4)));
        let mut sim = SimAnalysis::cache(g, p, options(true)).unwrap();
        sim.observe(&batch(&t));
        let s = &sim.finish().levels[0].stats;
        assert_eq!((s.refs, s.line_accesses), (39, 40), "{p:?}");
        assert_eq!(s.writebacks, Some(2), "{p:?}");
    }
}
