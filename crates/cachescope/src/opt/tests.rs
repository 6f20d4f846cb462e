//! OPT against brute-force MIN, against LRU, and the run stack against Mattson's update.

use proptest::prelude::*;

use super::mattson::MattsonStack;
use super::*;
use crate::access::Access;
use crate::sim::{Cache, Policy};

/// Belady's MIN with demand fetch, written plainly: on a miss in a full cache, evict the
/// resident line whose next reference (searched in the trace) is farthest.
fn brute_min(trace: &[u64], capacity: usize) -> u64 {
    let mut cache: Vec<u64> = Vec::new();
    let mut misses = 0;
    for (t, &line) in trace.iter().enumerate() {
        if capacity == 0 {
            misses += 1;
            continue;
        }
        if cache.contains(&line) {
            continue;
        }
        misses += 1;
        if cache.len() == capacity {
            let next = |l: u64| {
                trace[t + 1..]
                    .iter()
                    .position(|&x| x == l)
                    .unwrap_or(usize::MAX)
            };
            let far = (0..cache.len()).max_by_key(|&i| next(cache[i])).unwrap();
            cache.remove(far);
        }
        cache.push(line);
    }
    misses
}

fn batch(trace: &[u64]) -> Batch {
    trace.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

/// OPT misses at 0..=max lines, through the spill and the stack, the trace cut in two batches.
fn opt_misses(trace: &[u64], max: u64) -> Vec<u64> {
    let mut opt = OptAnalysis::new(Options::default()).unwrap();
    let half = trace.len() / 2;
    opt.observe(&batch(&trace[..half]));
    opt.observe(&batch(&trace[half..]));
    let sizes: Vec<u64> = (0..=max).map(|l| l * 64).collect();
    let mrc = opt.finish(&sizes).unwrap();
    mrc.points
        .iter()
        .map(|p| (p.miss_ratio.unwrap() * trace.len().max(1) as f64).round() as u64)
        .collect()
}

#[test]
fn hand_worked_trace() {
    // a b c d a b e a b c d e with 3 lines, Belady's textbook example: 7 misses (LRU: 10).
    let t = [0, 1, 2, 3, 0, 1, 4, 0, 1, 2, 3, 4];
    assert_eq!(brute_min(&t, 3), 7);
    assert_eq!(opt_misses(&t, 5), [12, 12, 9, 7, 6, 5]);
}

#[test]
fn spill_crosses_blocks() {
    // More references than three blocks of the backward pass, against next uses computed in
    // memory.
    let t: Vec<u64> = (0..200_000u64)
        .map(|i| ((i * 7919) % 50_021) ^ (i % 3))
        .collect();
    let mut opt = OptAnalysis::new(Options::default()).unwrap();
    opt.observe(&batch(&t[..123_457]));
    opt.observe(&batch(&t[123_457..]));
    let sizes: Vec<u64> = [1, 100, 10_000, 40_000, 60_000].map(|l| l * 64).to_vec();
    let got = opt.finish(&sizes).unwrap();
    let mut ids = std::collections::HashMap::new();
    let id: Vec<u32> = t
        .iter()
        .map(|&l| {
            let n = ids.len() as u32;
            *ids.entry(l).or_insert(n)
        })
        .collect();
    let mut next = vec![u64::MAX; t.len()];
    let mut last = std::collections::HashMap::new();
    for i in (0..t.len()).rev() {
        next[i] = last.insert(t[i], i as u64).unwrap_or(u64::MAX);
    }
    let mut stack = OptStack::new();
    for i in 0..t.len() {
        stack.access(id[i], next[i]);
    }
    assert_eq!(got, curve(&stack, Options::default(), &sizes));
    assert!(got.points[0].miss_ratio > got.points[4].miss_ratio);
}

/// Dense ids and next uses (time indices, `u64::MAX` for none) of a trace of lines.
fn ids_and_next(trace: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let mut ids = std::collections::HashMap::new();
    let id = trace
        .iter()
        .map(|&l| {
            let n = ids.len() as u32;
            *ids.entry(l).or_insert(n)
        })
        .collect();
    let mut next = vec![u64::MAX; trace.len()];
    let mut last = std::collections::HashMap::new();
    for i in (0..trace.len()).rev() {
        next[i] = last.insert(trace[i], i as u64).unwrap_or(u64::MAX);
    }
    (id, next)
}

#[test]
fn spilled_next_uses_are_exact_in_4_and_8_bytes() {
    // Past three blocks, lines never referenced again among them, against next uses computed
    // in memory; both widths of the spilled next uses.
    let t: Vec<u64> = (0..150_000u64)
        .map(|i| (i * 2_654_435_761) % 70_001)
        .collect();
    let want = ids_and_next(&t);
    for wide in [false, true] {
        let mut spill = NextUseSpill::new(Options::default()).unwrap();
        spill.observe(&batch(&t[..70_000]));
        spill.observe(&batch(&t[70_000..]));
        let mut got = (Vec::new(), Vec::new());
        let mut spilled = spill.finish_as(wide, None).unwrap();
        spilled
            .for_each(|id, next| {
                got.0.push(id);
                got.1.push(next);
            })
            .unwrap();
        assert_eq!(got, want, "wide: {wide}");
        assert!(got.1.contains(&u64::MAX));
    }
}

/// The run stack (bounded at `bound` lines, if given) and Mattson's whole stack on `trace`:
/// their misses at every size from 0 to the bound (else to past the footprint). Checks on the
/// way that the run stack holds every line seen up to its bound and no more, and that it
/// counts first references alone as cold, whatever it let go.
fn against_mattson(trace: &[u64], bound: Option<u64>) -> (Vec<u64>, Vec<u64>) {
    let (id, next) = ids_and_next(trace);
    let mut runs = bound.map_or_else(OptStack::new, OptStack::bounded);
    let mut mattson = MattsonStack::new();
    let mut seen = std::collections::HashSet::new();
    for (&i, &n) in id.iter().zip(&next) {
        runs.access(i, n);
        mattson.access(i, n);
        seen.insert(i);
        let held = seen.len() as u64;
        assert_eq!(runs.lines() as u64, bound.map_or(held, |b| b.min(held)));
    }
    assert_eq!((runs.refs(), runs.cold()), (mattson.refs(), mattson.cold()));
    let top = bound.unwrap_or(id.len() as u64 + 1);
    let sizes: Vec<u64> = (0..=top).collect();
    (runs.misses_at(&sizes), mattson.misses_at(&sizes))
}

/// The skewed trace of [`run_stack_equals_mattson_on_skewed_traces`].
fn skewed_trace() -> Vec<u64> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut trace = Vec::new();
    for i in 0..60_000u64 {
        let r = rand();
        trace.push(match (i / 10_000) % 3 {
            0 => 4096 / (1 + r % 4096),
            1 => i % 700,
            _ => (r % 64) * (r % 50),
        });
    }
    trace
}

#[test]
fn bounded_stack_equals_mattson_up_to_its_bound_on_skewed_traces() {
    // Bounds below, inside and above the loop phase's 700 lines: lines let go and taken back.
    let trace = skewed_trace();
    for bound in [1, 2, 16, 300, 699, 700, 701, 5000] {
        let (runs, mattson) = against_mattson(&trace, Some(bound));
        assert_eq!(runs, mattson, "bound {bound}");
    }
}

#[test]
fn run_stack_equals_mattson_on_skewed_traces() {
    // Zipf-like draws, loops and phases over a few thousand lines: many runs, many references
    // into the first run, stale entries compacted.
    let (runs, mattson) = against_mattson(&skewed_trace(), None);
    assert_eq!(runs, mattson);
}

proptest! {
    /// Wide keys, from the start (times past 2^32: the stack widens at once) or from halfway,
    /// give the narrow keys' curve.
    #[test]
    fn wide_keys_equal_narrow_keys(
        trace in (1u64..40).prop_flat_map(|span| proptest::collection::vec(0..span, 0..400)),
    ) {
        let (id, next) = ids_and_next(&trace);
        let (mut narrow, mut halfway, mut late) = (OptStack::new(), OptStack::new(), OptStack::new());
        for (k, (&i, &n)) in id.iter().zip(&next).enumerate() {
            if k == id.len() / 2 {
                halfway.widen();
            }
            narrow.access(i, n);
            halfway.access(i, n);
            late.access(i, if n == u64::MAX { n } else { n + (1 << 32) });
        }
        let sizes: Vec<u64> = (0..=id.len() as u64 + 1).collect();
        prop_assert_eq!(narrow.misses_at(&sizes), halfway.misses_at(&sizes));
        prop_assert_eq!(narrow.misses_at(&sizes), late.misses_at(&sizes));
    }

    #[test]
    fn run_stack_equals_mattson(
        trace in (1u64..40).prop_flat_map(|span| proptest::collection::vec(0..span, 0..600)),
    ) {
        let (runs, mattson) = against_mattson(&trace, None);
        prop_assert_eq!(runs, mattson);
    }

    /// A bounded stack's misses equal the whole stack's at every size up to the bound, on
    /// traces of more lines than the bound (lines let go at the bottom and referenced again).
    #[test]
    fn bounded_stack_equals_mattson_up_to_its_bound(
        trace in (1u64..40).prop_flat_map(|span| proptest::collection::vec(0..span, 0..600)),
        bound in 1u64..24,
    ) {
        let (runs, mattson) = against_mattson(&trace, Some(bound));
        prop_assert_eq!(runs, mattson);
    }

    #[test]
    fn opt_equals_brute_force_min_at_every_size(
        trace in (1u64..24).prop_flat_map(|span| proptest::collection::vec(0..span, 0..200)),
    ) {
        let got = opt_misses(&trace, 25);
        for (c, &m) in got.iter().enumerate() {
            prop_assert_eq!(m, brute_min(&trace, c), "{} lines", c);
        }
    }

    #[test]
    fn opt_is_never_above_lru(
        trace in (1u64..300).prop_flat_map(|span| proptest::collection::vec(0..span, 0..1500)),
        lines in 1u64..200,
    ) {
        let opt = opt_misses(&trace, lines)[lines as usize];
        let mut lru = Cache::new(Geometry::fully_associative(lines * 64, 64).unwrap(), Policy::Lru).unwrap();
        let lru = lru.access_all(trace.iter().copied());
        prop_assert!(opt <= lru, "OPT {} > LRU {}", opt, lru);
    }

    #[test]
    fn set_associative_opt_equals_brute_force_per_set(
        trace in proptest::collection::vec(0u64..64, 0..300),
        log_sets in 0u32..3,
        ways in 1u32..5,
    ) {
        let sets = 1u64 << log_sets;
        let g = Geometry::new(sets * u64::from(ways), ways, 1).unwrap();
        let mut spill = NextUseSpill::new(Options { line_size: crate::LineSize::new(1).unwrap(), ..Options::default() }).unwrap();
        spill.observe(&trace.iter().map(|&l| Access::load(l, 1)).collect());
        let got = set_assoc_misses(&mut spill.finish().unwrap(), &[g]).unwrap()[0];
        // Sets are independent: MIN on each set's sub-trace.
        let want: u64 = (0..sets)
            .map(|s| {
                let sub: Vec<u64> = trace.iter().copied().filter(|l| l % sets == s).collect();
                brute_min(&sub, ways as usize)
            })
            .sum();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    /// The spilled ids number lines in order of first reference, block after block, and
    /// reading them on another thread while the backward pass and the stack run changes
    /// neither them nor the curve.
    #[test]
    fn spilled_ids_number_lines_beside_finish(
        trace in proptest::collection::vec(0u64..40, 0..3000),
    ) {
        let expected = crate::opt::numbered(&trace);
        let sizes: Vec<u64> = (0..42).map(|l| l * 64).collect();
        let mut alone = OptAnalysis::new(Options::default()).unwrap();
        alone.observe(&batch(&trace));
        let mut beside = OptAnalysis::new(Options::default()).unwrap();
        beside.observe(&batch(&trace));
        let ids = beside.ids().unwrap();
        prop_assert_eq!(ids.refs(), trace.len() as u64);
        let (read, curve) = std::thread::scope(|s| {
            let curve = s.spawn(|| beside.finish(&sizes));
            let mut read = Vec::new();
            ids.for_each_block(|b| read.extend_from_slice(b)).unwrap();
            (read, curve.join().unwrap().unwrap())
        });
        prop_assert_eq!(read, expected);
        prop_assert_eq!(curve, alone.finish(&sizes).unwrap());
    }
}

/// Forgetting the lines a fixed-size sample dropped changes no line's id: the spilled ids are
/// those of keeping every line, and the line → id table stays under twice the sample.
#[test]
fn forgetting_dropped_lines_changes_no_id() {
    let mut a = NextUseSpill::new(Options::default()).unwrap();
    let mut b = NextUseSpill::new(Options::default())
        .unwrap()
        .never_forget();
    crate::spatial::forget::testing::forgetting_stays_bounded(
        &mut a,
        &mut b,
        NextUseSpill::held_lines,
    );
    let ids = |s: &mut NextUseSpill| {
        let mut v = Vec::new();
        s.ids()
            .unwrap()
            .for_each_block(|b| v.extend_from_slice(b))
            .unwrap();
        v
    };
    let (x, y) = (ids(&mut a), ids(&mut b));
    assert!(!x.is_empty());
    assert_eq!(x, y);
}
