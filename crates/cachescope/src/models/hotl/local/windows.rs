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
//! bounded by the classes, not by the trace (`classes.rs`).

/// Lines kept for measuring, and the longest reuse time measured (a power of two).
pub const RING: u64 = 1 << 14;

/// A reuse of time `rt` is measured with probability `SAMPLES / rt` (1 and 4 were close:
/// docs/accuracy/hotl.md).
pub const SAMPLES: u64 = 2;

/// Measures a class needs before they replace its estimate.
pub const MIN_MEASURED: u64 = 8;

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
        // The modulo (not a multiply-compare) keeps the draws, hence the curves, of before;
        // `rt ≤ per` is always drawn (its remainder is below `rt`), which spares the division
        // for most reuses (`per` is 2, and reuses of 1 and 2 are common).
        if rt > self.per && self.rng % rt >= self.per {
            return None;
        }
        Some(self.live(j + 1, now))
    }

    /// Positions `lo..=hi` (fewer than [`RING`]) still holding their line's latest reference.
    #[inline]
    fn live(&self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo & (RING - 1)) as usize, (hi & (RING - 1)) as usize);
        if a <= b {
            self.count(a, b)
        } else {
            self.count(a, RING as usize - 1) + self.count(0, b)
        }
    }

    /// Set bits of slots `a..=b`, `a ≤ b`.
    #[inline]
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
