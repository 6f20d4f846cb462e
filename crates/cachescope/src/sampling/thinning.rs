//! [`Thinning`]: the fixed-size bound on StatCache's samples, whatever the trace's length.
//!
//! At a fixed rate the samples grow with the references (10^−3 of 43 G is 43 M samples, a
//! gigabyte with their watchpoints and histograms). Past [`MAX_SAMPLES`] expected samples the
//! sampler keeps a drawn position `j` only while a hash of `j` stays under a threshold that
//! halves each time the expected count passes the cap again (level `L`: the top `L` bits of
//! the hash are zero). The levels nest (a position kept at `L + 1` is kept at `L`), so the
//! samples kept at the end are exactly the drawn positions that pass the final level,
//! whichever level each one was admitted at: a uniform sample of the whole run at rate
//! `rate · 2^−L`, the same for the in-process sampler and the one rebuilt from the Valgrind
//! tool's records. The level is a function of the references counted (`rate · n / 2^L ≤
//! cap`), not of the samples' outcomes, so a seed still gives one profile.

use crate::rng::splitmix64;

/// Expected samples kept at most, by default: 2^20 (about 25 MB with their histograms). At
/// the default rate 10^−3 of `report` no trace under 10^9 counted references is thinned.
pub const MAX_SAMPLES: u64 = 1 << 20;

/// The decaying rule's cap under the sampled report's whole-stream sampler
/// (`Sampler::floored`): the per-thread samplers' [`super::THREAD_SAMPLES`], so a short run's
/// whole-stream curve rests on as many samples as one thread's.
pub const REPORT_FLOOR: u64 = super::THREAD_SAMPLES;

/// Which drawn positions a sampler keeps; see the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Thinning {
    /// Mixed into every position's hash (from the seed, so seeds thin differently).
    key: u64,
    /// Expected samples kept at most; `u64::MAX`: never thinned.
    cap: u64,
    /// The draws decay (`Sampler::decaying`): a position drawn at level `L(j)` is kept at
    /// level `L` while `L − L(j)` bits of its hash are zero, so every position is kept with
    /// probability `2^−L` in the end, as at a fixed rate.
    decaying: bool,
    /// The floored draws of the sampled report's whole-stream sampler (`Sampler::floored`):
    /// the decaying rule's cap, else 0, and the sampler's rate.
    floor: u64,
    rate: f64,
}

impl Thinning {
    /// Thinning to `cap` expected samples for the sampler seeded with `seed`.
    pub fn new(seed: u64, cap: u64) -> Thinning {
        Thinning {
            key: splitmix64(seed ^ 0x7468_696e_6e69_6e67),
            cap: cap.max(1),
            decaying: false,
            floor: 0,
            rate: 0.0,
        }
    }

    /// The thinning of a floored sampler's draws (`Gaps::floored`): a position `j` drawn with
    /// probability `p(j) = max(rate, 2^−D(j))`, `D(j)` the decaying level of `j` with `floor`,
    /// is kept after `n` references while its hash, uniform in [0, 1), is below `q(n) / p(j)`,
    /// `q(n) = max(rate · 2^−L(n), 2^−D(n))` (`L(n)` the level of the `cap` bound): every
    /// position is kept with probability `q(n)` in the end, `q` never grows, so the kept sets
    /// nest. The level packs `D(n)` and `L(n)` (`D · 64 + L`), so it grows with `n`.
    pub fn floored(seed: u64, cap: u64, floor: u64, rate: f64) -> Thinning {
        Thinning {
            floor: floor.max(1),
            rate,
            ..Thinning::new(seed, cap)
        }
    }

    /// The thinning of a decaying sampler's draws (rate 1 up to `cap` references, then
    /// halving per level; `Gaps::decaying`).
    pub fn decaying(seed: u64, cap: u64) -> Thinning {
        Thinning {
            decaying: true,
            ..Thinning::new(seed, cap)
        }
    }

    /// No thinning at all.
    pub fn never() -> Thinning {
        Thinning {
            key: 0,
            cap: u64::MAX,
            decaying: false,
            floor: 0,
            rate: 0.0,
        }
    }

    /// The level after `refs` counted references sampled at `rate`: the least `L` with
    /// `rate · refs / 2^L ≤ cap`.
    pub fn level(&self, rate: f64, refs: u64) -> u32 {
        if self.floor != 0 {
            let plain = Thinning { floor: 0, ..*self };
            return decay_level(self.floor, refs) * 64 + plain.level(rate, refs);
        }
        if self.cap == u64::MAX {
            return 0;
        }
        let (expected, cap) = (rate * refs as f64, self.cap as f64);
        let mut l = 0;
        while l < 63 && expected > cap * (1u64 << l) as f64 {
            l += 1;
        }
        l
    }

    /// Whether the sample drawn at `position` is kept at `level`.
    #[inline]
    pub fn keeps(&self, position: u64, level: u32) -> bool {
        self.keeper(position)(level)
    }

    /// Whether the sample drawn at `position` is kept, by level: [`Thinning::keeps`] with
    /// the position's part computed once ([`Drops`] asks it at several levels).
    #[inline]
    pub fn keeper(&self, position: u64) -> impl Fn(u32) -> bool + '_ {
        let hash = splitmix64(position ^ self.key);
        // A floored sampler's: the draw's rate and the hash in [0, 1).
        let (drawn, u, drawn_at) = if self.floor != 0 {
            let drawn = self.rate.max(half_power(decay_level(self.floor, position)));
            (drawn, (hash >> 11) as f64 * (1.0 / (1u64 << 53) as f64), 0)
        } else if self.decaying {
            (0.0, 0.0, self.level(1.0, position))
        } else {
            (0.0, 0.0, 0)
        };
        move |level| {
            if self.floor != 0 {
                return u < self.kept_rate(self.rate, level) / drawn;
            }
            let bits = level.saturating_sub(drawn_at);
            bits == 0 || hash >> (64 - bits) == 0
        }
    }

    /// The rate of the samples kept at `level` out of those drawn at `rate`.
    pub fn rate(rate: f64, level: u32) -> f64 {
        rate / (1u64 << level) as f64
    }

    /// The rate of the samples this thinning keeps at `level` out of those drawn at `rate`
    /// ([`Thinning::rate`], or a floored sampler's `q`).
    pub fn kept_rate(&self, rate: f64, level: u32) -> f64 {
        if self.floor == 0 {
            return Thinning::rate(rate, level);
        }
        Thinning::rate(rate, level % 64).max(half_power(level / 64))
    }
}

/// Where a thinning drops each sample: its levels rise at a few positions (tens over a
/// 64-bit count), and a sample drawn at `j` is kept at the level of position `i` for every `i`
/// up to some point and never after (the levels grow with `i` and nest). So the Valgrind tool
/// can be told with each position the first reuse position at which that sample is no longer
/// kept (`record/tool_sampled.rs`'s positions pipe) and skip what cachescope would discard.
#[derive(Clone, Debug)]
pub(crate) struct Drops {
    thin: Thinning,
    /// `(position, level there)` of each position whose level exceeds the one before it,
    /// and the level at position 1.
    rises: Vec<(u64, u32)>,
    first: u32,
}

impl Drops {
    /// The drops of `thin` for samples drawn at `rate`.
    pub fn new(thin: Thinning, rate: f64) -> Drops {
        let level = |i| thin.level(rate, i);
        let (mut rises, mut at, first) = (Vec::new(), 1u64, level(1));
        let mut now = first;
        // Each rise by bisection between the last one (at its level) and the end (above it).
        while level(u64::MAX) > now {
            let (mut lo, mut hi) = (at, u64::MAX);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if level(mid) > now { hi = mid } else { lo = mid }
            }
            (at, now) = (hi, level(hi));
            rises.push((at, now));
        }
        Drops { thin, rises, first }
    }

    /// Whether the sample drawn at `j` is kept at `j`'s own level.
    pub fn kept_when_drawn(&self, j: u64) -> bool {
        self.thin.keeper(j)(self.level(j).1)
    }

    /// The index of the first rise after `i`, and the level at `i`.
    fn level(&self, i: u64) -> (usize, u32) {
        let k = self.rises.partition_point(|&(r, _)| r <= i);
        (k, k.checked_sub(1).map_or(self.first, |k| self.rises[k].1))
    }

    /// The first position `i > j` at whose level the sample drawn at `j` is not kept
    /// (`thin.keeps(j, thin.level(rate, i))` false); `u64::MAX`: none.
    pub fn first_dropped(&self, j: u64) -> u64 {
        let (keeps, after) = (self.thin.keeper(j), j.saturating_add(1));
        let (next, now) = self.level(after);
        if !keeps(now) {
            return after;
        }
        // Past `j + 1` the level changes only at the rises, and stays kept then not.
        let later = &self.rises[next..];
        let kept = later.partition_point(|&(_, l)| keeps(l));
        later.get(kept).map_or(u64::MAX, |&(r, _)| r)
    }
}

/// The decaying level of `refs` references with `cap`: the least `L` with `refs ≤ cap · 2^L`.
pub(crate) fn decay_level(cap: u64, refs: u64) -> u32 {
    let mut level = 0u32;
    while level < 63 && refs > cap.saturating_mul(1 << level) {
        level += 1;
    }
    level
}

/// `2^−level`.
fn half_power(level: u32) -> f64 {
    1.0 / (1u64 << level.min(63)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_is_the_least_that_brings_the_expected_count_under_the_cap() {
        let t = Thinning::new(1, 1000);
        assert_eq!(t.level(1e-3, 1_000_000), 0);
        assert_eq!(t.level(1e-3, 1_000_001), 1);
        assert_eq!(t.level(1e-3, 2_000_000), 1);
        assert_eq!(t.level(1e-3, 2_000_001), 2);
        // 2^64 / 1000 is just over 2^54.
        assert_eq!(t.level(1.0, u64::MAX), 55);
        assert_eq!(Thinning::never().level(1.0, u64::MAX), 0);
    }

    #[test]
    fn levels_nest_and_halve_the_samples() {
        let t = Thinning::new(7, 10);
        let kept = |l| (1..=100_000u64).filter(|&j| t.keeps(j, l)).count();
        assert_eq!(kept(0), 100_000);
        for l in 1..6 {
            let expected = 100_000.0 / f64::from(1u32 << l);
            let k = kept(l) as f64;
            assert!(
                (k - expected).abs() < 5.0 * expected.sqrt(),
                "{k} at level {l}"
            );
            assert!((1..=100_000u64).all(|j| !t.keeps(j, l) || t.keeps(j, l - 1)));
        }
        assert_ne!(
            (1..64u64).map(|j| t.keeps(j, 1)).collect::<Vec<_>>(),
            (1..64u64)
                .map(|j| Thinning::new(8, 10).keeps(j, 1))
                .collect::<Vec<_>>(),
            "seeds thin differently"
        );
    }
}
