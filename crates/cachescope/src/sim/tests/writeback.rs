//! Write-backs and no-write-allocate against a naive per-set LRU that keeps a dirty bit beside
//! each line, for one cache and for an L1D over an L2.

use proptest::prelude::*;

use super::batch;
use crate::access::AccessKind::{self, Load, Modify, Store};
use crate::analysis::Analysis;
use crate::sim::{
    Geometry, HierarchyConfig, LevelReport, Op, Policy, SimAnalysis, SimOptions, Writes,
};

/// A naive LRU cache: per set, (line, dirty) most recent first.
struct Naive {
    sets: Vec<Vec<(u64, bool)>>,
    assoc: usize,
    allocate: bool,
    misses: u64,
    writebacks: u64,
    received: u64,
}

impl Naive {
    fn new(sets: u64, assoc: u32, allocate: bool) -> Naive {
        Naive {
            sets: vec![Vec::new(); sets as usize],
            assoc: assoc as usize,
            allocate,
            misses: 0,
            writebacks: 0,
            received: 0,
        }
    }

    /// Puts `line` at the front, dirty if `dirty` or already dirty; the dirty line pushed out
    /// of a full set, if any.
    fn put(&mut self, line: u64, dirty: bool) -> Option<u64> {
        let n = self.sets.len() as u64;
        let set = &mut self.sets[(line % n) as usize];
        let was = set.iter().position(|e| e.0 == line).map(|i| set.remove(i));
        set.insert(0, (line, dirty || was.is_some_and(|e| e.1)));
        let out = (set.len() > self.assoc).then(|| set.pop().unwrap());
        let wb = out.filter(|e| e.1).map(|e| e.0);
        self.writebacks += u64::from(wb.is_some());
        wb
    }

    fn has(&self, line: u64) -> bool {
        let n = self.sets.len() as u64;
        self.sets[(line % n) as usize].iter().any(|e| e.0 == line)
    }

    /// A demand access: (hit, dirty victim).
    fn access(&mut self, line: u64, op: Op) -> (bool, Option<u64>) {
        let hit = self.has(line);
        self.misses += u64::from(!hit);
        if !hit && op == Op::Write && !self.allocate {
            return (false, None);
        }
        (hit, self.put(line, op != Op::Read))
    }

    /// A write-back from above: always installed, dirty.
    fn receive(&mut self, line: u64) -> Option<u64> {
        self.received += 1;
        self.put(line, true)
    }
}

fn op(kind: AccessKind) -> Op {
    Op::of(kind)
}

fn kinds() -> impl Strategy<Value = Vec<(AccessKind, u64)>> {
    (1u64..40).prop_flat_map(|span| {
        proptest::collection::vec(
            (prop_oneof![Just(Load), Just(Store), Just(Modify)], 0..span),
            0..400,
        )
    })
}

fn shape() -> impl Strategy<Value = (u64, u32)> {
    (1u64..6, 1u32..5)
}

fn run(sim: &mut SimAnalysis, t: &[(AccessKind, u64)]) -> Vec<LevelReport> {
    sim.observe(&batch(
        &t.iter().map(|&(k, l)| (k, l, 1)).collect::<Vec<_>>(),
    ));
    sim.finish().levels
}

proptest! {
    #[test]
    fn one_cache_agrees_with_the_naive_dirty_bits(
        (sets, ways) in shape(),
        allocate in any::<bool>(),
        t in kinds(),
    ) {
        let g = Geometry::new(sets * u64::from(ways), ways, 1).unwrap();
        let mut naive = Naive::new(sets, ways, allocate);
        for &(k, l) in &t {
            naive.access(l, op(k));
        }
        let opts = SimOptions { writes: Some(Writes { allocate }), ..SimOptions::default() };
        let levels = run(&mut SimAnalysis::cache(g, Policy::Lru, opts).unwrap(), &t);
        let s = &levels[0].stats;
        prop_assert_eq!(s.misses, naive.misses);
        prop_assert_eq!(s.writebacks, Some(naive.writebacks));
        prop_assert_eq!(s.writebacks_received, Some(0));
        if allocate {
            // Write-allocate: tracking dirty lines changes no hit.
            let plain = run(
                &mut SimAnalysis::cache(g, Policy::Lru, SimOptions::default()).unwrap(),
                &t,
            );
            prop_assert_eq!(plain[0].stats.misses, s.misses);
            prop_assert_eq!(plain[0].stats.writebacks, None);
        }
    }

    #[test]
    fn two_levels_agree_with_the_naive_dirty_bits(
        (s1, w1) in shape(),
        (s2, w2) in shape(),
        allocate in any::<bool>(),
        t in kinds(),
    ) {
        let (mut l1, mut l2) = (Naive::new(s1, w1, allocate), Naive::new(s2, w2, allocate));
        let mut l2_refs = 0;
        for &(k, l) in &t {
            let (hit, wb) = l1.access(l, op(k));
            if let Some(v) = wb {
                l2.receive(v);
            }
            if !hit {
                l2_refs += 1;
                let below = if op(k) == Op::Write && !allocate { Op::Write } else { Op::Read };
                l2.access(l, below); // its dirty victim goes to memory
            }
        }
        let geo = |s: u64, w: u32| Geometry::new(s * u64::from(w), w, 1).unwrap();
        let config = HierarchyConfig::new(geo(1, 1), geo(s1, w1), geo(s2, w2));
        let opts = SimOptions { writes: Some(Writes { allocate }), ..SimOptions::default() };
        let levels = run(&mut SimAnalysis::hierarchy(&config, opts).unwrap(), &t);
        let (d, l2s) = (&levels[1].stats, &levels[2].stats);
        prop_assert_eq!(d.misses, l1.misses);
        prop_assert_eq!(d.writebacks, Some(l1.writebacks));
        prop_assert_eq!(l2s.refs, l2_refs);
        prop_assert_eq!(l2s.misses, l2.misses);
        prop_assert_eq!(l2s.writebacks, Some(l2.writebacks));
        prop_assert_eq!(l2s.writebacks_received, Some(l1.writebacks));
    }
}

#[test]
fn a_store_then_a_conflict_writes_back_once() {
    // Direct mapped, one set: store 0, load 1 (0 is dirty: a write-back), load 0 (1 is clean).
    let g = Geometry::new(1, 1, 1).unwrap();
    let opts = SimOptions {
        writes: Some(Writes::default()),
        ..SimOptions::default()
    };
    let mut sim = SimAnalysis::cache(g, Policy::Lru, opts).unwrap();
    let levels = run(&mut sim, &[(Store, 0), (Load, 1), (Load, 0)]);
    assert_eq!(levels[0].stats.writebacks, Some(1));
    // No-write-allocate: the store misses and fills nothing, so the load of 0 misses again.
    let no = SimOptions {
        writes: Some(Writes { allocate: false }),
        ..SimOptions::default()
    };
    let mut sim = SimAnalysis::cache(g, Policy::Lru, no).unwrap();
    let levels = run(&mut sim, &[(Store, 0), (Load, 0), (Store, 0), (Load, 1)]);
    assert_eq!(levels[0].stats.misses, 3);
    assert_eq!(levels[0].stats.writebacks, Some(1));
}
