//! Line utilization against a naive per-set LRU that keeps the touched byte addresses of each
//! resident line in a set, for one cache (both line mappings, write-allocate or not) and for
//! a non-inclusive L1I/L1D over an L2; and small cases computed by hand.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::batch;
use crate::access::AccessKind::{self, Instr, Load, Modify, Store};
use crate::analysis::Analysis;
use crate::sim::{
    Geometry, HierarchyConfig, LevelReport, Policy, PrefetchPolicy, SimAnalysis, SimOptions, Writes,
};

/// A naive LRU cache: per set, its lines most recent first; beside them each resident line's
/// touched byte addresses.
struct Naive {
    sets: Vec<Vec<u64>>,
    assoc: usize,
    shift: u32,
    touched: HashMap<u64, HashSet<u64>>,
    used: u64,
    fetched: u64,
}

impl Naive {
    fn new(sets: u64, assoc: u32, line: u64) -> Naive {
        Naive {
            sets: vec![Vec::new(); sets as usize],
            assoc: assoc as usize,
            shift: line.trailing_zeros(),
            touched: HashMap::new(),
            used: 0,
            fetched: 0,
        }
    }

    /// Looks `line` up, filling it on a miss when `fill`: true on a hit.
    fn access(&mut self, line: u64, fill: bool) -> bool {
        let n = self.sets.len() as u64;
        let set = &mut self.sets[(line % n) as usize];
        let hit = match set.iter().position(|&l| l == line) {
            Some(i) => {
                set.remove(i);
                true
            }
            None => false,
        };
        if !hit && !fill {
            return false;
        }
        set.insert(0, line);
        if !hit {
            self.touched.insert(line, HashSet::new());
        }
        if set.len() > self.assoc {
            let out = set.pop().unwrap();
            let bytes = self.touched.remove(&out).unwrap();
            self.used += bytes.len() as u64;
            self.fetched += 1 << self.shift;
        }
        hit
    }

    /// Every byte of the reference on a resident line.
    fn touch(&mut self, addr: u64, size: u32) {
        for a in addr..addr + u64::from(size.max(1)) {
            if let Some(t) = self.touched.get_mut(&(a >> self.shift)) {
                t.insert(a);
            }
        }
    }

    fn totals(&self) -> (u64, u64) {
        let resident: u64 = self.touched.values().map(|t| t.len() as u64).sum();
        let lines = self.touched.len() as u64;
        (self.used + resident, self.fetched + (lines << self.shift))
    }
}

fn totals(l: &LevelReport) -> (u64, u64) {
    (l.stats.used_bytes.unwrap(), l.stats.fetched_bytes.unwrap())
}

/// (kind, address, size) with addresses over `span` lines of `line` bytes.
fn trace(kinds: Vec<AccessKind>) -> impl Strategy<Value = (u64, Vec<(AccessKind, u64, u32)>)> {
    (
        prop_oneof![Just(1u64), Just(8), Just(64), Just(128), Just(256)],
        1u64..30,
    )
        .prop_flat_map(move |(line, span)| {
            let one = (
                proptest::sample::select(kinds.clone()),
                0..span * line,
                proptest::sample::select(vec![1u32, 2, 4, 8, 16, 32, 64]),
            );
            (Just(line), proptest::collection::vec(one, 0..300))
        })
}

fn run(sim: &mut SimAnalysis, t: &[(AccessKind, u64, u32)]) -> Vec<LevelReport> {
    sim.observe(&batch(t));
    sim.finish().levels
}

proptest! {
    #[test]
    fn one_cache_agrees_with_the_naive_byte_sets(
        (sets, ways) in (1u64..6, 1u32..5),
        straddle in any::<bool>(),
        writes in prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        (line, t) in trace(vec![Load, Store, Modify]),
    ) {
        let g = Geometry::new(sets * u64::from(ways) * line, ways, line).unwrap();
        let mut naive = Naive::new(sets, ways, line);
        for &(k, addr, size) in &t {
            let fill = k != Store || writes != Some(false);
            let (first, last) = (addr >> naive.shift, (addr + u64::from(size) - 1) >> naive.shift);
            naive.access(first, fill);
            if straddle && last != first {
                naive.access(last, fill);
            }
            naive.touch(addr, size);
        }
        let opts = SimOptions {
            utilization: true,
            writes: writes.map(|allocate| Writes { allocate }),
            mapping: if straddle {
                crate::sim::LineMapping::Straddle
            } else {
                crate::sim::LineMapping::FirstByte
            },
            ..SimOptions::default()
        };
        let levels = run(&mut SimAnalysis::cache(g, Policy::Lru, opts).unwrap(), &t);
        prop_assert_eq!(totals(&levels[0]), naive.totals());
        // Tracking changes no hit.
        let plain = SimOptions { utilization: false, ..opts };
        let plain = run(&mut SimAnalysis::cache(g, Policy::Lru, plain).unwrap(), &t);
        prop_assert_eq!(plain[0].stats.misses, levels[0].stats.misses);
        prop_assert_eq!(plain[0].stats.used_bytes, None);
    }

    #[test]
    fn a_hierarchy_agrees_with_the_naive_byte_sets(
        (s1, w1) in (1u64..4, 1u32..4),
        (s2, w2) in (1u64..6, 1u32..5),
        (line, t) in trace(vec![Instr, Load, Store]),
    ) {
        let (mut i1, mut d1) = (Naive::new(s1, w1, line), Naive::new(s1, w1, line));
        let mut l2 = Naive::new(s2, w2, line);
        for &(k, addr, size) in &t {
            let l = addr >> l2.shift;
            let l1 = if k == Instr { &mut i1 } else { &mut d1 };
            if !l1.access(l, true) {
                l2.access(l, true);
            }
            l1.touch(addr, size);
            l2.touch(addr, size);
        }
        let geo = |s: u64, w: u32| Geometry::new(s * u64::from(w) * line, w, line).unwrap();
        let config = HierarchyConfig::new(geo(s1, w1), geo(s1, w1), geo(s2, w2));
        let opts = SimOptions { utilization: true, ..SimOptions::default() };
        let levels = run(&mut SimAnalysis::hierarchy(&config, opts).unwrap(), &t);
        prop_assert_eq!(totals(&levels[0]), i1.totals());
        prop_assert_eq!(totals(&levels[1]), d1.totals());
        prop_assert_eq!(totals(&levels[2]), l2.totals());
    }
}

/// 8 bytes read from each 64-byte line: 1/8 of every fetched byte used, resident lines
/// counted at the end.
#[test]
fn one_field_of_each_line_is_an_eighth() {
    let g = Geometry::parse("1K,2,64").unwrap();
    let opts = SimOptions {
        utilization: true,
        ..SimOptions::default()
    };
    let t: Vec<_> = (0..100u64).map(|i| (Load, i * 64 + 16, 8)).collect();
    let levels = run(&mut SimAnalysis::cache(g, Policy::Lru, opts).unwrap(), &t);
    assert_eq!(totals(&levels[0]), (800, 6400));
    assert_eq!(levels[0].stats.utilization(), Some(0.125));
}

/// A next-line prefetch fetches line 1, which nothing touches: 8 of 128 bytes used.
#[test]
fn an_unused_prefetch_is_fetched_and_unused() {
    let g = Geometry::parse("1K,2,64").unwrap();
    let opts = SimOptions {
        utilization: true,
        prefetch: PrefetchPolicy::NextLine { degree: 1 },
        ..SimOptions::default()
    };
    let levels = run(
        &mut SimAnalysis::cache(g, Policy::Lru, opts).unwrap(),
        &[(Load, 0, 8)],
    );
    assert_eq!(levels[0].stats.prefetches, Some(1));
    assert_eq!(totals(&levels[0]), (8, 128));
}

/// Direct mapped, two lines: an access spanning lines 0 and 1 marks both while resident; the
/// refill of line 0 after its eviction starts untouched.
#[test]
fn spanning_and_refills_by_hand() {
    let g = Geometry::parse("128,1,64").unwrap(); // 2 sets
    let opts = SimOptions {
        utilization: true,
        ..SimOptions::default()
    };
    let t = [
        (Load, 0, 4),    // line 0: miss, bytes 0..4
        (Load, 64, 4),   // line 1: miss, bytes 0..4
        (Load, 60, 8),   // line 0 hit: bytes 60..64, and 0..4 of line 1 again
        (Load, 128, 16), // line 2 evicts line 0 (8 used)
        (Load, 0, 1),    // line 0 evicts line 2 (16 used), 1 byte
    ];
    let levels = run(&mut SimAnalysis::cache(g, Policy::Lru, opts).unwrap(), &t);
    // Left: 8 + 16; resident at the end: line 0 (1), line 1 (4, counted once).
    assert_eq!(totals(&levels[0]), (8 + 16 + 1 + 4, 4 * 64));
}
