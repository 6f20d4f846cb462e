//! The reuse-window correction: the distances of a sample of short reuses, measured, replace
//! the estimate of the reuses predicted like them.
//!
//! ## Why
//! The estimate `G_s(rt)` is the footprint of the *average* window of `rt` references in the
//! stretch; a reuse's own window can hold more or fewer lines ([`super::super::ReuseWindowAnalysis`]
//! measures the gap), and at a cliff a bin of reuses predicted on one side of a cache size
//! while its windows lie on the other costs the whole bin: `gzip` 2.51 pp at 12 KiB, `sort`
//! 1.81 pp at 16 lines (docs/accuracy/hotl.md). A spread around the mean (a variance from the
//! same histograms), finer or coarser stretches, or a scale per reuse-time bin did not close
//! it; measuring some reuse windows did.
//!
//! ## How
//! A bitset over the last [`RING`] positions marks those still holding their line's latest
//! reference; a reuse of time `rt < RING` is measured with probability [`SAMPLES`]`/rt`:
//! `rd` = the marked positions of its window, a popcount of `rt / 64` words, so well under
//! one word per reuse. When the reuse's stretch settles, the measured `rd` is filed under its
//! class: (reuse-time bin, bin of the rounded estimate `G_s`). Keying by the estimate keeps
//! classes of one phase apart from another's (`hash`, `phases`: one global class per
//! reuse-time bin moved their worst points by 1-16 pp). Each later bin of reuses of a class with
//! at least [`MIN_MEASURED`] measures takes their distribution instead of its estimate; the
//! others, and every reuse of time ≥ [`RING`], keep the estimate. Memory: the ring, and per
//! class a histogram of measured distances (exact below 1024, then 256 bins per octave),
//! bounded by the classes, not by the trace.

use super::Predictions;
use super::bins::bin_of;
use super::model::sd_of;

/// Lines kept for measuring, and the longest reuse time measured (a power of two).
pub const RING: u64 = 1 << 14;

/// A reuse of time `rt` is measured with probability `SAMPLES / rt` (1 and 4 were close:
/// docs/accuracy/hotl.md).
pub const SAMPLES: u64 = 2;

/// Measures a class needs before they replace its estimate.
pub const MIN_MEASURED: f64 = 8.0;

/// Which of the last [`RING`] positions still hold the latest reference of their line, and the
/// sampling stream.
///
/// A reuse's distance is the count of such positions in its window, so measuring is a
/// popcount over a flat bitset (`rt / 64` words), with no line-table probe.
#[derive(Clone, Debug)]
pub(super) struct Sampler {
    latest: Vec<u64>,
    per: u64,
    rng: u64,
}

/// Words of the bitset.
const WORDS: usize = (RING / 64) as usize;

impl Sampler {
    /// Measures `per / rt` of the reuses (0: none; `per ≤ RING`).
    pub fn new(per: u64) -> Sampler {
        debug_assert!(per <= RING);
        Sampler {
            latest: if per > 0 { vec![0; WORDS] } else { Vec::new() },
            per,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Notes that position `now` references a line last referenced at `prev`, and returns
    /// that reuse's distance (`sd + 1`) if it is sampled.
    #[inline]
    pub fn access(&mut self, now: u64, prev: Option<u64>) -> Option<u64> {
        if self.per == 0 {
            return None;
        }
        let slot = (now & (RING - 1)) as usize;
        self.latest[slot / 64] |= 1 << (slot % 64);
        let j = prev?;
        let rt = now - j;
        if rt >= RING {
            return None;
        }
        // `j` is in the ring (rt < RING) and no longer its line's latest.
        let old = (j & (RING - 1)) as usize;
        self.latest[old / 64] &= !(1 << (old % 64));
        // xorshift64: a fixed stream, so the curve is the same on every run.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        // The modulo (not a multiply-compare) keeps the draws, hence the curves, of before.
        if self.rng % rt >= self.per {
            return None;
        }
        Some(self.live(j + 1, now))
    }

    /// Positions `lo..=hi` (fewer than [`RING`]) still holding their line's latest reference.
    fn live(&self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo & (RING - 1)) as usize, (hi & (RING - 1)) as usize);
        if a <= b {
            self.count(a, b)
        } else {
            self.count(a, RING as usize - 1) + self.count(0, b)
        }
    }

    /// Set bits of slots `a..=b`, `a ≤ b`.
    fn count(&self, a: usize, b: usize) -> u64 {
        let (wa, wb) = (a / 64, b / 64);
        let low = !0u64 << (a % 64);
        let high = !0u64 >> (63 - b % 64);
        if wa == wb {
            return u64::from((self.latest[wa] & low & high).count_ones());
        }
        let middle: u32 = self.latest[wa + 1..wb].iter().map(|w| w.count_ones()).sum();
        u64::from((self.latest[wa] & low).count_ones())
            + u64::from(middle)
            + u64::from((self.latest[wb] & high).count_ones())
    }
}

/// One class's measured distances, by bucket in increasing order.
#[derive(Clone, Debug, Default)]
struct Measured {
    count: f64,
    buckets: Vec<Bucket>,
}

/// Measured distances of one bucket.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    key: u32,
    count: f64,
    sum: f64,
    /// `sd_of(sum / count)`, kept by `learn`: a class is predicted far more often than it
    /// learns, and the mean's distance under `lines` is `min(sd, sd_of(lines))`.
    sd: u64,
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
    /// Files the measured distance `rd` of a reuse of bin `bin` estimated at `estimate`.
    pub fn learn(&mut self, bin: usize, estimate: f64, rd: u64) {
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
        let m = &mut classes[i].1;
        m.count += 1.0;
        let key = bucket(rd);
        let i = match m.buckets.binary_search_by_key(&key, |x| x.key) {
            Ok(i) => {
                m.buckets[i].count += 1.0;
                m.buckets[i].sum += rd as f64;
                i
            }
            Err(i) => {
                let b = Bucket {
                    key,
                    count: 1.0,
                    sum: rd as f64,
                    sd: 0,
                };
                m.buckets.insert(i, b);
                i
            }
        };
        let b = &mut m.buckets[i];
        b.sd = sd_of(b.sum / b.count);
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
        for b in &m.buckets {
            out.add_sd(b.sd.min(top), count * b.count / m.count);
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
