use super::*;
use proptest::prelude::*;

fn brute(xs: &[u64], w: u64) -> (u128, u64) {
    let s = xs.iter().map(|&x| u128::from(x.saturating_sub(w))).sum();
    (s, xs.iter().filter(|&&x| x >= w).count() as u64)
}

#[test]
fn binned_bounds_tile_the_binned_region() {
    let l = Layout::new(8).unwrap();
    let mut next = 256;
    for b in 0..(20 * 256) {
        let (s, e) = binned_bounds(l, b);
        assert_eq!(s, next);
        assert_eq!(binned_index(l, s), b);
        assert_eq!(binned_index(l, e), b);
        next = e + 1;
    }
}

proptest! {
    #[test]
    fn excess_is_exact_on_boundaries_and_listed_and_bracketed_elsewhere(
        xs in proptest::collection::vec(1u64..20_000, 0..300),
        ws in proptest::collection::vec(0u64..25_000, 1..8),
        listed in proptest::collection::vec(0u64..25_000, 0..4),
    ) {
        let layout = Layout::new(8).unwrap();
        let mut s = WindowSums::new(layout, &listed);
        xs.iter().for_each(|&x| s.record(x));
        let t = Tails::new(&[&s]);
        for &w in ws.iter().chain(&listed) {
            let e = t.excess(w);
            let (want, at_least) = brute(&xs, w);
            let want = want as f64;
            prop_assert!(e.low <= want + 1e-6 && want <= e.high + 1e-6,
                "w {} low {} want {} high {}", w, e.low, want, e.high);
            let (lo, hi) = bin_range(layout, w);
            if lo == w || listed.contains(&w) {
                prop_assert_eq!(e.low, e.high);
                prop_assert_eq!(e.low, want);
            }
            let mut halves = [
                WindowSums::new(layout, &listed),
                WindowSums::new(layout, &listed),
            ];
            xs.iter().enumerate().for_each(|(i, &x)| halves[i % 2].record(x));
            let split = Tails::new(&[&halves[0], &halves[1]]);
            prop_assert_eq!(split.excess(w), e);
            prop_assert_eq!(split.count_at_least(w), t.count_at_least(w));
            let c = t.count_at_least(w);
            if lo == w {
                prop_assert_eq!(c, at_least as f64);
            } else {
                let (a, b) = (brute(&xs, hi + 1).1, brute(&xs, lo).1);
                prop_assert!(a as f64 <= c && c <= b as f64);
            }
        }
    }
}
