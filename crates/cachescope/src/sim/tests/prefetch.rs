//! Both prefetchers against a naive per-set LRU with a prefetched-unused bit per line and a
//! stride table kept as a list.

use proptest::prelude::*;

use crate::access::{Access, AccessKind};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::sim::{
    Geometry, HierarchyConfig, MissStats, Policy, PrefetchPolicy, SimAnalysis, SimOptions,
};

/// Naive counts: misses, prefetches, useful, useless.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    misses: u64,
    prefetches: u64,
    useful: u64,
    useless: u64,
}

struct Naive {
    /// Per set, (line, prefetched and unused) most recent first.
    sets: Vec<Vec<(u64, bool)>>,
    assoc: usize,
    policy: PrefetchPolicy,
    /// (pc, last address, last stride).
    table: Vec<(u64, u64, i64)>,
    c: Counts,
}

impl Naive {
    fn new(sets: u64, assoc: u32, policy: PrefetchPolicy) -> Naive {
        Naive {
            sets: vec![Vec::new(); sets as usize],
            assoc: assoc as usize,
            policy,
            table: Vec::new(),
            c: Counts::default(),
        }
    }

    fn set(&mut self, line: u64) -> &mut Vec<(u64, bool)> {
        let n = self.sets.len() as u64;
        &mut self.sets[(line % n) as usize]
    }

    /// Inserts `line` at the front; counts a useless prefetch if the victim was one.
    fn insert(&mut self, line: u64, prefetched: bool) {
        let assoc = self.assoc;
        let set = self.set(line);
        set.insert(0, (line, prefetched));
        if set.len() > assoc && set.pop().unwrap().1 {
            self.c.useless += 1;
        }
    }

    fn targets(&mut self, pc: u64, addr: u64, miss: bool, first_use: bool) -> Vec<u64> {
        match self.policy {
            PrefetchPolicy::None => vec![],
            PrefetchPolicy::NextLine { degree } => {
                if miss || first_use {
                    (1..=u64::from(degree)).map(|k| addr + k).collect()
                } else {
                    vec![]
                }
            }
            PrefetchPolicy::Stride { degree, distance } => {
                let Some(e) = self.table.iter_mut().find(|e| e.0 == pc) else {
                    self.table.push((pc, addr, 0));
                    return vec![];
                };
                let stride = addr.wrapping_sub(e.1) as i64;
                if stride == 0 {
                    return vec![];
                }
                let steady = stride == e.2;
                (e.1, e.2) = (addr, stride);
                let mut out = Vec::new();
                for i in 0..i64::from(degree) {
                    let t = addr.wrapping_add(stride.wrapping_mul(i64::from(distance) + i) as u64);
                    if steady && t != addr && t != u64::MAX && !out.contains(&t) {
                        out.push(t);
                    }
                }
                out
            }
        }
    }

    /// A demand load of `addr` (1-byte lines: the address is the line) by `pc`.
    fn load(&mut self, pc: u64, addr: u64) {
        let set = self.set(addr);
        let pos = set.iter().position(|e| e.0 == addr);
        let first_use = match pos {
            Some(i) => {
                let (l, unused) = set.remove(i);
                set.insert(0, (l, false));
                unused
            }
            None => {
                self.c.misses += 1;
                self.insert(addr, false);
                false
            }
        };
        self.c.useful += u64::from(first_use);
        for t in self.targets(pc, addr, pos.is_none(), first_use) {
            if !self.set(t).iter().any(|e| e.0 == t) {
                self.c.prefetches += 1;
                self.insert(t, true);
            }
        }
    }
}

fn policy() -> impl Strategy<Value = PrefetchPolicy> {
    prop_oneof![
        (1u32..4).prop_map(|degree| PrefetchPolicy::NextLine { degree }),
        (1u32..4, 1u32..4)
            .prop_map(|(degree, distance)| PrefetchPolicy::Stride { degree, distance }),
    ]
}

/// Loads by three instructions, each striding through its own range (strides 1, 2, 3) or, now
/// and then, anywhere.
fn loads() -> impl Strategy<Value = Vec<(u64, u64)>> {
    proptest::collection::vec((0u64..3, prop::bool::weighted(0.2), 0u64..150), 0..400).prop_map(
        |v| {
            let mut step = [0u64; 3];
            v.into_iter()
                .map(|(pc, random, r)| {
                    step[pc as usize] += 1;
                    let addr = if random {
                        r
                    } else {
                        40 * pc + step[pc as usize] * (pc + 1) % 60
                    };
                    (pc + 1, addr)
                })
                .collect()
        },
    )
}

fn batch(loads: &[(u64, u64)]) -> Batch {
    loads
        .iter()
        .map(|&(pc, addr)| Access {
            addr,
            size: 1,
            kind: AccessKind::Load,
            pc: Some(pc),
        })
        .collect()
}

fn counts(s: &MissStats) -> Counts {
    Counts {
        misses: s.misses,
        prefetches: s.prefetches.unwrap(),
        useful: s.useful_prefetches.unwrap(),
        useless: s.useless_prefetches.unwrap(),
    }
}

proptest! {
    #[test]
    fn one_cache_agrees_with_the_naive_prefetcher(
        (sets, ways) in (1u64..6, 1u32..5),
        p in policy(),
        t in loads(),
    ) {
        let mut naive = Naive::new(sets, ways, p);
        for &(pc, a) in &t {
            naive.load(pc, a);
        }
        let g = Geometry::new(sets * u64::from(ways), ways, 1).unwrap();
        let opts = SimOptions { prefetch: p, ..SimOptions::default() };
        let mut sim = SimAnalysis::cache(g, Policy::Lru, opts).unwrap();
        sim.observe(&batch(&t));
        let got = counts(&sim.finish().levels[0].stats);
        prop_assert!(got.useful + got.useless <= got.prefetches);
        prop_assert_eq!(got, naive.c);
    }

    /// An L2 prefetcher sees the L1D's misses: the naive one fed them gives its counts.
    #[test]
    fn an_l2_prefetcher_learns_from_the_l1_misses(p in policy(), t in loads()) {
        let mut l1 = Naive::new(2, 1, PrefetchPolicy::None);
        let mut l2 = Naive::new(4, 2, p);
        for &(pc, a) in &t {
            let before = l1.c.misses;
            l1.load(pc, a);
            if l1.c.misses > before {
                l2.load(pc, a);
            }
        }
        let geo = |s: u64, w: u32| Geometry::new(s * u64::from(w), w, 1).unwrap();
        let mut config = HierarchyConfig::new(geo(1, 1), geo(2, 1), geo(4, 2));
        config.prefetch[2] = p;
        let mut sim = SimAnalysis::hierarchy(&config, SimOptions::default()).unwrap();
        sim.observe(&batch(&t));
        let levels = sim.finish().levels;
        prop_assert_eq!(levels[1].stats.misses, l1.c.misses);
        prop_assert_eq!(levels[1].stats.prefetches, None);
        prop_assert_eq!(counts(&levels[2].stats), l2.c);
    }
}

#[test]
fn next_line_turns_a_stream_into_hits() {
    // A stream of 64 lines through a 4-line cache: every line after the first is prefetched.
    let t: Vec<(u64, u64)> = (0..64).map(|a| (1, a)).collect();
    let g = Geometry::new(4, 4, 1).unwrap();
    let opts = SimOptions {
        prefetch: PrefetchPolicy::NextLine { degree: 1 },
        ..SimOptions::default()
    };
    let mut sim = SimAnalysis::cache(g, Policy::Lru, opts).unwrap();
    sim.observe(&batch(&t));
    let s = &sim.finish().levels[0].stats;
    assert_eq!(
        (s.misses, s.prefetches, s.useful_prefetches),
        (1, Some(64), Some(63))
    );
}

#[test]
fn an_l1_prefetch_is_fetched_through_the_levels_below() {
    // A stream through a 4-line L1D with next-line prefetching, then line 50 again: the L1D
    // evicted it long ago; the L2 holds it because the prefetch fetched it through the L2.
    let mut t: Vec<(u64, u64)> = (0..64).map(|a| (1, a)).collect();
    t.push((1, 50));
    let geo = |s: u64, w: u32| Geometry::new(s * u64::from(w), w, 1).unwrap();
    let mut config = HierarchyConfig::new(geo(1, 1), geo(1, 4), geo(1, 128));
    config.prefetch[1] = PrefetchPolicy::NextLine { degree: 1 };
    let mut sim = SimAnalysis::hierarchy(&config, SimOptions::default()).unwrap();
    sim.observe(&batch(&t));
    let levels = sim.finish().levels;
    assert_eq!(levels[1].stats.misses, 2);
    assert_eq!((levels[2].stats.refs, levels[2].stats.misses), (2, 1));
}
