//! Single caches: hand traces per policy, brute force, one set = fully associative, laws, 3C.

use proptest::prelude::*;

use super::batch;
use super::brute::{self, Brute};
use crate::access::AccessKind::Load;
use crate::analysis::Analysis;
use crate::sim::{
    Cache, FullyAssoc, Geometry, LineMapping, Outcome, Policy, SetAssoc, SimAnalysis, SimOptions,
    ThreeCCounts,
};

fn geo(size: u64, assoc: u32, line: u64) -> Geometry {
    Geometry::new(size, assoc, line).unwrap()
}

/// Hits (true) of `trace` in a cache of shape `g` under `p`.
fn hits(g: Geometry, p: Policy, trace: &[u64]) -> Vec<bool> {
    let mut c = Cache::new(g, p).unwrap();
    trace.iter().map(|&l| c.access(l)).collect()
}

const A: u64 = 0;
const B: u64 = 1;
const C: u64 = 2;
const D: u64 = 3;
const E: u64 = 4;
const F: u64 = 5;
const G: u64 = 6;

#[test]
fn lru_and_fifo_differ_on_a_known_sequence() {
    // One set of two ways. A B A C A: LRU keeps A (used more recently than B) when C comes;
    // FIFO evicts A, the older fill, so the last A misses.
    let g = geo(2, 2, 1);
    let t = [A, B, A, C, A];
    assert_eq!(hits(g, Policy::Lru, &t), [false, false, true, false, true]);
    assert_eq!(
        hits(g, Policy::Fifo, &t),
        [false, false, true, false, false]
    );
}

#[test]
fn tree_plru_evicts_the_hand_traced_victims() {
    // One set of 4 ways; A..D fill ways 0..3. Tree bits (root, left pair, right pair) after the
    // fills: 0, 0, 0 → the victim is way 0 (A). E takes way 0: bits 1, 1, 0 → victim way 2
    // (C), not B as LRU would pick. F takes way 2: bits 0, 1, 1. A hit on B (way 1): bits 1, 0,
    // 1 → victim way 3 (D). G takes way 3.
    let g = geo(4, 4, 1);
    let mut c = SetAssoc::new(g, Policy::Plru).unwrap();
    for l in [A, B, C, D] {
        assert_eq!(c.access_outcome(l), Outcome::Miss { evicted: None });
    }
    let ev = |evicted| Outcome::Miss {
        evicted: Some(evicted),
    };
    assert_eq!(c.access_outcome(E), ev(A));
    assert_eq!(c.access_outcome(F), ev(C));
    assert_eq!(c.access_outcome(B), Outcome::Hit);
    assert_eq!(c.access_outcome(G), ev(D));
    let mut resident: Vec<u64> = c.resident_lines().collect();
    resident.sort_unstable();
    assert_eq!(resident, [B, E, F, G]);
    // LRU on the same sequence evicts A, then B.
    let mut lru = SetAssoc::new(g, Policy::Lru).unwrap();
    for l in [A, B, C, D] {
        lru.access(l);
    }
    assert_eq!(lru.access_outcome(E), ev(A));
    assert_eq!(lru.access_outcome(F), ev(B));
}

#[test]
fn random_replacement_is_fixed_by_its_seed() {
    let g = geo(64, 4, 1); // 16 sets
    let trace: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 101).collect();
    let run = |seed| hits(g, Policy::Random { seed }, &trace);
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

#[test]
fn fully_associative_takes_any_number_of_lines() {
    // 3 lines: a loop over 3 lines misses only the first time, a loop over 4 always (LRU).
    let g = Geometry::fully_associative(3 * 64, 64).unwrap();
    let looped = |k: u64| -> Vec<u64> { (0..40).map(|i| i % k).collect() };
    let misses = |t: &[u64]| hits(g, Policy::Lru, t).iter().filter(|&&h| !h).count();
    assert_eq!(misses(&looped(3)), 3);
    assert_eq!(misses(&looped(4)), 40);
    // A big one: 100 000 lines (one set: the hash-map simulator).
    let big = Geometry::fully_associative(100_000 * 64, 64).unwrap();
    let mut c = Cache::new(big, Policy::Lru).unwrap();
    let t: Vec<u64> = (0..300_000).map(|i| i % 100_000).collect();
    assert_eq!(c.access_all(t.iter().copied()), 100_000);
    // A loop one line longer: one miss in the first pass (line 100 000 evicts line 0), then
    // LRU's worst case, every access a miss.
    assert_eq!(
        c.access_all((0..2 * 100_001).map(|i| i % 100_001)),
        1 + 100_001
    );
}

#[test]
fn invalidate_empties_a_way_under_every_policy() {
    for p in [
        Policy::Lru,
        Policy::Fifo,
        Policy::Random { seed: 1 },
        Policy::Plru,
        Policy::Srrip,
        Policy::Brrip { seed: 1 },
        Policy::Drrip { seed: 1 },
    ] {
        for g in [geo(4, 4, 1), geo(8, 2, 1)] {
            let mut c = Cache::new(g, p).unwrap();
            for l in [A, B, C] {
                c.access(l);
            }
            assert!(
                c.invalidate(B) && !c.invalidate(B) && !c.contains(B),
                "{p} {g}"
            );
            assert!(c.contains(A) && c.contains(C));
            let mut r = c.resident_lines();
            r.sort_unstable();
            assert_eq!(r, [A, C]);
            assert!(!c.access(B) && c.access(B));
        }
        if FullyAssoc::supports(p) {
            let mut f = FullyAssoc::new(geo(3, 3, 1), p).unwrap();
            for l in [A, B, C] {
                f.access(l);
            }
            assert!(f.invalidate(B) && !f.contains(B) && f.len() == 2);
            // The hole is filled before anything is evicted.
            assert_eq!(f.access_outcome(D), Outcome::Miss { evicted: None });
        }
    }
}

#[test]
fn plru_needs_a_power_of_two_associativity() {
    let e = Cache::new(geo(6 * 64, 6, 64), Policy::Plru).unwrap_err();
    assert!(
        e.to_string().contains("not 6; use LRU, or 4 or 8 ways"),
        "{e}"
    );
    assert!(FullyAssoc::new(geo(4, 4, 1), Policy::Plru).is_err());
}

#[test]
fn three_c_on_a_hand_example() {
    // Direct mapped, 2 sets of 1 line. 0 and 2 share set 0.
    // 0 cold, 2 cold, 0: conflict (a 2-line fully associative LRU cache holds 0 and 2);
    // 1 cold; 3 cold (evicts 1); 0 hits; 2 misses and the 2-line LRU cache holds only 0 and 3:
    // capacity.
    let g = geo(2 * 64, 1, 64);
    let trace = [0u64, 2, 0, 1, 3, 0, 2];
    let mut sim = SimAnalysis::cache(
        g,
        Policy::Lru,
        SimOptions {
            three_c: true,
            ..SimOptions::default()
        },
    )
    .unwrap();
    sim.observe(&batch(&trace.map(|l| (Load, l * 64, 8))));
    let s = &sim.finish().levels[0].stats;
    assert_eq!((s.refs, s.misses), (7, 6));
    assert_eq!(
        s.three_c,
        Some(ThreeCCounts {
            cold: 4,
            capacity: 1,
            conflict: 1
        })
    );
}

#[test]
fn straddling_reference_is_one_reference_and_one_miss() {
    let g = geo(4096, 4, 64);
    let opts = SimOptions {
        mapping: LineMapping::Straddle,
        ..SimOptions::default()
    };
    let mut sim = SimAnalysis::cache(g, Policy::Lru, opts).unwrap();
    // Bytes 60..68 touch lines 0 and 1: one reference, one miss, two line misses.
    sim.observe(&batch(&[(Load, 60, 8), (Load, 64, 4), (Load, 0, 4)]));
    let s = &sim.finish().levels[0].stats;
    assert_eq!(
        (s.refs, s.misses, s.line_accesses, s.line_misses),
        (3, 1, 4, 2)
    );
    // The first-byte mapping looks at line 0 only: line 1 then misses.
    let mut first = SimAnalysis::cache(g, Policy::Lru, SimOptions::default()).unwrap();
    first.observe(&batch(&[(Load, 60, 8), (Load, 64, 4), (Load, 0, 4)]));
    let s = &first.finish().levels[0].stats;
    assert_eq!(
        (s.refs, s.misses, s.line_accesses, s.line_misses),
        (3, 2, 3, 2)
    );
}

/// Shapes small enough for brute force to be quick, with 1-byte lines so lines = addresses;
/// any number of sets from 1 to 12 (powers of two take the mask, the others the remainder).
fn small_geometry() -> impl Strategy<Value = Geometry> {
    (1u64..13, 0u32..5).prop_map(|(sets, log_ways)| {
        let ways = 1u32 << log_ways;
        geo(sets * u64::from(ways), ways, 1)
    })
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Lru),
        Just(Policy::Fifo),
        Just(Policy::Plru),
        any::<u64>().prop_map(|seed| Policy::Random { seed }),
        Just(Policy::Srrip),
        any::<u64>().prop_map(|seed| Policy::Brrip { seed }),
        any::<u64>().prop_map(|seed| Policy::Drrip { seed }),
    ]
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    (1u64..64).prop_flat_map(|span| proptest::collection::vec(0..span, 0..400))
}

proptest! {
    #[test]
    fn fast_paths_agree_with_brute_force(g in small_geometry(), p in policy(), t in trace()) {
        let mut brute = Brute::new(g, p);
        let want: Vec<bool> = t.iter().map(|&l| brute.access(l)).collect();
        let misses = want.iter().filter(|&&h| !h).count() as u64;
        prop_assert_eq!(hits(g, p, &t), want);
        // The batch paths: Cache::access_all and SimAnalysis's packed loop.
        prop_assert_eq!(Cache::new(g, p).unwrap().access_all(t.iter().copied()), misses);
        let mut sim = SimAnalysis::cache(g, p, SimOptions::default()).unwrap();
        let mut accesses: Vec<_> = t.iter().map(|&l| (Load, l, 1)).collect();
        accesses.insert(accesses.len() / 2, (crate::access::AccessKind::Instr, 7, 4));
        sim.observe(&batch(&accesses));
        let s = &sim.finish().levels[0].stats;
        prop_assert_eq!((s.refs, s.misses), (t.len() as u64, misses));
    }

    #[test]
    fn one_set_is_fully_associative(ways in 1u32..70, p in policy(), t in trace()) {
        // Tree-PLRU and RRIP have no fully associative twin; LRU is used in their place.
        let p = if FullyAssoc::supports(p) { p } else { Policy::Lru };
        let g = geo(u64::from(ways), ways, 1);
        let mut set = SetAssoc::new(g, p).unwrap();
        let mut fully = FullyAssoc::new(g, p).unwrap();
        for &l in &t {
            prop_assert_eq!(set.access_outcome(l), fully.access_outcome(l));
        }
    }

    #[test]
    fn runs_and_invalidations_match_one_set(
        ways in 1u32..12,
        p in policy(),
        ops in proptest::collection::vec((0u64..16, 1usize..4, proptest::bool::weighted(0.15)), 0..300),
    ) {
        // Runs of one line broken by invalidations of any line, the one just referenced
        // included: both simulators forget it alike.
        let p = if FullyAssoc::supports(p) { p } else { Policy::Lru };
        let g = geo(u64::from(ways), ways, 1);
        let mut set = SetAssoc::new(g, p).unwrap();
        let mut fully = FullyAssoc::new(g, p).unwrap();
        for &(l, run, drop) in &ops {
            if drop {
                prop_assert_eq!(set.invalidate(l), fully.invalidate(l));
            }
            for _ in 0..run {
                prop_assert_eq!(set.access_outcome(l), fully.access_outcome(l));
            }
        }
    }

    #[test]
    fn lru_misses_never_rise_with_capacity(t in trace(), small in 1u64..40, extra in 0u64..40) {
        let misses = |lines: u64| {
            let g = Geometry::fully_associative(lines, 1).unwrap();
            hits(g, Policy::Lru, &t).iter().filter(|&&h| !h).count()
        };
        prop_assert!(misses(small + extra) <= misses(small));
    }

    #[test]
    fn three_c_agrees_with_brute_force(g in small_geometry(), p in policy(), t in trace()) {
        let mut sim = SimAnalysis::cache(
            g,
            p,
            SimOptions { three_c: true, ..SimOptions::default() },
        ).unwrap();
        sim.observe(&batch(&t.iter().map(|&l| (Load, l, 1)).collect::<Vec<_>>()));
        let s = sim.finish().levels[0].stats.clone();
        let (misses, counts) = brute::three_c(g, p, &t);
        prop_assert_eq!(s.misses, misses);
        prop_assert_eq!(s.three_c, Some(counts));
        prop_assert_eq!(counts.total(), misses);
    }
}

proptest! {
    /// `access_runs` misses where brute force misses on the runs' references, and every
    /// run's second reference hits (one or more sets, and one large set of many ways).
    #[test]
    fn runs_agree_with_brute_force(
        g in prop_oneof![
            small_geometry(),
            (17u32..40).prop_map(|w| geo(u64::from(w), w, 1)),
        ],
        p in policy(),
        t in (1u64..64).prop_flat_map(|span| {
            proptest::collection::vec((0..span, proptest::bool::ANY), 0..400)
        }),
    ) {
        let Ok(mut cache) = Cache::new(g, p) else {
            return Ok(()); // tree-PLRU of a non-power-of-two associativity
        };
        let mut brute = Brute::new(g, p);
        let mut want = Vec::new();
        for (i, &(l, again)) in t.iter().enumerate() {
            if !brute.access(l) {
                want.push(i);
            }
            if again {
                prop_assert!(brute.access(l));
            }
        }
        let mut got = Vec::new();
        cache.access_runs(t.iter().copied(), |i| got.push(i));
        prop_assert_eq!(got, want);
    }
}

/// A 30 MiB, 12-way cache of 64-byte lines: 40,960 sets, indexed by the remainder.
fn l3_30m() -> Geometry {
    Geometry::parse("30M,12,64").unwrap()
}

/// Lines that crowd a few sets of [`l3_30m`] (up to 30 lines per set, more than its 12 ways),
/// with strays anywhere: the low bits alone would put them in other sets.
fn l3_trace() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(
        prop_oneof![
            4 => (0u64..6, 0u64..30).prop_map(|(set, k)| set + 40_960 * k),
            1 => any::<u32>().prop_map(u64::from),
        ],
        0..2000,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The 30 MiB 12-way cache hits where a naive per-set reference (`line % sets`) hits,
    /// under every policy a 12-way cache can have, through each access path and with 3C.
    #[test]
    fn real_l3_agrees_with_a_naive_per_set_reference(p in policy(), t in l3_trace()) {
        prop_assume!(p != Policy::Plru);
        let g = l3_30m();
        prop_assert_eq!(g.sets(), 40_960);
        let mut brute = Brute::new(g, p);
        let want: Vec<bool> = t.iter().map(|&l| brute.access(l)).collect();
        let misses = want.iter().filter(|&&h| !h).count() as u64;
        prop_assert_eq!(hits(g, p, &t), want);
        prop_assert_eq!(Cache::new(g, p).unwrap().access_all(t.iter().copied()), misses);
        let mut sim = SimAnalysis::cache(
            g,
            p,
            SimOptions { three_c: true, ..SimOptions::default() },
        ).unwrap();
        // Byte addresses of the lines: SimAnalysis shifts them by the 64-byte line.
        sim.observe(&batch(&t.iter().map(|&l| (Load, l << 6, 1)).collect::<Vec<_>>()));
        let s = sim.finish().levels[0].stats.clone();
        prop_assert_eq!(s.misses, misses);
        let (_, counts) = brute::three_c(g, p, &t);
        prop_assert_eq!(s.three_c, Some(counts));
    }
}

#[test]
fn a_non_power_of_two_cache_conflicts_by_remainder() {
    // Three sets of one way: lines 0, 3 and 6 share set 0, line 4 sits in set 1.
    let g = geo(3, 1, 1);
    assert_eq!(
        hits(g, Policy::Lru, &[0, 3, 0, 4, 0, 6, 0]),
        [false, false, false, false, true, false, false]
    );
}
