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
