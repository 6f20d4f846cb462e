//! The fast paths against brute force (`naive`), the laws of LRU curves, and hand examples.

use proptest::prelude::*;

use super::naive;
use super::*;
use crate::access::Access;
use crate::analysis::Analysis;
use crate::trace::AccessReader;
use crate::workloads::{Params, Workload, generator};

/// Lines named by letters, as in docs/definitions.md's examples.
fn letters(s: &str) -> Vec<u64> {
    s.bytes().map(u64::from).collect()
}

/// A batch of 8-byte loads, one per line, with 64-byte lines.
fn batch_of(trace: &[u64]) -> Batch {
    trace.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

fn fast_stack_distances(trace: &[u64], min_capacity: u64) -> Vec<Option<u64>> {
    let mut s = StackDistance::with_min_capacity(min_capacity);
    trace.iter().map(|&l| s.access(LineAddr(l))).collect()
}

fn fast_reuse_times(trace: &[u64]) -> Vec<Option<u64>> {
    let mut r = ReuseTime::new();
    trace.iter().map(|&l| r.access(LineAddr(l))).collect()
}

fn stack_distances_of(trace: &[u64], layout: Layout) -> StackDistances {
    let mut a = StackDistanceAnalysis::new(Options {
        layout,
        ..Options::default()
    });
    a.observe(&batch_of(trace));
    a.finish()
}

/// Xiang's formula, fp(w) = m − [Σ(f−w)⁺ + Σ(l−w)⁺ + Σ(rt−w)⁺] / (n − w + 1), from exact bins.
fn footprint(r: &ReuseTimes, w: u64) -> f64 {
    let excess =
        |h: &LogHistogram| -> u64 { h.bins().map(|b| b.count * b.start.saturating_sub(w)).sum() };
    let sum = excess(&r.first) + excess(&r.last) + excess(&r.reuse_time);
    r.distinct_lines as f64 - sum as f64 / (r.refs - w + 1) as f64
}

#[test]
fn hand_examples_follow_locality_md() {
    // "abbb": b at 3 and 4 reuse after 1 reference; nothing in between.
    let abbb = letters("abbb");
    assert_eq!(fast_reuse_times(&abbb), [None, None, Some(1), Some(1)]);
    assert_eq!(
        fast_stack_distances(&abbb, 64),
        [None, None, Some(0), Some(0)]
    );
    // "xxyxxx": x4 reuses x2 after 2 references (rt 2, StatCache 1) with y between (sd 1, HOTL 2).
    let x = letters("xxyxxx");
    let rt = fast_reuse_times(&x);
    let sd = fast_stack_distances(&x, 64);
    assert_eq!(rt, [None, Some(1), None, Some(2), Some(1), Some(1)]);
    assert_eq!(sd, [None, Some(0), None, Some(1), Some(0), Some(0)]);
    let statcache: Vec<_> = rt.iter().map(|r| r.map(statcache_distance)).collect();
    let hotl: Vec<_> = sd.iter().map(|s| s.map(hotl_distance)).collect();
    assert_eq!(statcache, [None, Some(0), None, Some(1), Some(0), Some(0)]);
    assert_eq!(hotl, [None, Some(1), None, Some(2), Some(1), Some(1)]);
    for t in [&abbb, &x] {
        assert_eq!(fast_reuse_times(t), naive::reuse_times(t));
        assert_eq!(fast_stack_distances(t, 64), naive::stack_distances(t));
    }
    // LRU of 1 line hits x5, x6, x2 (sd 0) but not x4 (sd 1): 2 cold + 1.
    let d = stack_distances_of(&x, Layout::DEFAULT);
    assert_eq!((d.misses(1).low, d.misses(2).low), (3, 2));
    assert_eq!(naive::lru_misses(&x, 1), 3);
}

#[test]
fn reuse_time_histograms_give_the_footprint_check() {
    let mut a = ReuseTimeAnalysis::new(Options::default());
    a.observe(&batch_of(&letters("abbb")));
    let r = a.finish();
    assert_eq!((r.refs, r.distinct_lines), (4, 2));
    assert_eq!(r.first.bins().map(|b| b.start).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(r.last.bins().map(|b| b.start).collect::<Vec<_>>(), [1, 4]);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(footprint(&r, 2), 4.0 / 3.0)); // docs/definitions.md's check
    assert!(close(footprint(&r, 1), 1.0));
    assert!(close(footprint(&r, 4), 2.0));
}

#[test]
fn instruction_fetches_are_skipped_unless_included() {
    let batch: Batch = [
        Access {
            addr: 0x400,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(0x400),
        },
        Access::load(0x1000, 8),
        Access::store(0x103c, 8), // straddles: counts as line 0x1000 >> 6 only
        Access {
            addr: 0x404,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(0x404),
        },
        Access::load(0x1040, 8),
    ]
    .into_iter()
    .collect();
    let mut data = StackDistanceAnalysis::new(Options::default());
    let mut unified = StackDistanceAnalysis::new(Options {
        include_instructions: true,
        ..Options::default()
    });
    data.observe(&batch);
    unified.observe(&batch);
    let (d, u) = (data.finish(), unified.finish());
    assert_eq!((d.refs, d.cold, d.histogram.bin_of(0).count), (3, 2, 1));
    // Unified: the second fetch reuses the first one's line across one data line (sd 1).
    assert_eq!((u.refs, u.cold), (5, 3));
    assert_eq!(
        (u.histogram.bin_of(0).count, u.histogram.bin_of(1).count),
        (1, 1)
    );
}

#[test]
fn loop_workload_has_its_known_curve() {
    let p = Params {
        lines: 3000,
        refs: Some(30_000),
        ..Params::default()
    };
    let mut g = generator(Workload::Loop, &p).unwrap();
    let mut a = StackDistanceAnalysis::new(Options::default());
    let mut batch = Batch::new();
    while g.read_batch(&mut batch).unwrap() > 0 {
        a.observe(&batch);
    }
    let d = a.finish();
    assert_eq!((d.refs, d.cold), (30_000, 3000));
    assert_eq!(d.histogram.bin_of(2999).count, 27_000);
    let m = d.mrc(&[2999 * 64, 3000 * 64]);
    assert_eq!(m.points[0].miss_ratio, Some(1.0));
    assert_eq!(m.points[1].miss_ratio, Some(0.1));
    assert_eq!(m.points[1].miss_ratio_warm, 0.0);
}

/// A long trace mixing hot lines, scans and a random tail, across several compactions of the
/// default timestamp space; checked against Mattson's stack and a direct LRU simulation.
#[test]
fn long_trace_matches_the_lru_stack() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let trace: Vec<u64> = (0..200_000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 8 {
                0..=3 => x % 64,
                4 | 5 => 1000 + i % 1500,
                _ => 10_000 + (x >> 8) % 2500,
            }
        })
        .collect();
    let fast = fast_stack_distances(&trace, timestamps::MIN_CAPACITY);
    assert_eq!(fast, naive::lru_stack_depths(&trace));
    let d = stack_distances_of(&trace, Layout::DEFAULT);
    for c in [0, 1, 32, 64, 65, 1000, 1500, 1564, 3000, 4064, 5000] {
        let m = d.misses(c);
        assert!(m.is_exact());
        assert_eq!(m.low, naive::lru_misses(&trace, c as usize), "{c} lines");
    }
}

fn small_traces() -> impl Strategy<Value = Vec<u64>> {
    (1u64..40).prop_flat_map(|lines| proptest::collection::vec(0..lines, 0..400))
}

proptest! {
    #[test]
    fn fast_distances_match_brute_force(trace in small_traces()) {
        // A 64-timestamp space compacts every few dozen references.
        prop_assert_eq!(fast_stack_distances(&trace, 64), naive::stack_distances(&trace));
        prop_assert_eq!(fast_stack_distances(&trace, 64), naive::lru_stack_depths(&trace));
        prop_assert_eq!(fast_reuse_times(&trace), naive::reuse_times(&trace));
    }

    #[test]
    fn exact_curve_matches_lru_simulation_at_every_size(trace in small_traces()) {
        let d = stack_distances_of(&trace, Layout::DEFAULT);
        let distinct = d.cold as usize;
        prop_assert_eq!(d.histogram.total() + d.cold, trace.len() as u64);
        let sizes: Vec<u64> = (0..=distinct as u64 + 1).map(|c| c * 64).collect();
        let mrc = d.mrc(&sizes);
        let mut previous = f64::INFINITY;
        for (c, p) in mrc.points.iter().enumerate() {
            let misses = naive::lru_misses(&trace, c);
            prop_assert_eq!(d.misses(c as u64).low, misses);
            prop_assert!(d.misses(c as u64).is_exact());
            let n = trace.len().max(1) as f64;
            prop_assert_eq!(p.miss_ratio.unwrap(), misses as f64 / n);
            prop_assert_eq!(p.miss_ratio_warm, (misses - d.cold) as f64 / n);
            prop_assert_eq!(p.lines, c as u64);
            prop_assert!(p.miss_ratio.unwrap() <= previous, "miss ratio rose at {} lines", c);
            previous = p.miss_ratio.unwrap();
        }
    }

    #[test]
    fn reuse_times_conserve_references(trace in small_traces()) {
        let mut a = ReuseTimeAnalysis::new(Options::default());
        a.observe(&batch_of(&trace));
        let r = a.finish();
        prop_assert_eq!(r.reuse_time.total() + r.distinct_lines, trace.len() as u64);
        prop_assert_eq!(r.first.total(), r.distinct_lines);
        prop_assert_eq!(r.last.total(), r.distinct_lines);
        // Xiang's formula at w = 1 counts one distinct line per window.
        if !trace.is_empty() {
            prop_assert!((footprint(&r, 1) - 1.0).abs() < 1e-9);
        }
    }

    /// With an exact region of only 256 distances, larger sizes are binned: the bounds hold
    /// the LRU truth, sizes up to 256 and on bin boundaries stay exact.
    #[test]
    fn binned_curve_brackets_lru_simulation(
        trace in (300u64..1200).prop_flat_map(|l| proptest::collection::vec(0..l, 1000..3000)),
        sizes in proptest::collection::vec(0u64..1300, 1..6),
    ) {
        let d = stack_distances_of(&trace, Layout::new(8).unwrap());
        prop_assert_eq!(d.histogram.total() + d.cold, trace.len() as u64);
        let mrc = d.mrc(&sizes.iter().map(|c| c * 64).collect::<Vec<_>>());
        for (&c, p) in sizes.iter().zip(&mrc.points) {
            let truth = naive::lru_misses(&trace, c as usize);
            let m = d.misses(c);
            prop_assert!(m.low <= truth && truth <= m.high, "{} lines: {:?} vs {}", c, m, truth);
            prop_assert!(m.low as f64 <= p.miss_ratio.unwrap() * trace.len() as f64 + 1e-6);
            prop_assert!(p.miss_ratio.unwrap() * trace.len() as f64 <= m.high as f64 + 1e-6);
            if c <= 256 || d.histogram.bin_of(c).start == c {
                prop_assert_eq!(m.low, truth);
                prop_assert!(m.is_exact());
            }
        }
    }

    #[test]
    fn random_replacement_basics(trace in small_traces(), seed in any::<u64>()) {
        let distinct = trace.iter().collect::<std::collections::HashSet<_>>().len() as u64;
        let sizes = [0, 64, 128, 640, distinct * 64, (distinct + 3) * 64];
        let run = |seed| {
            let mut a = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
            a.observe(&batch_of(&trace));
            a.finish()
        };
        let m = run(seed);
        prop_assert_eq!(&m, &run(seed));
        prop_assert_eq!((m.method.as_str(), m.policy.as_str()), ("exact", "random"));
        let n = trace.len().max(1) as f64;
        let count = |i: usize| (m.points[i].miss_ratio.unwrap() * n).round() as u64;
        prop_assert_eq!(count(0), trace.len() as u64);
        // One line: a miss whenever the line changes (LRU and random agree).
        prop_assert_eq!(count(1), naive::lru_misses(&trace, 1));
        // Room for every line: only cold misses.
        prop_assert_eq!(count(4), distinct);
        prop_assert_eq!(count(5), distinct);
        prop_assert_eq!(m.points[4].miss_ratio_warm, 0.0);
        for i in 0..sizes.len() {
            prop_assert!(count(i) >= distinct);
        }
    }
}

#[test]
fn random_replacement_hits_where_lru_thrashes() {
    // A loop over 100 lines in a 90-line cache: LRU misses every time, random keeps some.
    let trace: Vec<u64> = (0..20_000).map(|i| i % 100).collect();
    let mut a = RandomReplacementAnalysis::new(Options::default(), &[90 * 64], 7);
    a.observe(&batch_of(&trace));
    let random = a.finish().points[0].miss_ratio.unwrap();
    let lru = stack_distances_of(&trace, Layout::DEFAULT)
        .mrc(&[90 * 64])
        .points[0]
        .miss_ratio
        .unwrap();
    assert_eq!(lru, 1.0);
    assert!(random < 0.5, "random replacement miss ratio {random}");
}

proptest! {
    /// The lines the analyses read are the same from the pass's data index as from the
    /// batch filtered, with or without instruction fetches counted.
    #[test]
    fn indexed_batches_give_the_same_lines(
        refs in proptest::collection::vec((0u64..1 << 20, 0u8..4), 0..200),
        all in any::<bool>(),
    ) {
        let kinds = [AccessKind::Instr, AccessKind::Load, AccessKind::Store, AccessKind::Modify];
        let plain: Batch = refs
            .iter()
            .map(|&(a, k)| Access { kind: kinds[usize::from(k)], ..Access::load(a, 4) })
            .collect();
        let mut indexed = plain.clone();
        indexed.index_data();
        let options = Options { include_instructions: all, ..Options::default() };
        let chunks = |b: &Batch| {
            let mut out = Vec::new();
            for_each_chunk(b, &options, |c| {
                assert!(!c.is_empty() && c.len() <= CHUNK);
                out.push(c.to_vec());
            });
            out
        };
        prop_assert_eq!(chunks(&indexed), chunks(&plain));
        let lines = |b: &Batch| data_lines(b, &options).collect::<Vec<_>>();
        prop_assert_eq!(lines(&indexed), lines(&plain));
        let want = plain
            .iter()
            .filter(|a| all || a.kind != AccessKind::Instr)
            .map(|a| LineAddr(a.addr >> 6))
            .collect::<Vec<_>>();
        prop_assert_eq!(lines(&plain), want);
    }
}

proptest! {
    /// [`StackDistance::forget`] against an LRU list from which the forgotten lines are
    /// removed: the distances after it count the lines kept only (across compactions).
    #[test]
    fn forgetting_lines_takes_them_out_of_the_stack(
        trace in proptest::collection::vec(0u64..200, 1..2000),
        sweeps in proptest::collection::vec((0usize..2000, 2u64..5), 0..4),
    ) {
        let mut fast = StackDistance::with_min_capacity(64);
        let mut list: Vec<u64> = Vec::new();
        for (i, &l) in trace.iter().enumerate() {
            for &(at, m) in &sweeps {
                if at == i {
                    fast.forget(|x| x % m != 0);
                    list.retain(|x| x % m != 0);
                    prop_assert_eq!(fast.distinct_lines(), list.len() as u64);
                }
            }
            let want = list.iter().position(|&x| x == l).map(|p| p as u64);
            if let Some(p) = want {
                list.remove(p as usize);
            }
            list.insert(0, l);
            prop_assert_eq!(fast.access(crate::LineAddr(l)), want, "reference {}", i);
        }
    }
}
