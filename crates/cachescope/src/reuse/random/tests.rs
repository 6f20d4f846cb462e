//! Random replacement against each cache simulated alone, and its fast paths against each other.

use super::*;
use crate::access::Access;
use crate::rng::{below, splitmix64};
use proptest::prelude::*;

proptest! {
    /// Building a cache when it first evicts gives the same misses as simulating it from
    /// the first reference, across batch boundaries.
    #[test]
    fn lazy_building_changes_nothing(
        trace in proptest::collection::vec(0u64..60, 0..600),
        split in 0usize..600,
        seed in any::<u64>(),
    ) {
        let sizes: Vec<u64> = (0..70).map(|l| l * 64).collect();
        let split = split.min(trace.len());
        let batches: Vec<Batch> = [&trace[..split], &trace[split..]]
            .iter()
            .map(|part| part.iter().map(|&l| Access::load(l * 64, 8)).collect())
            .collect();
        let mut lazy = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
        let mut eager = lazy.clone();
        eager.build_all();
        for b in &batches {
            lazy.observe(b);
            eager.observe(b);
        }
        prop_assert_eq!(lazy.finish(), eager.finish());
    }

    /// The same misses as each cache simulated alone from the start over line addresses,
    /// with the same generator: a scan of its slots per reference, more than 64 sizes (two
    /// groups), batches cut anywhere.
    #[test]
    fn equals_each_cache_simulated_alone(
        trace in proptest::collection::vec(0u64..90, 0..800),
        cuts in proptest::collection::vec(0usize..800, 0..3),
        sizes in proptest::collection::vec(0u64..100, 1..80),
        seed in any::<u64>(),
    ) {
        let sizes: Vec<u64> = sizes.iter().map(|l| l * 64).collect();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(trace.len())).collect();
        cuts.extend([0, trace.len()]);
        cuts.sort_unstable();
        let mut a = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
        for w in cuts.windows(2) {
            a.observe(&trace[w[0]..w[1]].iter().map(|&l| Access::load(l * 64, 8)).collect());
        }
        let state = (u128::from(splitmix64(seed)) << 64) | u128::from(splitmix64(!seed));
        let naive: Vec<u64> = sizes
            .iter()
            .map(|&size| {
                let lines = size / 64;
                let mut rng = Pcg64::new(state, u128::from(lines));
                let mut slots: Vec<u64> = Vec::new();
                let mut misses = 0;
                for &l in &trace {
                    if lines == 0 {
                        misses += 1;
                    } else if !slots.contains(&l) {
                        misses += 1;
                        if (slots.len() as u64) < lines {
                            slots.push(l);
                        } else {
                            slots[below(&mut rng, lines) as usize] = l;
                        }
                    }
                }
                misses
            })
            .collect();
        let n = trace.len().max(1) as f64;
        let got: Vec<u64> = a
            .finish()
            .points
            .iter()
            .map(|p| (p.miss_ratio.unwrap() * n).round() as u64)
            .collect();
        prop_assert_eq!(got, naive);
    }

    /// Line numbers in order of first reference give the misses the lines give.
    #[test]
    fn numbered_lines_equal_lines(
        trace in proptest::collection::vec(0u64..60, 0..600),
        split in 0usize..600,
        seed in any::<u64>(),
    ) {
        let sizes: Vec<u64> = (0..70).map(|l| l * 64).collect();
        let ids = crate::opt::numbered(&trace);
        let split = split.min(trace.len());
        let mut by_line = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
        let mut by_number = by_line.clone();
        for part in [&trace[..split], &trace[split..]] {
            by_line.observe(&part.iter().map(|&l| Access::load(l * 64, 8)).collect());
        }
        by_number.observe_numbered(&ids[..split]);
        by_number.observe_numbered(&ids[split..]);
        prop_assert_eq!(by_line.finish(), by_number.finish());
    }

    /// The ids' prefetching looks ahead within a block only: blocks of any length (some
    /// shorter than `AHEAD`) give the misses of one block, and of the lines themselves.
    #[test]
    fn numbered_blocks_of_any_length(
        trace in proptest::collection::vec(0u64..200, 0..1500),
        lens in proptest::collection::vec(1usize..40, 1..8),
        seed in any::<u64>(),
    ) {
        let sizes: Vec<u64> = (0..90).map(|l| l * 3 * 64).collect();
        let ids = crate::opt::numbered(&trace);
        let mut by_line = RandomReplacementAnalysis::new(Options::default(), &sizes, seed);
        let mut whole = by_line.clone();
        let mut blocks = by_line.clone();
        by_line.observe(&trace.iter().map(|&l| Access::load(l * 64, 8)).collect());
        whole.observe_numbered(&ids);
        let mut rest = &ids[..];
        for &len in lens.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (block, tail) = rest.split_at(len.min(rest.len()));
            blocks.observe_numbered(block);
            rest = tail;
        }
        prop_assert_eq!(whole.finish(), by_line.finish());
        prop_assert_eq!(blocks.finish(), by_line.finish());
    }
}
