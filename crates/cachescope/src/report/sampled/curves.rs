//! The simulated curves of a sampled report, each corrected by a control variate: the
//! simulations of the sampled lines (miniatures, OPT on the sample) err mostly where the
//! sample's own LRU errs (a few hot lines in or out decide both), so each is read as LRU's
//! reference curve plus the difference between the policy and LRU in the same sample:
//!
//! `policy(C) ≈ lru_ref(C) + (policy_sample(C) − lru_sample(C))`
//!
//! with the sample's LRU in the same geometry (SHARDS for fully associative caches, the LRU
//! miniature for set-associative ones) and the reference LRU the best estimate the report has
//! of it: StatStack's curve from the reuse samples (fully associative; docs/accuracy/sampled.md
//! compares it with SHARDS), and for the set-associative caches that curve plus the conflict
//! misses the sample's miniature shows over SHARDS, or Smith's formula on StatStack's
//! distances where the sample holds less than one of the cache's sets.

use crate::Result;
use crate::models::l2::L1Histogram;
use crate::models::smith;
use crate::reuse::{Mrc, MrcPoint, ShardsDistances};
use crate::sampling::Profile;

use super::scale;

use super::super::model::ThreeCPoint;

/// The miss ratio (cold included) of `curve` at `size`, if it has that size.
pub(super) fn at(curve: &Mrc, size: u64) -> Option<f64> {
    curve
        .points
        .iter()
        .find(|p| p.size_bytes == size)
        .and_then(|p| p.miss_ratio)
}

/// What the corrections read: the fully associative LRU curves, reference and sampled, at
/// every size they are asked for.
pub(super) struct Reference<'a> {
    /// The best fully associative LRU curve: StatStack's, or SHARDS's without a profile.
    pub lru: &'a dyn Fn(u64) -> Option<f64>,
    /// SHARDS's distances of the sample.
    pub shards: &'a ShardsDistances,
    /// StatStack's (or SHARDS's) distances as Smith's distribution.
    pub smith: &'a smith::Distances,
    pub ways: u32,
}

impl Reference<'_> {
    /// The sample's own fully associative LRU miss ratio at `size`.
    fn sample_fa(&self, size: u64) -> f64 {
        let lines = size / self.shards.line_size;
        ((self.shards.at_least(lines) + self.shards.cold) / self.shards.refs.max(1) as f64).min(1.0)
    }

    /// The reference set-associative LRU miss ratio at `size`: from the LRU miniature where
    /// it ran, else from Smith's formula.
    pub(super) fn set_assoc(&self, lru_mini: &Mrc, size: u64) -> Option<f64> {
        let fa = (self.lru)(size)?;
        match at(lru_mini, size) {
            Some(sa) => Some((fa + (sa - self.sample_fa(size)).max(0.0)).min(1.0)),
            None => {
                smith::set_associative_mrc(self.smith, self.ways, &[size])
                    .ok()?
                    .points[0]
                    .miss_ratio
            }
        }
    }

    /// `sample` (a curve of the sampled lines in fully associative caches) corrected by the
    /// fully associative LRU curves.
    pub(super) fn fully_associative(&self, mut sample: Mrc) -> Mrc {
        sample.points.retain_mut(|p| {
            let Some(lru) = (self.lru)(p.size_bytes) else {
                return false;
            };
            shift(p, lru - self.sample_fa(p.size_bytes));
            true
        });
        sample
    }

    /// `sample` (a policy in the miniatures) corrected by the set-associative LRU curves.
    pub(super) fn set_associative(&self, mut sample: Mrc, lru_mini: &Mrc) -> Mrc {
        sample.points.retain_mut(|p| {
            let (Some(r), Some(l)) = (
                self.set_assoc(lru_mini, p.size_bytes),
                at(lru_mini, p.size_bytes),
            ) else {
                return false;
            };
            shift(p, r - l);
            true
        });
        sample
    }

    /// The 3C breakdown at `sizes`: cold misses the distinct lines, capacity misses those of
    /// the reference fully associative LRU cache beyond them, conflict misses what the
    /// set-associative reference adds; counts over the full stream's references.
    pub(super) fn three_c(&self, lru_mini: &Mrc, sizes: &[u64]) -> Vec<ThreeCPoint> {
        let n = self.shards.refs as f64;
        let cold = self.shards.cold.round().min(n) as u64;
        sizes
            .iter()
            .filter_map(|&size| {
                let fa = (self.lru)(size)?;
                let sa = self.set_assoc(lru_mini, size)?.max(fa);
                let smith = smith::set_associative_mrc(self.smith, self.ways, &[size])
                    .ok()?
                    .points[0]
                    .miss_ratio
                    .unwrap_or(f64::NAN);
                let misses = ((sa * n).round() as u64).max(cold);
                let capacity = ((fa * n).round() as u64).clamp(cold, misses) - cold;
                Some(ThreeCPoint {
                    size_bytes: size,
                    refs: self.shards.refs,
                    misses,
                    cold,
                    capacity,
                    conflict: misses - cold - capacity,
                    smith_miss_ratio: smith,
                })
            })
            .collect()
    }
}

/// Adds `d` to both ratios of `p`, kept in [0, 1].
fn shift(p: &mut MrcPoint, d: f64) {
    p.miss_ratio = p.miss_ratio.map(|r| (r + d).clamp(0.0, 1.0));
    p.miss_ratio_warm = (p.miss_ratio_warm + d).clamp(0.0, 1.0);
}

/// Below this many sampled lines in the cache (`rate · lines`), SHARDS's point is not read:
/// the few sampled lines that fit decide it (docs/accuracy/sampled.md measures the error by
/// sampled lines, `scripts/sampled-accuracy.sh#lines`, and the switch's place over seeds 1-3,
/// `#switch`), and StatStack's point is taken.
pub const MIN_SAMPLED_LINES: f64 = 256.0;

/// StatStack serves the `combined` curve below [`MIN_SAMPLED_LINES`] from this many reuse
/// samples: a short program's few hundred samples move its curve in steps of up to 1 %,
/// still closer than SHARDS's handful of lines there (`#switch` measures 1000 and
/// this floor; the warning of [`super::warnings::MIN_REUSES`] still says how few they are).
pub const MIN_REUSES_COMBINED: u64 = 100;

/// True when SHARDS serves a cache of `lines` at `rate`: every line sampled (SHARDS is then
/// the exact curve), or at least [`MIN_SAMPLED_LINES`] of them.
pub(super) fn shards_serves(lines: u64, rate: f64) -> bool {
    holds_sampled(lines, rate, MIN_SAMPLED_LINES)
}

/// True when a cache of `lines` at `rate` holds every line sampled or at least `min` sampled
/// lines: the test of where SHARDS takes over, with the curve's or the L1 histogram's `min`.
fn holds_sampled(lines: u64, rate: f64, min: f64) -> bool {
    rate >= 1.0 || lines as f64 * rate >= min
}

/// The L2 model's L1 histogram takes SHARDS's distances from this many sampled lines (about
/// the L1's 512 lines at rate 0.01), StatStack's below: the model reads the L1 misses, and
/// SHARDS sees every reuse of a sampled line where the reuse samples (one reference in 1000)
/// hold few or none of a program's rare L1 misses (awk: none on three seeds). Closest on
/// average over seven programs and seeds 1-3 among 4, 16, 64 (the switch before) and 256
/// sampled lines, StatStack alone and SHARDS alone; not on xz, whose many reuse samples past
/// the L1 read better (docs/accuracy/sampled.md, "Ji's L2 model"): [`L1_FAR_SAMPLED_LINES`].
pub(super) const L1_MIN_SAMPLED_LINES: f64 = 4.0;

/// Reuse samples StatStack needs to feed the L2 model's L1 histogram.
pub(super) const L1_MIN_REUSES: u64 = 1000;

/// Where at least [`L1_FAR_REUSES`] of StatStack's reuse samples lie past the L1 size, its
/// distances serve the L1 histogram up to this many sampled lines: the L1 misses are then
/// common enough to be sampled, and SHARDS's distances from a few sampled lines put too much
/// weight just under the L1 (xz: 3.03 M in the 256-511 octave against 1.64 M).
pub(super) const L1_FAR_SAMPLED_LINES: f64 = 16.0;

/// StatStack's reuse samples past the L1 size behind [`L1_FAR_SAMPLED_LINES`].
pub(super) const L1_FAR_REUSES: f64 = 1000.0;

/// The sampled lines from which SHARDS's distances feed the L1 histogram: [`L1_FAR_SAMPLED_LINES`]
/// where at least [`L1_FAR_REUSES`] of StatStack's reuse samples (`statstack`, weights in
/// samples, counted at `scale` each: [`nominal_scale`]) lie at the L1's `l1_lines` or
/// further, [`L1_MIN_SAMPLED_LINES`] otherwise.
pub(super) fn l1_switch(statstack: &L1Histogram, l1_lines: u64, scale: f64) -> f64 {
    let past: f64 = statstack
        .masses
        .iter()
        .filter(|m| m.sd >= l1_lines)
        .map(|m| m.weight)
        .sum();
    if past * scale >= L1_FAR_REUSES {
        L1_FAR_SAMPLED_LINES
    } else {
        L1_MIN_SAMPLED_LINES
    }
}

/// What one of `profile`'s reuse samples counts for in the L2 input's thresholds
/// ([`L1_MIN_REUSES`], [`L1_FAR_REUSES`], set at the report's reuse rate `reuse_rate`): 1 at
/// that rate, less where the whole-stream sampler's floor (`Sampler::floored`) sampled a short
/// run more densely. The thresholds say how common the L1 misses are in the run, so the floor
/// leaves the input's choice as the rate alone made it (the threads example's `ji-l2` read
/// 20 pp off with StatStack's denser distances fed in, 0.07 without,
/// `cachescope report --sampled --rate 0.01 --seed S threads.cst`, S = 1, 2, 3).
pub(super) fn nominal_scale(profile: &Profile, reuse_rate: f64) -> f64 {
    (reuse_rate / profile.rate()).min(1.0)
}

/// The L2 model's input: StatStack's distances below the switch of [`l1_switch`] (with at
/// least [`L1_MIN_REUSES`] reuse samples, counted by [`nominal_scale`] with `reuse_rate`),
/// SHARDS's from there ([`scale::combined_l1`]); SHARDS's alone without enough reuse
/// samples. `l1_lines` is the L1's size.
pub(super) fn l2_input(
    profile: Option<&Profile>,
    shards: &ShardsDistances,
    rate: f64,
    l1_lines: u64,
    reuse_rate: f64,
) -> Result<L1Histogram> {
    let scale = profile.map_or(1.0, |p| nominal_scale(p, reuse_rate));
    match profile {
        Some(p) if p.reuses() as f64 * scale >= L1_MIN_REUSES as f64 => {
            let statstack = L1Histogram::from_profile(p)?;
            let from = l1_switch(&statstack, l1_lines, scale);
            scale::combined_l1(&statstack, shards, |lines| holds_sampled(lines, rate, from))
        }
        _ => scale::l1_histogram(shards),
    }
}

/// The report's LRU curve (`combined`): StatStack's points where SHARDS does not serve a cache
/// ([`shards_serves`]), SHARDS's from there; and the first size served by SHARDS (`None`:
/// StatStack everywhere). SHARDS's curve, method `combined`, without StatStack (a profile of
/// too few reuse samples).
pub(super) fn combined(shards: &Mrc, statstack: Option<&Mrc>, rate: f64) -> (Mrc, Option<u64>) {
    let Some(statstack) = statstack else {
        let curve = Mrc {
            method: "combined".into(),
            ..shards.clone()
        };
        return (curve, shards.points.first().map(|p| p.size_bytes));
    };
    let points: Vec<MrcPoint> = shards
        .points
        .iter()
        .filter_map(|p| {
            if shards_serves(p.lines, rate) {
                return Some(*p);
            }
            statstack
                .points
                .iter()
                .find(|q| q.size_bytes == p.size_bytes && q.miss_ratio.is_some())
                .copied()
        })
        .collect();
    let switch = shards
        .points
        .iter()
        .find(|p| shards_serves(p.lines, rate))
        .map(|p| p.size_bytes);
    let curve = Mrc {
        method: "combined".into(),
        points,
        ..shards.clone()
    };
    (curve, switch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// StatStack's histogram of `below` reuse samples at distance 100 and `past` at 600 (past
    /// an L1 of 512 lines), none cold.
    fn statstack(below: f64, past: f64) -> L1Histogram {
        L1Histogram::from_masses(64, 0.0, &[(100, 1, below), (600, 1, past)]).unwrap()
    }

    /// A profile of 1000 reuse samples, each at reuse distance `d` (StatStack's expected stack
    /// distance is then `d`), in 10^4 references.
    fn profile(d: u64) -> Profile {
        let samples = (1..=1000)
            .map(|position| crate::sampling::Sample {
                position,
                next: crate::sampling::NextUse::Reuse { distance: d },
            })
            .collect();
        Profile::new(crate::sampling::SamplerOptions::default(), 10_000, samples).unwrap()
    }

    /// SHARDS's distances (at rate 1) of a loop over 1000 lines, twice: 1000 reuses at 999.
    fn loop_twice() -> ShardsDistances {
        use crate::analysis::Analysis;
        let batch: crate::batch::Batch = (0..2000u64)
            .map(|i| crate::access::Access::load((i % 1000) * 64, 8))
            .collect();
        let mut shards = crate::reuse::ShardsAnalysis::new(crate::reuse::Options::default());
        shards.observe(&batch);
        shards.finish()
    }

    #[test]
    fn l2_input_keeps_statstack_further_out_where_it_sees_the_l1_misses() {
        let d = loop_twice();
        let got = |p: &Profile| -> Vec<(u64, f64)> {
            let h = l2_input(Some(p), &d, 0.01, 512, p.rate()).unwrap();
            assert_eq!(h.cold, 1000.0);
            h.masses.iter().map(|m| (m.sd, m.weight)).collect()
        };
        // No sample past the L1: SHARDS's bin at 999 lines (9.99 sampled lines at 0.01) is read.
        assert_eq!(got(&profile(100)), [(100, 2000.0), (999, 1000.0)]);
        // 1000 samples past the L1: StatStack's distances up to 1600 lines, SHARDS's bin not.
        assert_eq!(got(&profile(600)), [(600, 2000.0)]);
        // The same samples from a floored sampler at 10 times the report's reuse rate count
        // as 100: too few, SHARDS's distances alone (both bins, the loop's 1000 reuses).
        let p = profile(600);
        let h = l2_input(Some(&p), &d, 0.01, 512, p.rate() / 10.0).unwrap();
        let shards_alone = l2_input(None, &d, 0.01, 512, p.rate()).unwrap();
        assert_eq!(h, shards_alone);
        assert_ne!(h, l2_input(Some(&p), &d, 0.01, 512, p.rate()).unwrap());
    }

    #[test]
    fn l1_switch_moves_out_where_the_l1_misses_are_sampled() {
        // 999 reuse samples past the L1: SHARDS from 4 sampled lines; 1000: from 16.
        assert_eq!(
            l1_switch(&statstack(5000.0, 999.0), 512, 1.0),
            L1_MIN_SAMPLED_LINES
        );
        assert_eq!(
            l1_switch(&statstack(5000.0, 1000.0), 512, 1.0),
            L1_FAR_SAMPLED_LINES
        );
        // The same samples read against a larger L1 are not past it.
        assert_eq!(
            l1_switch(&statstack(0.0, 5000.0), 601, 1.0),
            L1_MIN_SAMPLED_LINES
        );
        // A mass starting exactly at the L1 size is past it (a miss in an L1 of that size).
        assert_eq!(
            l1_switch(&statstack(0.0, 1000.0), 600, 1.0),
            L1_FAR_SAMPLED_LINES
        );
        // 16 000 samples past the L1 at 16 times the report's reuse rate count as 1000; 15 984
        // as 999.
        assert_eq!(
            l1_switch(&statstack(5000.0, 16_000.0), 512, 1.0 / 16.0),
            L1_FAR_SAMPLED_LINES
        );
        assert_eq!(
            l1_switch(&statstack(5000.0, 15_984.0), 512, 1.0 / 16.0),
            L1_MIN_SAMPLED_LINES
        );
    }
}
