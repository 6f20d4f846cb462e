//! The TLB levels against a naive model (a recency list per set, every rule written out
//! again), a fully associative TLB against the page-level stack-distance curve, per-thread
//! TLBs against each thread alone, and the walks' entry reads where an analysis sees them.

use proptest::prelude::*;

use super::*;
use crate::access::{Access, AccessKind, LineSize};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::{Options, StackDistanceAnalysis};

/// One array of the naive model: per set, its pages most recent first.
struct NaiveArray {
    spec: TlbSpec,
    sets: Vec<Vec<(u64, u32)>>,
    refs: u64,
    misses: u64,
}

impl NaiveArray {
    fn new(spec: TlbSpec) -> NaiveArray {
        NaiveArray {
            spec,
            sets: vec![Vec::new(); spec.sets() as usize],
            refs: 0,
            misses: 0,
        }
    }

    /// LRU lookup of the page `number` of size `1 << shift`; true on a hit.
    fn lookup(&mut self, number: u64, shift: u32) -> bool {
        self.refs += 1;
        let set = &mut self.sets[(number % u64::from(self.spec.sets())) as usize];
        let hit = match set.iter().position(|&e| e == (number, shift)) {
            Some(p) => {
                set.remove(p);
                true
            }
            None => {
                self.misses += 1;
                false
            }
        };
        set.insert(0, (number, shift));
        set.truncate(self.spec.ways() as usize);
        hit
    }
}

/// The levels as the module documentation states them: the array for the largest page not
/// above the reference's, first level, then STLB, then a walk.
struct Naive {
    levels: [Vec<NaiveArray>; 3],
    walks: u64,
}

impl Naive {
    fn new(c: &TlbConfig) -> Naive {
        let level = |v: &[TlbSpec]| v.iter().map(|&s| NaiveArray::new(s)).collect();
        Naive {
            levels: [level(&c.dtlb), level(&c.itlb), level(&c.stlb)],
            walks: 0,
        }
    }

    fn pick(level: &mut [NaiveArray], shift: u32) -> Option<&mut NaiveArray> {
        level
            .iter_mut()
            .filter(|a| a.spec.page().shift() <= shift)
            .max_by_key(|a| a.spec.page().shift())
    }

    fn reference(&mut self, addr: u64, shift: u32, instr: bool) {
        let number = addr >> shift;
        let Some(l1) = Naive::pick(&mut self.levels[usize::from(instr)], shift) else {
            return;
        };
        if l1.lookup(number, shift) {
            return;
        }
        if let Some(stlb) = Naive::pick(&mut self.levels[2], shift) {
            if stlb.lookup(number, shift) {
                return;
            }
        }
        self.walks += 1;
    }

    fn counts(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = Vec::new();
        for level in &self.levels {
            let mut arrays: Vec<&NaiveArray> = level.iter().collect();
            arrays.sort_by_key(|a| a.spec.page().bytes());
            v.extend(arrays.iter().map(|a| (a.refs, a.misses)));
        }
        v
    }
}

fn spec(s: &str) -> TlbSpec {
    TlbSpec::parse(s).unwrap()
}

fn two_levels() -> TlbConfig {
    TlbConfig {
        dtlb: vec![spec("4,2,4K"), spec("2,full,2M")],
        itlb: vec![spec("2,1,4K")],
        stlb: vec![spec("12,3,4K")],
        ..TlbConfig::default()
    }
}

fn pages_2m_from(start: u64) -> PageMap {
    let mut m = PageMap::default();
    m.set_range(start, start + (64 << 20), LineSize::new(2 << 20).unwrap());
    m
}

fn run(config: &TlbConfig, pages: &PageMap, refs: &[(u64, bool)]) -> TlbReport {
    let b: Batch = refs
        .iter()
        .map(|&(addr, instr)| Access {
            addr,
            size: 4,
            kind: if instr {
                AccessKind::Instr
            } else {
                AccessKind::Load
            },
            pc: None,
        })
        .collect();
    let mut sim = TlbSim::new(config, pages.clone(), false).unwrap();
    sim.observe(&b);
    sim.finish()
}

fn naive(config: &TlbConfig, pages: &PageMap, refs: &[(u64, bool)]) -> (Vec<(u64, u64)>, u64) {
    let mut n = Naive::new(config);
    for &(addr, instr) in refs {
        n.reference(addr, pages.page_of(addr).shift(), instr);
    }
    (n.counts(), n.walks)
}

/// Addresses over a few dozen 4 KiB pages, some in a 2 MiB-paged range, fetches mixed in.
fn refs_strategy() -> impl Strategy<Value = Vec<(u64, bool)>> {
    let base = 0x4000_0000u64;
    proptest::collection::vec((0u64..48, 0u64..4096, prop::bool::weighted(0.2)), 1..600).prop_map(
        move |v| {
            v.into_iter()
                .map(|(page, off, instr)| {
                    // Half the pages lie in the 2 MiB range (every 2 MiB page holds 8 of them).
                    let a = if page % 2 == 0 {
                        base + page * (256 << 10) + off
                    } else {
                        0x10_0000 + page * 4096 + off
                    };
                    (a, instr)
                })
                .collect()
        },
    )
}

proptest! {
    #[test]
    fn levels_match_the_naive_model(refs in refs_strategy()) {
        let config = two_levels();
        let pages = pages_2m_from(0x4000_0000);
        let got = run(&config, &pages, &refs);
        let (want, walks) = naive(&config, &pages, &refs);
        let counts: Vec<(u64, u64)> = got.tlbs.iter().map(|c| (c.refs, c.misses)).collect();
        prop_assert_eq!(counts, want);
        prop_assert_eq!(got.page_walks, walks);
    }

    #[test]
    fn one_level_without_stlb_walks_on_every_miss(refs in refs_strategy()) {
        let config = TlbConfig { dtlb: vec![spec("8,2,4K")], ..TlbConfig::default() };
        let got = run(&config, &PageMap::default(), &refs);
        let (want, walks) = naive(&config, &PageMap::default(), &refs);
        prop_assert_eq!(got.tlbs[0].misses, want[0].1);
        prop_assert_eq!(got.page_walks, walks);
        prop_assert_eq!(got.page_walks, got.tlbs[0].misses);
        // Fetches are not translated without an ITLB.
        prop_assert_eq!(got.tlbs[0].refs, refs.iter().filter(|r| !r.1).count() as u64);
    }
}

#[test]
fn fully_associative_tlb_is_the_page_level_exact_curve() {
    // A zipf-like mix over 300 pages: every entry count from 1 to 400.
    let mut x = 12345u64;
    let b: Batch = (0..20_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let page = (x >> 33) % 300;
            let page = page * page / 300; // skewed towards low pages
            Access::load(0x7f00_0000_0000 + page * 4096 + (x >> 20) % 4096, 8)
        })
        .collect();
    let mut sd = StackDistanceAnalysis::new(Options {
        line_size: LineSize::PAGE_4K,
        ..Options::default()
    });
    sd.observe(&b);
    let curve = sd.finish();
    for n in [1u32, 2, 3, 7, 16, 64, 100, 299, 300, 400] {
        let config = TlbConfig {
            dtlb: vec![TlbSpec::new(n, n, 4096).unwrap()],
            ..TlbConfig::default()
        };
        let mut sim = TlbSim::new(&config, PageMap::default(), false).unwrap();
        sim.observe(&b);
        let got = sim.finish().tlbs[0].misses;
        let want = curve.misses(u64::from(n));
        assert_eq!((got, got), (want.low, want.high), "{n} entries");
    }
}

#[test]
fn each_thread_has_its_own_tlbs() {
    // Two threads touching the same pages in turn: shared TLBs hit where per-thread ones
    // take a cold miss for each thread.
    let mut b = Batch::new();
    for round in 0..3u64 {
        for t in [1, 2] {
            b.set_thread(t);
            for p in 0..4u64 {
                b.push(Access::load(0x1000 * (p + 1) + round, 8));
            }
        }
    }
    let config = TlbConfig {
        dtlb: vec![spec("8,full,4K")],
        ..TlbConfig::default()
    };
    let mut shared = TlbSim::new(&config, PageMap::default(), false).unwrap();
    let mut own = TlbSim::new(&config, PageMap::default(), true).unwrap();
    shared.observe(&b);
    own.observe(&b);
    let (s, o) = (shared.finish(), own.finish());
    assert_eq!((s.tlbs[0].refs, s.tlbs[0].misses), (24, 4));
    assert_eq!((o.tlbs[0].refs, o.tlbs[0].misses), (24, 8));
    assert!(s.threads.is_empty());
    let per: Vec<(u32, u64, u64)> = o
        .threads
        .iter()
        .map(|t| (t.thread, t.tlbs[0].misses, t.page_walks))
        .collect();
    assert_eq!(per, [(1, 4, 4), (2, 4, 4)]);
}

/// Collects what the analysis behind the TLBs sees.
#[derive(Default)]
struct Seen(Vec<(u32, u64, AccessKind, u64)>);

impl Analysis for Seen {
    fn observe(&mut self, b: &Batch) {
        for (run, thread) in b.thread_runs() {
            for i in run {
                self.0.push((thread, b.addrs[i], b.kinds[i], b.pcs[i]));
            }
        }
    }
}

#[test]
fn walks_reach_the_analysis_behind_before_their_reference() {
    let config = TlbConfig {
        dtlb: vec![spec("1,1,4K")],
        ..TlbConfig::default()
    };
    let mut b = Batch::new();
    b.push(Access::load(0x5000, 8));
    b.push(Access::load(0x5008, 8));
    b.set_thread(2);
    b.push(Access::store(0x40_0000, 8));
    b.push(Access {
        addr: 0x9999,
        size: 4,
        kind: AccessKind::Instr,
        pc: None,
    });
    let mut pages = PageMap::default();
    pages.set_range(0x40_0000, 0x60_0000, LineSize::new(2 << 20).unwrap());
    let mut w = Walked::new(TlbSim::new(&config, pages, true).unwrap(), Seen::default());
    w.observe(&b);
    let (report, seen) = w.finish();
    let walk = |a, s| walk_entries(a, s).map(|e| (0, e)).collect::<Vec<_>>();
    let mut want: Vec<(u32, u64)> = Vec::new();
    want.extend(walk(0x5000, 12).into_iter().map(|(_, e)| (1, e)));
    want.extend([(1, 0x5000), (1, 0x5008)]);
    // Thread 2's 2 MiB page: three entries; its fetch is not translated (no ITLB).
    want.extend(walk(0x40_0000, 21).into_iter().map(|(_, e)| (2, e)));
    want.extend([(2, 0x40_0000), (2, 0x9999)]);
    let got: Vec<(u32, u64)> = seen.0.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(got, want);
    assert!(
        seen.0[..4]
            .iter()
            .all(|s| s.2 == AccessKind::Load && s.3 == WALK_PC)
    );
    assert_eq!((report.page_walks, report.walk_refs), (2, 7));
}

#[test]
fn a_level_without_an_array_small_enough_is_refused() {
    let config = TlbConfig {
        dtlb: vec![spec("32,4,2M")],
        ..TlbConfig::default()
    };
    let m = TlbSim::new(&config, PageMap::default(), false)
        .unwrap_err()
        .to_string();
    assert!(m.contains("no array for 4K pages"), "{m}");
    let all_2m = PageMap::uniform(LineSize::new(2 << 20).unwrap());
    assert!(TlbSim::new(&config, all_2m, false).is_ok());
}

/// A fully associative LRU cache of `lines` lines as a recency list: true on a hit.
fn lru(list: &mut Vec<u64>, lines: usize, line: u64) -> bool {
    let hit = match list.iter().position(|&l| l == line) {
        Some(p) => {
            list.remove(p);
            true
        }
        None => false,
    };
    list.insert(0, line);
    list.truncate(lines);
    hit
}

#[test]
fn walk_references_are_counted_apart_at_every_level() {
    use crate::sim::{Geometry, HierarchyConfig, Policy, SimAnalysis, SimOptions, WalkCounts};
    // Loads over 40 pages with some fetches: a 4-entry DTLB walks often.
    let mut x = 99u64;
    let b: Batch = (0..3000)
        .map(|k| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(11);
            if k % 5 == 0 {
                Access {
                    addr: 0x40_0000 + (x >> 50) * 4,
                    size: 4,
                    kind: AccessKind::Instr,
                    pc: None,
                }
            } else {
                Access::load(0x1000_0000 + ((x >> 33) % 40) * 4096 + (x >> 58) * 64, 8)
            }
        })
        .collect();
    let config = TlbConfig {
        dtlb: vec![spec("4,full,4K")],
        ..TlbConfig::default()
    };
    let tlb = || TlbSim::new(&config, PageMap::default(), false).unwrap();
    // The stream the caches see.
    let mut seen = Walked::new(tlb(), Seen::default());
    seen.observe(&b);
    let (t, stream) = seen.finish();
    assert!(t.page_walks > 100);

    // A hierarchy: L1I and L1D of 8 lines, L2 of 32, non-inclusive LRU.
    let l1 = Geometry::fully_associative(8 * 64, 64).unwrap();
    let l2 = Geometry::fully_associative(32 * 64, 64).unwrap();
    let mut h =
        SimAnalysis::hierarchy(&HierarchyConfig::new(l1, l1, l2), SimOptions::default()).unwrap();
    h.count_walks();
    let mut w = Walked::new(tlb(), h);
    w.observe(&b);
    let r = w.finish().1.finish();
    let (mut li, mut ld, mut l2l) = (Vec::new(), Vec::new(), Vec::new());
    let mut want = [WalkCounts::default(); 3];
    let mut refs = [0u64; 3];
    for &(_, addr, kind, pc) in &stream.0 {
        let line = addr >> 6;
        let (l1list, k) = if kind == AccessKind::Instr {
            (&mut li, 0)
        } else {
            (&mut ld, 1)
        };
        refs[k] += 1;
        let walk = pc == WALK_PC;
        if walk {
            want[1].refs += 1;
        }
        if lru(l1list, 8, line) {
            continue;
        }
        refs[2] += 1;
        let hit2 = lru(&mut l2l, 32, line);
        if walk {
            want[1].misses += 1;
            want[2].refs += 1;
            want[2].misses += u64::from(!hit2);
        }
    }
    let got: Vec<Option<WalkCounts>> = r.levels.iter().map(|l| l.walks).collect();
    assert_eq!(got, [None, Some(want[1]), Some(want[2])]);
    let level_refs: Vec<u64> = r.levels.iter().map(|l| l.stats.refs).collect();
    assert_eq!(level_refs, refs);
    assert_eq!(want[1].refs, t.walk_refs);

    // One cache: the walks' misses among its own.
    let mut c = SimAnalysis::cache(l2, Policy::Lru, SimOptions::default()).unwrap();
    c.count_walks();
    let mut w = Walked::new(tlb(), c);
    w.observe(&b);
    let r = w.finish().1.finish();
    let mut list = Vec::new();
    let mut want = WalkCounts::default();
    for &(_, addr, kind, pc) in &stream.0 {
        if kind == AccessKind::Instr {
            continue;
        }
        let hit = lru(&mut list, 32, addr >> 6);
        if pc == WALK_PC {
            want.refs += 1;
            want.misses += u64::from(!hit);
        }
    }
    assert_eq!(r.levels[0].walks, Some(want));
}
