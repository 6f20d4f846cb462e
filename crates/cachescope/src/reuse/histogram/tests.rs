use super::*;
use proptest::prelude::*;

#[test]
fn layout_bins_tile_the_line() {
    for e in [8, 9, 12, 20] {
        let l = Layout::new(e).unwrap();
        let mut next = 0;
        for i in 0..(l.exact_limit() as usize + 20 * 256) {
            let (start, len) = l.bin(i);
            assert_eq!(start, next, "bin {i} at e = {e}");
            assert_eq!(l.index(start), i);
            assert_eq!(l.index(start + len - 1), i);
            next = start + len;
        }
    }
    let l = Layout::new(8).unwrap();
    assert_eq!(l.index(u64::MAX), 256 + 56 * 256 - 1);
    assert_eq!(l.bin(l.index(u64::MAX)), (511 << 55, 1 << 55));
    assert!(Layout::new(7).is_err() && Layout::new(33).is_err());
}

#[test]
fn at_least_is_exact_at_bin_starts_and_bounded_inside() {
    let mut h = LogHistogram::new(Layout::new(8).unwrap());
    for d in [0, 5, 255, 256, 300, 511, 512, 513, 514, 1000] {
        h.record(d);
    }
    assert_eq!(h.at_least(256).low, 7);
    assert!(h.at_least(256).is_exact());
    // 512..1024 has bins of width 2: 512 is a boundary, 513 is not.
    assert_eq!((h.at_least(512).low, h.at_least(512).high), (4, 4));
    let a = h.at_least(513);
    assert_eq!((a.low, a.high, a.estimate), (2, 4, 3.0));
    assert_eq!(h.at_least(0).low, 10);
    assert_eq!(h.at_least(u64::MAX).high, 0);
}

#[test]
fn counts_carry_past_32_bits() {
    let mut h = LogHistogram::new(Layout::DEFAULT);
    h.record_n(3, u64::from(u32::MAX));
    h.record(3);
    h.record(3);
    h.record_n(1 << 40, 5 << 32);
    assert_eq!(h.bin_of(3).count, (1 << 32) + 1);
    assert_eq!(h.at_least(4).low, 5 << 32);
    assert_eq!(h.tail().at_least(0).low, h.total());
    let mut sum = h.clone();
    sum.merge(&h);
    assert_eq!(sum.bin_of(3).count, (1 << 33) + 2);
    assert_eq!(sum.total(), 2 * h.total());
    assert_eq!(sum.bins().map(|b| b.count).sum::<u64>(), sum.total());
}

proptest! {
    #[test]
    fn binned_distances_obey_the_error_bound(d in any::<u64>(), e in 8u32..=24) {
        let l = Layout::new(e).unwrap();
        let (start, len) = l.bin(l.index(d));
        prop_assert!(start <= d && d - start < len);
        if d < l.exact_limit() {
            prop_assert_eq!(len, 1);
        } else {
            // (d − start)/d < len/start ≤ 1/256.
            prop_assert!(len * BINS_PER_OCTAVE <= start);
        }
    }

    #[test]
    fn at_least_brackets_the_truth(
        ds in proptest::collection::vec(0u64..5000, 0..200),
        x in 0u64..6000,
    ) {
        let mut h = LogHistogram::new(Layout::new(8).unwrap());
        ds.iter().for_each(|&d| h.record(d));
        let truth = ds.iter().filter(|&&d| d >= x).count() as u64;
        let a = h.at_least(x);
        prop_assert!(a.low <= truth && truth <= a.high);
        prop_assert!(a.low as f64 <= a.estimate && a.estimate <= a.high as f64);
        if x <= 256 || h.bin_of(x).start == x {
            prop_assert!(a.is_exact());
        }
        let t = h.tail().at_least(x);
        prop_assert_eq!((t.low, t.high), (a.low, a.high));
        let bins: u64 = h.bins().map(|b| b.count).sum();
        prop_assert_eq!(bins, ds.len() as u64);
        prop_assert_eq!(h.total(), ds.len() as u64);
    }
}
