//! The RRIP family on hand-worked traces: the paper's scan and thrash resistance, set dueling's
//! choice, and brute force on caches with enough sets for a real duel.

use proptest::prelude::*;

use super::brute::Brute;
use crate::sim::{Cache, Geometry, Policy};

/// One set of four ways, 1-byte lines.
fn four_ways() -> Geometry {
    Geometry::new(4, 4, 1).unwrap()
}

fn hits(g: Geometry, p: Policy, trace: &[u64]) -> Vec<bool> {
    let mut c = Cache::new(g, p).unwrap();
    trace.iter().map(|&l| c.access(l)).collect()
}

#[test]
fn srrip_keeps_a_reused_pair_through_a_scan_lru_does_not() {
    // a b a b, then a scan c d e f g never reused, then a b. By hand (RRPVs of ways 0-3):
    // a b fill at 2, their hits set 0: [0 0 - -]; c d fill at 2: [0 0 2 2]; e ages the set by
    // one and evicts c: [1 1 2 3]; f evicts d: [1 1 2 2]; g ages by one, evicts e: [2 2 2 3];
    // a and b still hit. LRU holds only the scan's last four lines.
    let t = [0, 1, 0, 1, 2, 3, 4, 5, 6, 0, 1];
    let tail = |p| hits(four_ways(), p, &t)[9..].to_vec();
    assert_eq!(
        hits(four_ways(), Policy::Srrip, &t),
        [
            false, false, true, true, false, false, false, false, false, true, true
        ]
    );
    assert_eq!(tail(Policy::Lru), [false, false]);
    // A scan twice as long as the set ages the pair out too.
    let long: Vec<u64> = [0, 1, 0, 1]
        .into_iter()
        .chain(2..10)
        .chain([0, 1])
        .collect();
    assert_eq!(
        hits(four_ways(), Policy::Srrip, &long)[12..],
        [false, false]
    );
}

#[test]
fn brrip_resists_a_thrashing_loop_lru_and_srrip_do_not() {
    // A loop of five lines in four ways: LRU and SRRIP (which then ages and evicts in way
    // order, like LRU) miss every time; BRRIP inserts at distant, so the newcomer is the next
    // victim and the lines that once got a long insertion stay.
    let t: Vec<u64> = (0..200).map(|i| i % 5).collect();
    let hit_count = |p| {
        hits(four_ways(), p, &t)[100..]
            .iter()
            .filter(|&&h| h)
            .count()
    };
    assert_eq!(hit_count(Policy::Lru), 0);
    assert_eq!(hit_count(Policy::Srrip), 0);
    // At most 3 of 5 lines can stay (one way is the revolving door): 60 hits in 100.
    let brrip = hit_count(Policy::Brrip { seed: 1 });
    assert!((50..=60).contains(&brrip), "BRRIP hit {brrip} of 100");
}

/// 64 sets of 4 ways (32 constituencies of two sets: every set leads), 1-byte lines.
fn dueling_geometry() -> Geometry {
    Geometry::new(256, 4, 1).unwrap()
}

fn psel_after(trace: &[u64]) -> u32 {
    let mut c = Cache::new(dueling_geometry(), Policy::Drrip { seed: 1 }).unwrap();
    trace.iter().for_each(|&l| {
        c.access(l);
    });
    c.psel().unwrap()
}

fn misses(p: Policy, trace: &[u64]) -> usize {
    hits(dueling_geometry(), p, trace)
        .iter()
        .filter(|&&h| !h)
        .count()
}

#[test]
fn set_dueling_picks_brrip_on_a_thrashing_loop() {
    // Five lines per set, looped: SRRIP thrashes, BRRIP keeps three.
    let t: Vec<u64> = (0..64 * 5 * 40).map(|i| i % (64 * 5)).collect();
    assert!(misses(Policy::Brrip { seed: 1 }, &t) < misses(Policy::Srrip, &t) / 2);
    let psel = psel_after(&t);
    assert!(psel > 511, "PSEL {psel}: followers should insert as BRRIP");
}

#[test]
fn set_dueling_picks_srrip_on_a_recency_friendly_stream() {
    // Every set loops over three lines eight times, then moves on to three new ones: a
    // working set that fits, and changes. SRRIP's long insertion ages the old set out within
    // a few misses; BRRIP's distant insertion makes each newcomer the next victim while the
    // stale lines sit at RRPV 0, so it learns a new working set only through its rare long
    // insertions.
    let mut t = Vec::new();
    for phase in 0..100u64 {
        for _ in 0..8 {
            for k in 0..3 {
                t.extend((0..64).map(|set| (phase * 3 + k) * 64 + set));
            }
        }
    }
    assert!(misses(Policy::Srrip, &t) < misses(Policy::Brrip { seed: 1 }, &t));
    let psel = psel_after(&t);
    assert!(psel <= 511, "PSEL {psel}: followers should insert as SRRIP");
}

proptest! {
    /// DRRIP with a full 32-constituency duel (128 sets) agrees with the brute-force model,
    /// reference for reference, and so does its counter.
    #[test]
    fn drrip_duel_agrees_with_brute_force(
        t in proptest::collection::vec(0u64..2048, 0..3000),
        seed in any::<u64>(),
        ways in 1u32..5,
    ) {
        let g = Geometry::new(128 * u64::from(ways), ways, 1).unwrap();
        let p = Policy::Drrip { seed };
        let mut brute = Brute::new(g, p);
        let mut fast = Cache::new(g, p).unwrap();
        for &l in &t {
            prop_assert_eq!(fast.access(l), brute.access(l));
        }
        prop_assert_eq!(fast.psel(), Some(brute.psel()));
    }
}
