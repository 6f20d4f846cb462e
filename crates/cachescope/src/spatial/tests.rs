use super::*;
use proptest::prelude::*;

/// The first outputs of Vigna's reference `splitmix64.c` seeded with 1234567 (its `next()` adds
/// the gamma, then mixes) are `mix` of the seed plus k gammas: the hash is SplitMix64's, bit
/// for bit, as the Valgrind tool's C computes it.
#[test]
fn mix_is_splitmix64() {
    let gamma = 0x9e37_79b9_7f4a_7c15u64;
    let seed = 1_234_567u64;
    let outputs: Vec<u64> = (0..3u64)
        .map(|k| mix(seed.wrapping_add(k.wrapping_mul(gamma))))
        .collect();
    assert_eq!(
        outputs,
        [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423
        ]
    );
}

#[test]
fn limits_and_rates() {
    assert_eq!(Limit::from_rate(1.0).unwrap(), Limit::ALL);
    assert_eq!(Limit::from_rate(0.5).unwrap(), Limit((1 << 63) - 1));
    assert_eq!(Limit::from_rate(0.25).unwrap(), Limit((1 << 62) - 1));
    assert_eq!(Limit::from_rate(1e-30).unwrap(), Limit(0));
    assert_eq!(Limit::ALL.rate(), 1.0);
    assert!((Limit::from_rate(0.01).unwrap().rate() - 0.01).abs() < 1e-15);
    for bad in [0.0, -0.1, 1.5, f64::NAN] {
        assert!(Limit::from_rate(bad).is_err(), "{bad}");
    }
    assert!(
        SpatialOptions {
            max_lines: Some(0),
            ..SpatialOptions::default()
        }
        .validate()
        .is_err()
    );
}

/// What a fixed-rate filter keeps, by brute force.
fn kept_fixed(lines: &[u64], seed: u64, rate: f64) -> Vec<bool> {
    let limit = Limit::from_rate(rate).unwrap();
    let key = mix(seed);
    lines.iter().map(|&l| mix(l ^ key) <= limit.0).collect()
}

/// What a fixed-size filter keeps, by brute force: a reference is kept when its line is among
/// the `max` smallest hashes of the lines seen so far under the starting limit.
fn kept_bounded(lines: &[u64], seed: u64, rate: f64, max: usize) -> Vec<bool> {
    let limit = Limit::from_rate(rate).unwrap();
    let key = mix(seed);
    let mut seen: Vec<u64> = Vec::new();
    lines
        .iter()
        .map(|&l| {
            let h = mix(l ^ key);
            if h > limit.0 {
                return false;
            }
            if !seen.contains(&h) {
                seen.push(h);
            }
            let mut sorted = seen.clone();
            sorted.sort_unstable();
            sorted[..max.min(sorted.len())].contains(&h)
        })
        .collect()
}

fn run(lines: &[u64], options: SpatialOptions) -> (Vec<bool>, SpatialFilter) {
    let mut f = SpatialFilter::new(&options).unwrap();
    let kept = lines.iter().map(|&l| f.keep(l)).collect();
    (kept, f)
}

proptest! {
    #[test]
    fn fixed_rate_is_the_hash_test(
        lines in proptest::collection::vec(0u64..500, 0..400),
        seed in 0u64..5,
        rate in 0.01f64..1.0,
    ) {
        let options = SpatialOptions { rate, seed, max_lines: None, ..SpatialOptions::default() };
        let (kept, f) = run(&lines, options);
        prop_assert_eq!(kept, kept_fixed(&lines, seed, rate));
        prop_assert_eq!(f.limit(), Limit::from_rate(rate).unwrap());
    }

    #[test]
    fn fixed_size_keeps_the_smallest_hashes(
        lines in proptest::collection::vec(0u64..300, 0..400),
        seed in 0u64..5,
        rate in 0.2f64..1.0,
        max in 1u64..40,
    ) {
        let options = SpatialOptions { rate, seed, max_lines: Some(max), ..SpatialOptions::default() };
        let (kept, f) = run(&lines, options);
        prop_assert_eq!(&kept, &kept_bounded(&lines, seed, rate, max as usize));
        // The sample is the `max` smallest hashes seen, and the limit lies just below the
        // next one.
        let key = mix(seed);
        let start = Limit::from_rate(rate).unwrap();
        let mut hashes: Vec<u64> = lines.iter().map(|&l| mix(l ^ key)).filter(|&h| h <= start.0).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let in_sample = hashes.len().min(max as usize);
        prop_assert_eq!(f.sampled_lines(), Some(in_sample));
        match hashes.get(max as usize) {
            Some(&next) => prop_assert_eq!(f.limit(), Limit(next - 1)),
            None => prop_assert_eq!(f.limit(), start),
        }
    }

    /// A smaller rate keeps a subset; so does a smaller sample, at every reference.
    #[test]
    fn nested_limits_nest(
        lines in proptest::collection::vec(0u64..1000, 0..400),
        seed in 0u64..5,
        rates in (0.01f64..1.0, 0.01f64..1.0),
        maxes in (1u64..50, 1u64..50),
    ) {
        let (lo, hi) = (rates.0.min(rates.1), rates.0.max(rates.1));
        let fixed = |rate| run(&lines, SpatialOptions { rate, seed, max_lines: None, ..SpatialOptions::default() }).0;
        for (a, b) in fixed(lo).iter().zip(fixed(hi)) {
            prop_assert!(!a || b);
        }
        let (small, large) = (maxes.0.min(maxes.1), maxes.0.max(maxes.1));
        let bounded = |max| run(&lines, SpatialOptions { rate: hi, seed, max_lines: Some(max), ..SpatialOptions::default() }).0;
        for (a, b) in bounded(small).iter().zip(bounded(large)) {
            prop_assert!(!a || b);
        }
    }
}

/// A producer that lowers its limit late sends a superset; the filter applied again to what
/// it sent keeps what the filter keeps on the full stream.
#[test]
fn refiltering_a_superset_agrees() {
    let lines: Vec<u64> = (0..20_000u64).map(|i| (i * 7919) % 3000).collect();
    let options = SpatialOptions {
        rate: 0.5,
        seed: 3,
        max_lines: Some(100),
        ..SpatialOptions::default()
    };
    let (kept, _) = run(&lines, options);
    // The late producer: a sample three times the size.
    let (sent, _) = run(
        &lines,
        SpatialOptions {
            max_lines: Some(300),
            ..options
        },
    );
    let mut again = SpatialFilter::new(&options).unwrap();
    for (i, &l) in lines.iter().enumerate() {
        if sent[i] {
            assert_eq!(again.keep(l), kept[i], "reference {i}");
        } else {
            assert!(!kept[i], "reference {i} kept but not sent");
        }
    }
}

/// The fixed-size filter before its memo ([`Bound`](super::filter)'s set probed for every
/// hash): what the memoised filter must admit, reference by reference.
struct Plain {
    max: usize,
    members: std::collections::HashSet<u64>,
    heap: std::collections::BinaryHeap<u64>,
    limit: Limit,
}

impl Plain {
    fn keep_hashed(&mut self, h: u64) -> bool {
        if !self.limit.admits(h) {
            return false;
        }
        if self.members.contains(&h) {
            return true;
        }
        if self.members.len() < self.max {
            self.members.insert(h);
            self.heap.push(h);
            return true;
        }
        let top = *self.heap.peek().unwrap();
        if h > top {
            self.limit = Limit(h - 1);
            return false;
        }
        self.heap.pop();
        self.members.remove(&top);
        self.members.insert(h);
        self.heap.push(h);
        self.limit = Limit(top - 1);
        true
    }
}

proptest! {
    /// Hashes crowded into a few memo slots (the low 12 bits, `filter.rs`'s `MEMO_BITS`) and
    /// a small sample: members evicted from a slot's memo, refilled, and hashes sharing a slot
    /// with a member; the memoised filter keeps what the plain one does and lowers its limit
    /// alike.
    #[test]
    fn the_memo_admits_what_the_set_does(
        draws in proptest::collection::vec((0u64..4, 0u64..64), 0..2000),
        max in 1u64..24,
    ) {
        let options = SpatialOptions { rate: 1.0, max_lines: Some(max), ..SpatialOptions::default() };
        let mut memoised = SpatialFilter::new(&options).unwrap();
        let mut plain = Plain {
            max: max as usize,
            members: Default::default(),
            heap: Default::default(),
            limit: Limit::ALL,
        };
        for (i, &(slot, high)) in draws.iter().enumerate() {
            // Slots 0..4 and their neighbours' empty values (`!slot`'s low bits) never meet.
            let h = (high << 12) | slot;
            prop_assert_eq!(memoised.keep_hashed(h), plain.keep_hashed(h), "draw {}", i);
            prop_assert_eq!(memoised.limit(), plain.limit, "draw {}", i);
        }
        prop_assert_eq!(memoised.sampled_lines(), Some(plain.members.len()));
    }
}

/// The memo on a real hash's references: a long stream over many lines, whose members often
/// leave, kept as the plain filter keeps it.
#[test]
fn the_memo_agrees_on_a_long_stream() {
    let options = SpatialOptions {
        rate: 0.2,
        seed: 7,
        max_lines: Some(5000),
        ..SpatialOptions::default()
    };
    let mut memoised = SpatialFilter::new(&options).unwrap();
    let mut plain = Plain {
        max: 5000,
        members: Default::default(),
        heap: Default::default(),
        limit: Limit::from_rate(0.2).unwrap(),
    };
    let hash = options.hash();
    let mut x = 1u64;
    let mut kept = 0;
    for i in 0..400_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly a hot set, sometimes anywhere in a million lines.
        let line = if x % 4 == 0 {
            x % 1_000_000
        } else {
            x % 20_000
        };
        let h = hash.of(line);
        let k = memoised.keep_hashed(h);
        assert_eq!(k, plain.keep_hashed(h), "reference {i}");
        kept += u64::from(k);
    }
    assert_eq!(memoised.limit(), plain.limit);
    assert!(kept > 10_000, "{kept} kept");
    assert!(memoised.limit() < Limit::from_rate(0.2).unwrap());
}
