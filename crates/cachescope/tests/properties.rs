//! Property tests for the laws the papers rely on that are not already tested next to their
//! code. Where each law is tested (one place per law) is listed in docs/reliability.md.
//!
//! - the exact LRU miss ratio never rises with cache size (Mattson's inclusion property);
//! - HOTL's miss ratio from the footprint never rises with cache size either (fp is concave);
//! - StatCache's `R` lies in [0, 1] and falls as the cache grows (Berg & Hagersten, eq. 6);
//! - one pass through `pass::Pass::run` gives the same results with 1, 2 or 3 threads.

use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::models::hotl::{self, FootprintAnalysis};
use cachescope::models::statcache;
use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::{self, StackDistanceAnalysis, StackDistances};
use cachescope::stats::StatsAnalysis;
use cachescope::trace::{AccessReader, Trace};
use cachescope::{Access, AccessKind, LineSize, Source};
use proptest::prelude::*;

/// Traces of line numbers over a small alphabet, so lines are reused at many distances.
fn traces() -> impl Strategy<Value = Vec<u64>> {
    (1u64..64).prop_flat_map(|alphabet| proptest::collection::vec(0..alphabet, 1..600))
}

fn batch_of(lines: &[u64]) -> Batch {
    lines.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

fn stack_distances(lines: &[u64]) -> StackDistances {
    let mut a = StackDistanceAnalysis::new(reuse::Options::default());
    a.observe(&batch_of(lines));
    a.finish()
}

/// Every size from 1 line up to past the distinct lines, in bytes (64-byte lines).
fn all_sizes(lines: &[u64]) -> Vec<u64> {
    let distinct = lines.iter().collect::<std::collections::HashSet<_>>().len() as u64;
    (1..=distinct + 2).map(|l| l * 64).collect()
}

/// A reader handing out prepared accesses in batches of the given lengths (cycled), so a pass
/// crosses many batch boundaries.
struct Chunked {
    accesses: Vec<Access>,
    at: usize,
    lens: Vec<usize>,
    turn: usize,
}

impl AccessReader for Chunked {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        batch.clear();
        let len = self.lens[self.turn % self.lens.len()];
        self.turn += 1;
        let end = (self.at + len).min(self.accesses.len());
        batch.extend(self.accesses[self.at..end].iter().copied());
        self.at = end;
        Ok(batch.len())
    }
}

fn accesses() -> impl Strategy<Value = Vec<Access>> {
    let kind = prop_oneof![
        Just(AccessKind::Load),
        Just(AccessKind::Store),
        Just(AccessKind::Modify),
        Just(AccessKind::Instr),
    ];
    proptest::collection::vec((0u64..4096, 1u32..16, kind), 0..2000).prop_map(|v| {
        v.into_iter()
            .map(|(addr, size, kind)| Access {
                addr: addr * 8,
                size,
                kind,
                pc: None,
            })
            .collect()
    })
}

/// Stats, stack distances and footprint of one pass with `threads` threads.
fn one_pass(accesses: &[Access], lens: &[usize], threads: usize) -> (String, String, String) {
    let reader = Chunked {
        accesses: accesses.to_vec(),
        at: 0,
        lens: lens.to_vec(),
        turn: 0,
    };
    let mut trace = Trace::from_reader(Box::new(reader), Source::Memory);
    let line_size = LineSize::new(32).unwrap();
    let options = reuse::Options {
        line_size,
        include_instructions: true,
        ..reuse::Options::default()
    };
    let mut stats = StatsAnalysis::new(line_size);
    let mut sd = StackDistanceAnalysis::new(options);
    let mut fp = FootprintAnalysis::new(options, &[3, 100]).unwrap();
    let seen = Pass::new(threads)
        .run(&mut trace, Analyses(&mut [&mut stats, &mut sd, &mut fp]))
        .unwrap();
    assert_eq!(seen, accesses.len() as u64);
    (
        format!("{:?}", stats.finish()),
        format!("{:?}", sd.finish()),
        serde_json::to_string(&fp.finish()).unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn lru_miss_ratio_never_rises_with_cache_size(lines in traces()) {
        let curve = stack_distances(&lines).mrc(&all_sizes(&lines));
        for pair in curve.points.windows(2) {
            prop_assert!(pair[1].miss_ratio_warm <= pair[0].miss_ratio_warm);
            prop_assert!(pair[1].miss_ratio <= pair[0].miss_ratio);
        }
        // Past the distinct lines only cold misses remain.
        let last = curve.points.last().unwrap();
        prop_assert_eq!(last.miss_ratio_warm, 0.0);
    }

    #[test]
    fn hotl_miss_ratio_never_rises_with_cache_size(lines in traces()) {
        let mut a = FootprintAnalysis::new(reuse::Options::default(), &[]).unwrap();
        a.observe(&batch_of(&lines));
        let curve = hotl::mrc(&a.finish(), &all_sizes(&lines));
        for pair in curve.points.windows(2) {
            prop_assert!(
                pair[1].miss_ratio_warm <= pair[0].miss_ratio_warm + 1e-12,
                "{:?} then {:?}", pair[0], pair[1]
            );
        }
        for p in &curve.points {
            prop_assert!((0.0..=1.0 + 1e-12).contains(&p.miss_ratio_warm), "{:?}", p);
        }
    }

    #[test]
    fn statcache_ratio_lies_in_0_1_and_falls_as_the_cache_grows(
        hist in proptest::collection::vec((0u64..5000, 0.0f64..100.0), 0..40),
        dangling in prop_oneof![Just(0.0), 0.0f64..50.0],
        mut sizes in proptest::collection::vec(1.0f64..10_000.0, 2..12),
    ) {
        sizes.sort_by(f64::total_cmp);
        let mut previous = f64::INFINITY;
        for &lines in &sizes {
            let r = statcache::miss_ratio(&hist, dangling, lines);
            prop_assert!((0.0..=1.0).contains(&r), "R = {} at L = {}", r, lines);
            // The solver stops within 1e-12 of the root.
            prop_assert!(r <= previous + 1e-9, "R rose to {} at L = {} from {}", r, lines, previous);
            previous = r;
        }
    }

    #[test]
    fn two_threads_give_the_results_of_one(
        accesses in accesses(),
        lens in proptest::collection::vec(1usize..700, 1..6),
    ) {
        let one = one_pass(&accesses, &lens, 1);
        prop_assert_eq!(&one, &one_pass(&accesses, &lens, 2));
        prop_assert_eq!(&one, &one_pass(&accesses, &lens, 3));
    }
}
