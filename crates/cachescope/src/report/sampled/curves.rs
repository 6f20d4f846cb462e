//! The simulated curves of a sampled report, each corrected by a control variate: the
//! simulations of the sampled lines (miniatures, OPT on the sample) err mostly where the
//! sample's own LRU errs (a few hot lines in or out decide both), so each is read as LRU's
//! reference curve plus the difference between the policy and LRU in the same sample:
//!
//! `policy(C) ≈ lru_ref(C) + (policy_sample(C) − lru_sample(C))`
//!
//! with the sample's LRU in the same caches (SHARDS in the whole sampled lines OPT ran in, an
//! LRU miniature beside random's, the LRU miniature for the set-associative policies) and the
//! reference LRU the best estimate the report has of it: StatStack's curve from the reuse
//! samples (fully associative; docs/accuracy/sampled.md compares it with SHARDS), and for the
//! set-associative caches that curve plus the conflict misses the sample's LRU miniature shows
//! over a fully associative LRU cache of as many lines fed the same lines ([`LruMinis`]), or
//! Smith's formula on StatStack's distances where the sample holds less than one of the
//! cache's sets.

use crate::Result;
use crate::method::OptSample;
use crate::models::l2::L1Histogram;
use crate::models::smith;
use crate::reuse::{Mrc, MrcPoint, ShardsDistances};
use crate::sampling::Profile;

use super::scale;
use super::warnings::MIN_SAMPLE_LINES;

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

/// The LRU miniatures of the set-associative policies' caches: set-associative, and fully
/// associative of as many lines fed the same lines (`MiniSim::with_fully_associative_lru`).
/// Their difference is the sample's conflict misses in those very caches; read against
/// SHARDS's point instead (the whole sample's lines, in `⌈R · C⌉` sampled lines) it also held
/// the difference between two samples, which at a working-set cliff is most of it.
pub(super) struct LruMinis {
    pub set_assoc: Mrc,
    pub fully: Mrc,
}

impl Reference<'_> {
    /// The reference set-associative LRU miss ratio at `size`: from the LRU miniatures where
    /// they ran, else from Smith's formula.
    pub(super) fn set_assoc(&self, lru: &LruMinis, size: u64) -> Option<f64> {
        let fa = (self.lru)(size)?;
        match (at(&lru.set_assoc, size), at(&lru.fully, size)) {
            (Some(sa), Some(fully)) => Some((fa + (sa - fully).max(0.0)).min(1.0)),
            _ => {
                smith::set_associative_mrc(self.smith, self.ways, &[size])
                    .ok()?
                    .points[0]
                    .miss_ratio
            }
        }
    }

    /// `sample` (a policy in fully associative miniatures) corrected by the fully associative
    /// LRU curves: the reference's, and `lru_mini`'s, LRU in the same miniatures of the same
    /// lines.
    pub(super) fn fully_associative(&self, mut sample: Mrc, lru_mini: &Mrc) -> Mrc {
        sample.points.retain_mut(|p| {
            let (Some(r), Some(l)) = ((self.lru)(p.size_bytes), at(lru_mini, p.size_bytes)) else {
                return false;
            };
            shift(p, r - l);
            true
        });
        sample
    }

    /// OPT from the sample corrected by the fully associative LRU curves, OPT's and LRU's
    /// sample in the same caches: the whole sampled lines around `C · R`, each read between
    /// them in the same proportion (SHARDS's point at `C` is the sample's LRU at `⌈C · R⌉`
    /// lines, a different cache from OPT's when `C · R` is not whole).
    pub(super) fn opt(&self, sample: &OptSample, sizes: &[u64]) -> Mrc {
        let line = self.shards.line_size;
        let mut curve = sample.template();
        curve.points = sizes
            .iter()
            .filter_map(|&size_bytes| {
                let lines = size_bytes / line;
                let lru = (self.lru)(size_bytes)?;
                let (lo, hi, t) = sample.between(lines)?;
                let (miss, warm) = sample.at(lines)?;
                let (a, b) = (
                    self.sample_in(lo, sample.rate),
                    self.sample_in(hi, sample.rate),
                );
                let mut p = MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some(miss),
                    miss_ratio_warm: warm,
                };
                shift(&mut p, lru - (a + t * (b - a)));
                Some(p)
            })
            .collect();
        curve
    }

    /// The sample's fully associative LRU miss ratio in a cache of `m` sampled lines: its
    /// reuses at sampled distances of `m` or more, scaled to lines as SHARDS bins them.
    fn sample_in(&self, m: u64, rate: f64) -> f64 {
        let lines = (m as f64 / rate) as u64;
        let misses = self.shards.at_least(lines) + self.shards.cold;
        (misses / self.shards.refs.max(1) as f64).min(1.0)
    }

    /// `sample` (a policy in the miniatures) corrected by the set-associative LRU curves.
    pub(super) fn set_associative(&self, mut sample: Mrc, lru: &LruMinis) -> Mrc {
        sample.points.retain_mut(|p| {
            let (Some(r), Some(l)) = (
                self.set_assoc(lru, p.size_bytes),
                at(&lru.set_assoc, p.size_bytes),
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
    pub(super) fn three_c(&self, lru: &LruMinis, sizes: &[u64]) -> Vec<ThreeCPoint> {
        let n = self.shards.refs as f64;
        let cold = self.shards.cold.round().min(n) as u64;
        sizes
            .iter()
            .filter_map(|&size| {
                let fa = (self.lru)(size)?;
                let sa = self.set_assoc(lru, size)?.max(fa);
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
pub fn shards_serves(lines: u64, rate: f64) -> bool {
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
    if past_l1(statstack, l1_lines) * scale >= L1_FAR_REUSES {
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
/// samples. Where the sample holds fewer than [`MIN_SAMPLE_LINES`] distinct lines and
/// StatStack has more reuse samples past the L1 than the sample has lines (both counted as
/// they are), StatStack's distances serve up to [`L1_FAR_SAMPLED_LINES`]: SHARDS's L1 misses
/// are then a few lines' reuses ([`few_lines_switch`]). The first references are
/// [`pooled_cold`]'s where there is a profile. `l1_lines` is the L1's size.
pub(super) fn l2_input(
    profile: Option<&Profile>,
    shards: &ShardsDistances,
    rate: f64,
    l1_lines: u64,
    reuse_rate: f64,
) -> Result<L1Histogram> {
    let Some(p) = profile.filter(|p| !p.samples().is_empty()) else {
        return scale::l1_histogram(shards);
    };
    let statstack = L1Histogram::from_profile(p)?;
    let scale = nominal_scale(p, reuse_rate);
    let few = few_lines_switch(&statstack, shards.cold * rate, l1_lines);
    let h = match few {
        Some(from) if p.reuses() >= L1_MIN_REUSES => {
            scale::combined_l1(&statstack, shards, |lines| holds_sampled(lines, rate, from))?
        }
        _ if p.reuses() as f64 * scale >= L1_MIN_REUSES as f64 => {
            let from = l1_switch(&statstack, l1_lines, scale);
            scale::combined_l1(&statstack, shards, |lines| holds_sampled(lines, rate, from))?
        }
        _ => scale::l1_histogram(shards)?,
    };
    // StatStack's first references in the histogram's units (its dangling samples, scaled as
    // `combined_l1` scales its masses), and the share of references its samples are.
    let n = statstack.refs.max(f64::MIN_POSITIVE);
    let ss_cold = statstack.cold * shards.refs as f64 / n;
    let reuse_share = n / shards.refs.max(1) as f64;
    let cold = pooled_cold(shards.cold, rate, ss_cold, reuse_share);
    let masses: Vec<(u64, u64, f64)> = h.masses.iter().map(|m| (m.sd, m.len, m.weight)).collect();
    L1Histogram::from_masses(h.line_size, cold, &masses)
}

/// StatStack's reuse samples (weights in `statstack`, as they are) at the L1's `l1_lines` or
/// further.
fn past_l1(statstack: &L1Histogram, l1_lines: u64) -> f64 {
    statstack
        .masses
        .iter()
        .filter(|m| m.sd >= l1_lines)
        .map(|m| m.weight)
        .sum()
}

/// Where the sample holds fewer than [`MIN_SAMPLE_LINES`] distinct lines (`lines`: the
/// report warns that SHARDS is then a handful of lines' behaviour), SHARDS's L1 misses rest
/// on at most that many lines' reuses; where StatStack's reuse samples past the L1 size
/// (`statstack`, counted as they are) outnumber them, its distances serve the L1 histogram up
/// to [`L1_FAR_SAMPLED_LINES`]. `None`: [`l1_switch`]'s rule. The floored whole-stream
/// sampler gives a short run tens of thousands of reuse samples: false_sharing's 36-41 past
/// the L1 against its 6-17 sampled lines (docs/accuracy/sampled.md, "Ji's L2 model").
pub(super) fn few_lines_switch(statstack: &L1Histogram, lines: f64, l1_lines: u64) -> Option<f64> {
    (lines < MIN_SAMPLE_LINES && past_l1(statstack, l1_lines) > lines)
        .then_some(L1_FAR_SAMPLED_LINES)
}

/// The first references of the L2 input from both samples: SHARDS's (`shards_cold`, its
/// sampled lines over the spatial rate `rate`) and StatStack's (`statstack_cold`, its dangling
/// samples, the lines' last references, over `reuse_share`, the share of the references its
/// samples are), each weighted by the inverse of its variance. Both count the same distinct
/// lines through a binomial sample (a line is in SHARDS's sample with probability `R`, its
/// last reference is a reuse sample with probability `r`), so each has the variance
/// `cold · (1 − p) / p` and the weight `p / (1 − p)`; at a rate of 1 the count is exact and
/// taken alone (SHARDS's first). A short run's floored reuse sampler (rate 2^−3 on
/// false_sharing) then counts its lines closer than SHARDS's few sampled lines; a long run's
/// first references stay mostly SHARDS's (rate 0.01 against 0.001).
pub(super) fn pooled_cold(
    shards_cold: f64,
    rate: f64,
    statstack_cold: f64,
    reuse_share: f64,
) -> f64 {
    if rate >= 1.0 {
        return shards_cold;
    }
    if reuse_share >= 1.0 {
        return statstack_cold;
    }
    let (ws, wd) = (rate / (1.0 - rate), reuse_share / (1.0 - reuse_share));
    if ws + wd <= 0.0 {
        return shards_cold;
    }
    (ws * shards_cold + wd * statstack_cold) / (ws + wd)
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

    /// The corrections' reference: `lru` over `shards`, 8 ways, Smith's distribution left
    /// empty (the corrections tested here do not read it; leaked, as a test's).
    fn reference<'a>(
        lru: &'a dyn Fn(u64) -> Option<f64>,
        shards: &'a ShardsDistances,
    ) -> Reference<'a> {
        let smith = Box::leak(Box::new(smith::Distances {
            method: "shards".into(),
            line_size: 64,
            refs: shards.refs,
            cold: None,
            masses: Vec::new(),
        }));
        Reference {
            lru,
            shards,
            smith,
            ways: 8,
        }
    }

    /// Every point of `curve` is `lru`'s at its size.
    fn assert_is_reference(curve: &Mrc, lru: &dyn Fn(u64) -> Option<f64>) {
        for p in &curve.points {
            let want = lru(p.size_bytes).unwrap();
            let got = p.miss_ratio.unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{} lines: {got} against {want}",
                p.lines
            );
        }
    }

    /// Where OPT and LRU agree in the sample (sweeps up and down over 300 lines, in which
    /// LRU keeps exactly the lines OPT keeps), the sampled OPT is the reference LRU curve at
    /// every size, whole number of sampled lines in the cache or not.
    #[test]
    fn opt_where_it_is_lru_in_the_sample_is_the_reference_lru() {
        use crate::analysis::Analysis;
        let lines = (0..12u64).flat_map(|k| {
            let up = 0..300u64;
            let v: Vec<u64> = if k % 2 == 0 {
                up.collect()
            } else {
                up.rev().collect()
            };
            v
        });
        let options = crate::reuse::Options::default();
        let mut shards = crate::reuse::ShardsAnalysis::new(options);
        let mut opt = crate::opt::OptAnalysis::new(options).unwrap();
        let mut refs = 0;
        crate::spatial::forget::testing::sampled_at(lines, 0.25, None, |b| {
            shards.observe(b);
            opt.observe(b);
            refs += b
                .sampling()
                .map_or(0, |s| s.span.iter().map(|t| t.data()).sum());
        });
        assert_eq!(refs, 3600);
        let shards = shards.finish();
        assert!(
            shards.sampled > 300 && shards.sampled < 1800,
            "{}",
            shards.sampled
        );
        let sizes: Vec<u64> = (3..=130u64).map(|l| l * 3 * 64).collect();
        let opt = OptSample::new(opt, &sizes, shards.rate, refs, 64).unwrap();
        let lru = |size: u64| Some(0.05 + size as f64 * 1e-6);
        let reference = reference(&lru, &shards);
        let curve = reference.opt(&opt, &sizes);
        assert_eq!(curve.points.len(), sizes.len());
        assert_is_reference(&curve, &lru);
    }

    /// Feeds `mini` and SHARDS the stream of `lines` sampled at `rate`: SHARDS's distances.
    fn feed(
        lines: impl Iterator<Item = u64> + Send + 'static,
        rate: f64,
        mini: &mut crate::mini::MiniSim,
    ) -> ShardsDistances {
        use crate::analysis::Analysis;
        let mut shards = crate::reuse::ShardsAnalysis::new(crate::reuse::Options::default());
        crate::spatial::forget::testing::sampled_at(lines, rate, None, |b| {
            shards.observe(b);
            mini.observe(b);
        });
        shards.finish()
    }

    /// In a miniature of one line random replacement is LRU, so the corrected random curve is
    /// the reference LRU curve there, whatever SHARDS reads at the size.
    #[test]
    fn random_in_a_one_line_miniature_is_the_reference_lru() {
        use crate::sim::Policy;
        let lines = crate::spatial::forget::testing::random_lines(20_000, 40);
        let options = crate::reuse::Options::default();
        // 4 and 5 lines at rate 0.25: miniatures of one line (1 and 1.25 lines).
        let sizes = [4 * 64, 5 * 64];
        let policies = [Policy::Random { seed: 1 }, Policy::Lru];
        let mut mini =
            crate::mini::MiniSim::of_sample(options, &policies, None, &sizes, 0.25, 1, 0.25)
                .unwrap();
        let shards = feed(lines, 0.25, &mut mini);
        let [random, lru_mini]: [Mrc; 2] = mini.finish_all().try_into().unwrap();
        let lru = |size: u64| Some(0.3 + size as f64 * 1e-5);
        let reference = reference(&lru, &shards);
        let curve = reference.fully_associative(random, &lru_mini);
        assert_eq!(curve.points.len(), 2);
        assert_is_reference(&curve, &lru);
    }

    /// A set-associative miniature of one set is fully associative, so it has no conflict
    /// misses over the fully associative LRU cache beside it and every policy's corrected
    /// curve is its difference from LRU on top of the reference LRU curve; LRU's is the
    /// reference itself, whatever SHARDS reads at the size (the whole sample's lines).
    #[test]
    fn set_associative_lru_in_one_set_miniatures_is_the_reference_lru() {
        use crate::sim::Policy;
        let lines = crate::spatial::forget::testing::random_lines(20_000, 200);
        let options = crate::reuse::Options::default();
        // 8 ways of 64-byte lines: caches of 2, 4 and 8 sets, one set each at rate 0.125.
        let sizes = [16 * 64, 32 * 64, 64 * 64];
        let policies = [Policy::Lru, Policy::Fifo];
        let mut mini =
            crate::mini::MiniSim::of_sample(options, &policies, Some(8), &sizes, 0.125, 1, 0.5)
                .and_then(crate::mini::MiniSim::with_fully_associative_lru)
                .unwrap();
        let shards = feed(lines, 0.5, &mut mini);
        let [lru_mini, fifo]: [Mrc; 2] = mini.finish_all().try_into().unwrap();
        let minis = LruMinis {
            set_assoc: lru_mini.clone(),
            fully: mini.finish_fully_associative().unwrap(),
        };
        let lru = |size: u64| Some(0.2 + size as f64 * 1e-5);
        let reference = reference(&lru, &shards);
        let curve = reference.set_associative(lru_mini.clone(), &minis);
        assert_eq!(curve.points.len(), 3);
        assert_is_reference(&curve, &lru);
        // FIFO: the reference plus FIFO's difference from LRU in the same miniature.
        let corrected = reference.set_associative(fifo.clone(), &minis);
        for ((c, f), l) in corrected
            .points
            .iter()
            .zip(&fifo.points)
            .zip(&lru_mini.points)
        {
            let want = lru(c.size_bytes).unwrap() + f.miss_ratio.unwrap() - l.miss_ratio.unwrap();
            assert!((c.miss_ratio.unwrap() - want.clamp(0.0, 1.0)).abs() < 1e-9);
        }
        // SHARDS's point is another cache's (the whole sample's lines, not the miniature's):
        // reading it instead would move the curve.
        assert!(sizes.iter().any(|&s| {
            (reference.sample_in(s / 64 / 2, 0.5) - at(&minis.fully, s).unwrap()).abs() > 1e-3
        }));
    }

    /// StatStack's histogram of `below` reuse samples at distance 100 and `past` at 600 (past
    /// an L1 of 512 lines), none cold.
    fn statstack(below: f64, past: f64) -> L1Histogram {
        L1Histogram::from_masses(64, 0.0, &[(100, 1, below), (600, 1, past)]).unwrap()
    }

    /// A profile of 1000 reuse samples, each at reuse distance `d` (StatStack's expected stack
    /// distance is then `d`), and `dangling` dangling samples, in 10^4 references.
    fn profile(d: u64, dangling: u64) -> Profile {
        use crate::sampling::{NextUse, Sample};
        let samples = (1..=1000 + dangling)
            .map(|position| Sample {
                position,
                next: if position <= 1000 {
                    NextUse::Reuse { distance: d }
                } else {
                    NextUse::Dangling {
                        age: 10_000 - position,
                    }
                },
            })
            .collect();
        Profile::new(crate::sampling::SamplerOptions::default(), 10_000, samples).unwrap()
    }

    /// SHARDS's distances (at rate 1) of a loop over 1000 lines, 20 times: 1000 first
    /// references, 19 000 reuses at 999.
    fn loop_20() -> ShardsDistances {
        use crate::analysis::Analysis;
        let batch: crate::batch::Batch = (0..20_000u64)
            .map(|i| crate::access::Access::load((i % 1000) * 64, 8))
            .collect();
        let mut shards = crate::reuse::ShardsAnalysis::new(crate::reuse::Options::default());
        shards.observe(&batch);
        shards.finish()
    }

    /// The distances of `h` with their weights rounded.
    fn masses(h: &L1Histogram) -> Vec<(u64, f64)> {
        h.masses.iter().map(|m| (m.sd, m.weight.round())).collect()
    }

    /// The pooled first references of `l2_input` on [`loop_20`] with `p`: SHARDS's 1000 and
    /// StatStack's dangling samples over the share of the 20 000 references sampled.
    fn cold_of(p: &Profile) -> f64 {
        let samples = p.samples().len() as f64;
        pooled_cold(
            1000.0,
            0.01,
            p.dangling() as f64 * 20_000.0 / samples,
            samples / 20_000.0,
        )
    }

    #[test]
    fn l2_input_keeps_statstack_further_out_where_it_sees_the_l1_misses() {
        let d = loop_20();
        // Read at rate 0.1: the loop's 1000 lines are 100 sampled lines, over MIN_SAMPLE_LINES.
        let got = |p: &Profile, reuse_rate: f64| l2_input(Some(p), &d, 0.1, 512, reuse_rate);
        // No sample past the L1: SHARDS's bin at 999 lines (99.9 sampled lines) is read, and
        // StatStack's masses below it (1000 samples for the 20 000 references).
        let p = profile(100, 50);
        let h = got(&p, p.rate()).unwrap();
        assert_eq!(masses(&h), [(100, 19_048.0), (999, 19_000.0)]);
        let cold = pooled_cold(1000.0, 0.1, 50.0 * 20_000.0 / 1050.0, 1050.0 / 20_000.0);
        assert!((h.cold - cold).abs() < 1e-9, "{} {cold}", h.cold);
        // 1000 samples past the L1: StatStack's distances up to 16 sampled lines (160 lines at
        // 0.1), SHARDS's bin from there.
        let p = profile(600, 50);
        assert_eq!(
            masses(&got(&p, p.rate()).unwrap()),
            [(600, 19_048.0), (999, 19_000.0)]
        );
        // The same samples from a floored sampler at 10 times the report's reuse rate count
        // as 100: too few, SHARDS's distances alone, the first references still pooled.
        let h = got(&p, p.rate() / 10.0).unwrap();
        assert_eq!(masses(&h), [(999, 19_000.0)]);
        assert!((h.cold - cold).abs() < 1e-9);
    }

    #[test]
    fn l2_input_takes_statstack_where_the_sample_holds_few_lines() {
        let d = loop_20();
        // At rate 0.01 the loop is 10 sampled lines (under MIN_SAMPLE_LINES): StatStack's 1000
        // samples past the L1 outnumber them, and its distances serve up to 16 sampled lines
        // (1600 lines), so SHARDS's bin at 999 lines is not read; counted as they are, also
        // from the floored sampler at 10 times the reuse rate.
        let p = profile(600, 50);
        for reuse_rate in [p.rate(), p.rate() / 10.0] {
            let h = l2_input(Some(&p), &d, 0.01, 512, reuse_rate).unwrap();
            assert_eq!(masses(&h), [(600, 19_048.0)]);
            assert!((h.cold - cold_of(&p)).abs() < 1e-9);
        }
        // No StatStack sample past the L1: SHARDS's reuses of its 10 lines serve from 4
        // sampled lines (400 lines), StatStack's below.
        let p = profile(100, 50);
        let h = l2_input(Some(&p), &d, 0.01, 512, p.rate()).unwrap();
        assert_eq!(masses(&h), [(100, 19_048.0), (999, 19_000.0)]);
        // Without a profile: SHARDS's distances and first references alone.
        let h = l2_input(None, &d, 0.01, 512, 0.001).unwrap();
        assert_eq!((masses(&h), h.cold), (vec![(999, 19_000.0)], 1000.0));
    }

    #[test]
    fn few_lines_switch_compares_samples_past_the_l1_with_the_sampled_lines() {
        // false_sharing's seed 1: 13 sampled lines, 41 StatStack samples past the L1.
        assert_eq!(
            few_lines_switch(&statstack(5000.0, 41.0), 13.0, 512),
            Some(L1_FAR_SAMPLED_LINES)
        );
        // As many samples as lines, or a sample of 64 lines or more: the usual rule.
        assert_eq!(few_lines_switch(&statstack(5000.0, 13.0), 13.0, 512), None);
        assert_eq!(few_lines_switch(&statstack(5000.0, 1e4), 64.0, 512), None);
        // The samples below the L1 do not count.
        assert_eq!(few_lines_switch(&statstack(5000.0, 41.0), 13.0, 601), None);
    }

    #[test]
    fn pooled_cold_weighs_each_count_by_its_rate() {
        // SHARDS at 0.01 (weight 1/99), StatStack's samples 1/8 of the references (weight
        // 1/7): (1300 · 7 + 1450 · 99) / (7 + 99).
        let got = pooled_cold(1300.0, 0.01, 1450.0, 0.125);
        assert!((got - 152_650.0 / 106.0).abs() < 1e-9, "{got}");
        // A rate of 1 is exact: SHARDS's at rate 1, StatStack's with every reference sampled.
        assert_eq!(pooled_cold(1300.0, 1.0, 1450.0, 0.125), 1300.0);
        assert_eq!(pooled_cold(1300.0, 0.01, 1450.0, 1.0), 1450.0);
        // Equal rates: the mean.
        assert!((pooled_cold(1300.0, 0.1, 1500.0, 0.1) - 1400.0).abs() < 1e-9);
        // No reuse sample: SHARDS's.
        assert_eq!(pooled_cold(1300.0, 0.01, 0.0, 0.0), 1300.0);
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
