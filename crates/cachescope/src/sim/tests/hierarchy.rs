//! Hierarchies: chaining, inclusion and exclusion.

use proptest::prelude::*;

use crate::sim::{Cache, Geometry, Hierarchy, HierarchyConfig, Inclusion, Policy, Served};

fn geo(size: u64, assoc: u32) -> Geometry {
    Geometry::new(size, assoc, 1).unwrap()
}

/// L1I and L1D of 2 lines (one set), L2 of 4 lines (2 sets of 2), optional L3 of 8 lines.
fn config(inclusion: Inclusion, l3: bool) -> HierarchyConfig {
    HierarchyConfig {
        l3: l3.then(|| geo(8, 4)),
        inclusion,
        ..HierarchyConfig::new(geo(2, 2), geo(2, 2), geo(4, 2))
    }
}

fn sorted(c: &Cache) -> Vec<u64> {
    let mut v = c.resident_lines();
    v.sort_unstable();
    v
}

#[test]
fn non_inclusive_levels_see_exactly_the_misses_above() {
    let trace: Vec<(u64, bool)> = (0..3000u64).map(|i| ((i * 37) % 23, i % 3 == 0)).collect();
    let mut h = Hierarchy::new(&config(Inclusion::NonInclusive, true), false).unwrap();
    let [mut l1i, mut l1d, mut l2, mut l3] =
        [geo(2, 2), geo(2, 2), geo(4, 2), geo(8, 4)].map(|g| Cache::new(g, Policy::Lru).unwrap());
    for &(line, instr) in &trace {
        let l1 = if instr { &mut l1i } else { &mut l1d };
        let want = if l1.access(line) {
            Served::L1
        } else if l2.access(line) {
            Served::L2
        } else if l3.access(line) {
            Served::L3
        } else {
            Served::Memory
        };
        assert_eq!(h.reference(line, line, instr), want);
    }
    let stats: Vec<_> = h.levels().map(|(n, _, s)| (n, s.clone())).collect();
    assert_eq!(stats[0].1.refs, 1000);
    assert_eq!(stats[1].1.refs, 2000);
    assert_eq!(stats[2].1.refs, stats[0].1.misses + stats[1].1.misses);
    assert_eq!(stats[3].1.refs, stats[2].1.misses);
}

#[test]
fn inclusive_l2_eviction_back_invalidates_l1() {
    // L1D holds 0. Instruction fetches of 2 and 4 (L2 set 0, like line 0) fill L2 set 0, whose
    // LRU line is 0: it leaves L2, and so L1D. Without inclusion L1D keeps it.
    for (inclusion, l1d_keeps) in [
        (Inclusion::Inclusive, false),
        (Inclusion::NonInclusive, true),
    ] {
        let mut h = Hierarchy::new(&config(inclusion, false), false).unwrap();
        h.access_line(0, false);
        h.access_line(2, true);
        h.access_line(4, true);
        let caches: Vec<&Cache> = h.caches().collect();
        assert_eq!(caches[1].contains(0), l1d_keeps, "{inclusion:?}");
        assert_eq!(sorted(caches[2]), [2, 4]);
        let want = if l1d_keeps {
            Served::L1
        } else {
            Served::Memory
        };
        assert_eq!(h.access_line(0, false), want);
    }
}

#[test]
fn exclusive_l1_victims_fill_l2_and_move_back_up() {
    let mut h = Hierarchy::new(&config(Inclusion::Exclusive, false), false).unwrap();
    for l in [0, 1, 2] {
        assert_eq!(h.access_line(l, false), Served::Memory);
    }
    // L1D holds 1, 2; its victim 0 went to L2.
    let caches: Vec<&Cache> = h.caches().collect();
    assert_eq!(
        (sorted(caches[1]), sorted(caches[2])),
        (vec![1, 2], vec![0])
    );
    // 0 comes back from L2 (and leaves it); L1D's victim 1 goes down.
    assert_eq!(h.access_line(0, false), Served::L2);
    let caches: Vec<&Cache> = h.caches().collect();
    assert_eq!(
        (sorted(caches[1]), sorted(caches[2])),
        (vec![0, 2], vec![1])
    );
}

#[test]
fn levels_must_share_a_line_size() {
    let c = HierarchyConfig::new(
        Geometry::new(1024, 2, 64).unwrap(),
        Geometry::new(1024, 2, 64).unwrap(),
        Geometry::new(4096, 2, 128).unwrap(),
    );
    let e = Hierarchy::new(&c, false).unwrap_err().to_string();
    assert!(e.contains("L1D has 64 B lines, L2 128 B"), "{e}");
}

#[test]
fn straddling_reference_counts_once_per_level() {
    let mut h = Hierarchy::new(&config(Inclusion::NonInclusive, false), false).unwrap();
    assert_eq!(h.reference(0, 1, false), Served::Memory);
    assert_eq!(h.reference(1, 1, false), Served::L1);
    let s: Vec<_> = h.levels().map(|(_, _, s)| s.clone()).collect();
    assert_eq!(
        (s[1].refs, s[1].misses, s[1].line_accesses, s[1].line_misses),
        (2, 1, 3, 2)
    );
    assert_eq!((s[2].refs, s[2].misses, s[2].line_accesses), (1, 1, 2));
}

fn accesses() -> impl Strategy<Value = Vec<(u64, bool)>> {
    proptest::collection::vec((0u64..24, any::<bool>()), 0..300)
}

proptest! {
    #[test]
    fn exclusive_never_holds_a_line_at_two_levels(t in accesses(), seed in any::<u64>()) {
        for policy in [Policy::Lru, Policy::Random { seed }] {
            let c = HierarchyConfig { policy, ..config(Inclusion::Exclusive, true) };
            let mut h = Hierarchy::new(&c, true).unwrap();
            for &(line, instr) in &t {
                h.access_line(line, instr);
                let c: Vec<Vec<u64>> = h.caches().map(sorted).collect();
                for upper in 0..4 {
                    for lower in upper.max(2)..4 {
                        if upper == lower { continue; }
                        for l in &c[upper] {
                            prop_assert!(!c[lower].contains(l), "line {} at levels {} and {}", l, upper, lower);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn inclusive_lower_levels_hold_everything_above(t in accesses()) {
        let mut h = Hierarchy::new(&config(Inclusion::Inclusive, true), true).unwrap();
        for &(line, instr) in &t {
            h.access_line(line, instr);
            let c: Vec<&Cache> = h.caches().collect();
            for (upper, lower) in [(0, 2), (1, 2), (2, 3)] {
                for l in c[upper].resident_lines() {
                    prop_assert!(c[lower].contains(l), "line {} at level {} but not {}", l, upper, lower);
                }
            }
        }
    }
}
