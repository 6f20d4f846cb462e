use super::*;
use crate::access::Access;

#[test]
fn folding_the_dense_counts_changes_nothing() {
    let mut x = 5u64;
    let batch: Batch = (0..50_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            Access::load((x >> 50) * 64, 8)
        })
        .collect();
    let mut plain = FootprintAnalysis::new(Options::default(), &[70_001]).unwrap();
    let mut folding = plain.clone();
    folding.fold_limit = 1000;
    for _ in 0..3 {
        plain.observe(&batch);
        folding.observe(&batch);
    }
    let lines: Vec<u64> = batch.addrs.iter().map(|a| a >> 6).collect();
    let mut by_lines = FootprintAnalysis::new(Options::default(), &[70_001]).unwrap();
    for _ in 0..3 {
        by_lines.observe_lines(&lines);
    }
    let (a, b, c) = (plain.finish(), folding.finish(), by_lines.finish());
    assert_eq!(a.points(64).unwrap(), b.points(64).unwrap());
    assert_eq!(a.points(64).unwrap(), c.points(64).unwrap());
    assert_eq!(a.listed(), b.listed());
    assert!(a.fp(100) > 1.0);
}

proptest::proptest! {
    /// The report takes its reuse-time histograms from the footprint analysis instead of
    /// running a `ReuseTimeAnalysis` beside it: the two must agree bin for bin, long reuse
    /// times (binned above 2^8 here), runs of one line and batches of any length included.
    #[test]
    fn reuse_times_equal_those_of_the_reuse_time_analysis(
        lines in proptest::collection::vec(0u64..600, 0..3000),
        repeats in proptest::collection::vec(1usize..4, 0..3000),
        cuts in proptest::collection::vec(0usize..3000, 0..4),
    ) {
        use crate::reuse::{Layout, ReuseTimeAnalysis};
        let options = Options { layout: Layout::new(8).unwrap(), ..Options::default() };
        // Runs of one line (a line's words in a row) take the footprint's fast path.
        let addrs: Vec<u64> = lines
            .iter()
            .zip(repeats.iter().chain(std::iter::repeat(&1)))
            .flat_map(|(&l, &r)| std::iter::repeat_n(l * 64, r))
            .collect();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(addrs.len())).collect();
        cuts.push(0);
        cuts.push(addrs.len());
        cuts.sort_unstable();
        let mut fp = FootprintAnalysis::new(options, &[]).unwrap();
        let mut rt = ReuseTimeAnalysis::new(options);
        for w in cuts.windows(2) {
            let batch: Batch = addrs[w[0]..w[1]].iter().map(|&a| Access::load(a, 8)).collect();
            fp.observe(&batch);
            rt.observe(&batch);
        }
        let (footprint, times) = fp.finish_with_reuse_times();
        proptest::prop_assert_eq!(&times, &rt.finish());
        proptest::prop_assert_eq!(footprint.points(64).unwrap(), fp.finish().points(64).unwrap());
    }
}

/// Forgetting the lines a fixed-size sample dropped changes neither the footprint nor the
/// reuse times (each forgotten line's last position is kept apart), and keeps the table under
/// the forgetting cap where keeping them all does not.
#[test]
fn forgetting_dropped_lines_changes_no_footprint() {
    use crate::spatial::Forgetting;
    use crate::spatial::forget::{cap, testing};
    let mut a = FootprintAnalysis::new(Options::default(), &[70_001]).unwrap();
    let mut b = a.clone();
    b.forgetting = Forgetting::never();
    let max_lines = 1 << 12;
    let cap = cap(max_lines, max_lines);
    testing::sampled(
        testing::random_lines(1_500_000, 1_000_000),
        max_lines as u64,
        |batch| {
            a.observe(batch);
            b.observe(batch);
            assert!(a.held_lines() <= cap, "{} lines held", a.held_lines());
        },
    );
    assert!(b.held_lines() > cap, "too short: {}", b.held_lines());
    assert!(a.forgotten.len() > 0);
    assert_eq!(a.distinct_lines(), b.distinct_lines());
    let ((fa, ta), (fb, tb)) = (a.finish_with_reuse_times(), b.finish_with_reuse_times());
    assert_eq!(ta, tb);
    assert_eq!(fa.points(256).unwrap(), fb.points(256).unwrap());
    assert_eq!(fa.listed(), fb.listed());
    assert_eq!(fa.fp(123_457), fb.fp(123_457));
}
