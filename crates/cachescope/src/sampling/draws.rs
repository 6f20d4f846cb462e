//! Where StatCache's samples fall: [`Gaps`], the seeded geometric gaps between sampled
//! positions (at a fixed rate, or decaying as a thread's references grow), and
//! [`SampleCursor`], a position in their sequence.

use rand::Rng;
use rand_pcg::Pcg64;

use super::SamplerOptions;

/// Geometric gaps between sampled positions: each reference is sampled with probability `rate`,
/// independently, so the gap `G ≥ 1` has `P(G = g) = (1 − rate)^(g−1)·rate`.
#[derive(Clone, Debug)]
pub(crate) struct Gaps {
    rng: Pcg64,
    /// ln(1 − rate) (−∞ at rate 1).
    ln_keep: f64,
    /// The decaying draw ([`Gaps::decaying`]): its cap of expected samples, else 0.
    decay: u64,
    /// The floored draw ([`Gaps::floored`]): the rate under the decaying rule, else 0.
    floor_rate: f64,
}

impl Gaps {
    /// The gap sequence of `rate` (in (0, 1]) and `seed`.
    pub fn new(rate: f64, seed: u64) -> Gaps {
        Gaps {
            // A fixed stream: the seed alone picks the sequence.
            rng: crate::rng::seeded_complement(seed, 0x5a4d_504c_4552),
            ln_keep: (-rate).ln_1p(),
            decay: 0,
            floor_rate: 0.0,
        }
    }

    /// The draw of the sampled report's whole-stream sampler (`Sampler::floored`): a position
    /// `j` drawn with probability `max(rate, 2^−D(j))`, `D(j)` the decaying draw's level of `j`
    /// with `cap` ([`Gaps::decaying`]): a short run sampled as densely as a thread's, a long
    /// one at `rate` past `cap / rate` references or so. One seeded sequence, as the others.
    pub fn floored(rate: f64, seed: u64, cap: u64) -> Gaps {
        Gaps {
            decay: cap.max(1),
            floor_rate: rate,
            ..Gaps::new(rate, seed)
        }
    }

    /// The decaying draw of a per-thread sampler (`Sampler::decaying`): a position `j` is
    /// drawn with probability `2^−L(j)`, `L(j)` the least `L` with `j ≤ cap · 2^L` (the
    /// thinning level of `j` references at rate 1, `Thinning::level`), independently. A gap
    /// that would cross the end of its level is drawn again from there at the next level's
    /// rate (geometric gaps forget their past), so the draws stay one seeded sequence.
    pub fn decaying(seed: u64, cap: u64) -> Gaps {
        Gaps {
            decay: cap.max(1),
            ..Gaps::new(1.0, seed)
        }
    }

    /// The next drawn position after `pos`.
    #[inline]
    pub fn next_after(&mut self, mut pos: u64) -> u64 {
        if self.decay == 0 {
            return pos.saturating_add(self.next_gap());
        }
        loop {
            let level = super::thinning::decay_level(self.decay, pos.saturating_add(1));
            let end = self.decay.saturating_mul(1 << level);
            let rate = 1.0 / (1u64 << level) as f64;
            if rate <= self.floor_rate {
                // Past the decaying rule: the fixed rate to the end.
                self.decay = 0;
                self.ln_keep = (-self.floor_rate).ln_1p();
                return pos.saturating_add(self.next_gap());
            }
            self.ln_keep = (-rate).ln_1p();
            let next = pos.saturating_add(self.next_gap());
            if next <= end || end == u64::MAX {
                return next;
            }
            pos = end;
        }
    }

    /// The next gap, by inversion: `G = 1 + ⌊ln U / ln(1 − rate)⌋` with `U` uniform in (0, 1]
    /// (53 bits from one `next_u64`). Saturates at `u64::MAX` for tiny rates.
    #[inline]
    pub fn next_gap(&mut self) -> u64 {
        let u = ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        // At rate 1 this is ln U / −∞ = ±0, so every gap is 1.
        let g = (u.ln() / self.ln_keep).floor();
        (g as u64).saturating_add(1)
    }
}

/// Where the sample selector stands: the next position to sample, and the generator of the gaps
/// after it. Chunked sampling (`crate::parallel::sample_chunks`) moves one cursor along the chunks'
/// first positions, one draw per sample, so each chunk samples exactly the positions a
/// sequential pass samples.
#[derive(Clone, Debug)]
pub(crate) struct SampleCursor {
    pub(super) gaps: Gaps,
    /// The next position to sample (1-based, counted references).
    pub(super) next: u64,
}

impl SampleCursor {
    /// The cursor before the first reference.
    pub fn new(options: &SamplerOptions) -> SampleCursor {
        let mut gaps = Gaps::new(options.rate, options.seed);
        let next = gaps.next_after(0);
        SampleCursor { gaps, next }
    }

    /// The cursor of `Sampler::floored`'s draws with `options`' rate and seed and `cap`.
    pub fn floored(options: &SamplerOptions, cap: u64) -> SampleCursor {
        let mut gaps = Gaps::floored(options.rate, options.seed, cap);
        let next = gaps.next_after(0);
        SampleCursor { gaps, next }
    }

    /// The cursor of `Sampler::decaying`'s draws with `seed` and `cap`.
    pub fn decaying(seed: u64, cap: u64) -> SampleCursor {
        let mut gaps = Gaps::decaying(seed, cap);
        let next = gaps.next_after(0);
        SampleCursor { gaps, next }
    }

    /// The next position to sample.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Draws gaps until the next sampled position is after `pos`.
    pub fn skip_to(&mut self, pos: u64) {
        while self.next <= pos {
            self.next = self.gaps.next_after(self.next);
        }
    }
}
