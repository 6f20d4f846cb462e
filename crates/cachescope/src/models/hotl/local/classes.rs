//! The measured distances by class, which replace the estimate of the reuses predicted like
//! them (`windows.rs` says why and how they are measured).
//!
//! Counts and sums are whole numbers: kept as integers they are what the f64 sums of before
//! held (exact below 2^53: at most `n · RING` for `n` references), so measures may be filed in
//! any order within a stretch, grouped by class, and the curves stay bit for bit.

use super::Predictions;
use super::bins::bin_of;
use super::model::sd_of;
use super::windows::MIN_MEASURED;

/// One class's measured distances, by bucket in increasing order.
#[derive(Clone, Debug, Default)]
pub(super) struct Measured {
    count: u64,
    buckets: Vec<Bucket>,
}

/// Measured distances of one bucket.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    key: u32,
    count: u64,
    sum: u64,
    /// `sd_of(sum / count)`, kept by `add`: a class is predicted far more often than it
    /// learns, and the mean's distance under `lines` is `min(sd, sd_of(lines))`.
    sd: u64,
}

impl Measured {
    /// Files `times` measures of distance `rd`.
    pub fn add(&mut self, rd: u64, times: u64) {
        self.count += times;
        let key = bucket(rd);
        let i = match self.buckets.binary_search_by_key(&key, |x| x.key) {
            Ok(i) => {
                self.buckets[i].count += times;
                self.buckets[i].sum += rd * times;
                i
            }
            Err(i) => {
                let b = Bucket {
                    key,
                    count: times,
                    sum: rd * times,
                    sd: 0,
                };
                self.buckets.insert(i, b);
                i
            }
        };
        let b = &mut self.buckets[i];
        b.sd = sd_of(b.sum as f64 / b.count as f64);
    }
}

/// Measured distances by class (reuse-time bin, bin of the estimate): per reuse-time bin
/// (below `bin_of(RING)`, the only ones measured), its classes sorted by estimate bin. A
/// bin's estimates are few, and an index and a binary search replace a SipHash per lookup,
/// which was a sixth of the pass.
#[derive(Clone, Debug, Default)]
pub(super) struct Corrections(Vec<Vec<(u32, Measured)>>);

/// Bucket of a measured distance: exact below 1024, then 256 per octave.
fn bucket(rd: u64) -> u32 {
    if rd < 1024 {
        return rd as u32;
    }
    let k = u64::from(63 - rd.leading_zeros());
    (1024 + (k - 10) * 256 + ((rd >> (k - 8)) - 256)) as u32
}

/// `x.round() as u64` for every f64, without the libm call the baseline x86-64 target makes
/// of `round`: below 2^52 the fraction `x − ⌊x⌋` is exact, and halves round up.
#[inline]
pub(super) fn round_u64(x: f64) -> u64 {
    if (0.0..(1u64 << 52) as f64).contains(&x) {
        let t = x as u64;
        t + u64::from(x - t as f64 >= 0.5)
    } else {
        x.round() as u64
    }
}

/// Estimate bin of a class.
#[inline]
fn estimate_bin(estimate: f64) -> u32 {
    bin_of(round_u64(estimate)) as u32
}

impl Corrections {
    /// The class of reuses of bin `bin` estimated at `estimate`, created empty if new.
    pub fn class(&mut self, bin: usize, estimate: f64) -> &mut Measured {
        if self.0.len() <= bin {
            self.0.resize_with(bin + 1, Vec::new);
        }
        let classes = &mut self.0[bin];
        let e = estimate_bin(estimate);
        let i = match classes.binary_search_by_key(&e, |c| c.0) {
            Ok(i) => i,
            Err(i) => {
                classes.insert(i, (e, Measured::default()));
                i
            }
        };
        &mut classes[i].1
    }

    /// Files the measured distance `rd` of a reuse of bin `bin` estimated at `estimate`.
    #[cfg(test)]
    pub fn learn(&mut self, bin: usize, estimate: f64, rd: u64) {
        self.class(bin, estimate).add(rd, 1);
    }

    /// Adds `count` reuses of bin `bin` estimated at `estimate` to `out`, spread as their
    /// class's measures if it has enough of them, else at the estimate; at most `lines`.
    pub fn predict(
        &self,
        bin: usize,
        estimate: f64,
        count: f64,
        lines: u64,
        out: &mut Predictions,
    ) {
        let measured = self.0.get(bin).and_then(|classes| {
            let e = estimate_bin(estimate);
            let i = classes.binary_search_by_key(&e, |c| c.0).ok()?;
            Some(&classes[i].1).filter(|m| m.count >= MIN_MEASURED)
        });
        let Some(m) = measured else {
            out.add(estimate, count, lines);
            return;
        };
        // `sd_of` is monotone: the distance of `min(mean, lines)` is the smaller distance.
        let top = sd_of(lines as f64);
        let total = m.count as f64;
        for b in &m.buckets {
            out.add_sd(b.sd.min(top), count * b.count as f64 / total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_exact_below_1024() {
        for rd in 0..1024 {
            assert_eq!(bucket(rd), rd as u32);
        }
        let mut last = bucket(1023);
        for rd in (1024..1 << 22).step_by(97) {
            let b = bucket(rd);
            assert!(b >= last, "{rd}");
            last = b;
        }
        // 256 per octave: a bucket is at most 1/256 of its values wide.
        assert_eq!(bucket(1024), 1024);
        assert_eq!(bucket(1028), 1025);
        assert_eq!(bucket(2048), 1024 + 256);
    }

    proptest::proptest! {
        #[test]
        fn round_u64_is_std_round(x in proptest::num::f64::ANY, w in 0u64..1 << 20) {
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
            // Halves and their neighbours, where rounding turns.
            for y in [w as f64 + 0.5, (w as f64 + 0.5).next_down(), (w as f64 + 0.5).next_up()] {
                proptest::prop_assert_eq!(round_u64(y), y.round() as u64);
            }
        }
    }

    #[test]
    fn a_class_with_enough_measures_takes_their_distribution() {
        let mut c = Corrections::default();
        for i in 0..10 {
            c.learn(70, 15.6, if i < 3 { 14 } else { 17 });
        }
        let mut out = Predictions::default();
        c.predict(70, 15.7, 10.0, 1000, &mut out);
        assert_eq!(out.iter().collect::<Vec<_>>(), [(13, 3.0), (16, 7.0)]);
        // Another class (estimate 30) keeps its estimate.
        let mut out = Predictions::default();
        c.predict(70, 30.0, 4.0, 1000, &mut out);
        assert_eq!(out.iter().collect::<Vec<_>>(), [(29, 4.0)]);
    }
}
