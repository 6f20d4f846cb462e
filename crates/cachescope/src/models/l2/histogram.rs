//! The model's input: an L1 stack-distance histogram, exact from a trace or estimated from a
//! sampled profile (StatStack).

use crate::error::{Error, Result};
use crate::models::statstack;
use crate::reuse::StackDistances;
use crate::sampling::Profile;

/// Stack distances `sd .. sd + len − 1` with `weight` references.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Mass {
    /// Smallest stack distance.
    pub sd: u64,
    /// Distances covered (1 for one exact distance); the weight is spread evenly over them.
    pub len: u64,
    /// References (or samples standing for them).
    pub weight: f64,
}

/// An L1 stack-distance distribution: the model's input.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct L1Histogram {
    /// Line size in bytes.
    pub line_size: u64,
    /// References described: `cold + Σ weight`.
    pub refs: f64,
    /// First references (cold misses), in the same unit as the weights.
    pub cold: f64,
    /// Reuses by increasing, non-overlapping stack distance ranges.
    pub masses: Vec<Mass>,
}

impl L1Histogram {
    /// The exact histogram of [`crate::reuse::StackDistanceAnalysis`]: one mass per bin.
    pub fn from_stack_distances(sd: &StackDistances) -> L1Histogram {
        let masses: Vec<Mass> = sd
            .histogram
            .bins()
            .map(|b| Mass {
                sd: b.start,
                len: b.len,
                weight: b.count as f64,
            })
            .collect();
        L1Histogram {
            line_size: sd.line_size,
            refs: sd.refs as f64,
            cold: sd.cold as f64,
            masses,
        }
    }

    /// The StatStack distribution of a sampled profile: each reuse sample at its expected
    /// stack distance ([`statstack::expected_stack_distances`]) rounded up (StatStack predicts
    /// a miss at `C` lines iff `E[sd] ≥ C`, which is `⌈E[sd]⌉ ≥ C`), each dangling sample a
    /// cold reference; weights in samples. Errors when the profile has no sample.
    pub fn from_profile(profile: &Profile) -> Result<L1Histogram> {
        profile.expect_samples()?;
        let dangling = profile.dangling() as f64;
        let e = statstack::expected_stack_distances(&profile.histogram(), dangling);
        Ok(L1Histogram::of_samples(profile, e))
    }

    /// [`L1Histogram::from_profile`] with the distances of the time-local StatStack curve
    /// ([`statstack::local_distances`]): each reuse's expected distance over its own stretch
    /// of the run, or its exact one where the sampler measured its window; the sampled
    /// report's input, whose LRU curve reads the same distances (a working-set cliff the
    /// whole-run estimate smooths stays sharp). Errors when the profile has no sample.
    pub fn from_local_profile(profile: &Profile) -> Result<L1Histogram> {
        let e = statstack::local_distances(profile, &statstack::Segmentation::default())?;
        Ok(L1Histogram::of_samples(profile, e))
    }

    /// The histogram of reuse samples at distances `e` (any order), the profile's dangling
    /// samples its first references.
    fn of_samples(profile: &Profile, e: Vec<(f64, f64)>) -> L1Histogram {
        let dangling = profile.dangling() as f64;
        let mut e: Vec<(u64, f64)> = e.into_iter().map(|(sd, w)| (sd.ceil() as u64, w)).collect();
        e.sort_unstable_by_key(|&(sd, _)| sd);
        let mut masses: Vec<Mass> = Vec::new();
        for (sd, w) in e {
            match masses.last_mut() {
                Some(m) if m.sd == sd => m.weight += w,
                _ => masses.push(Mass {
                    sd,
                    len: 1,
                    weight: w,
                }),
            }
        }
        let reuses: f64 = masses.iter().map(|m| m.weight).sum();
        L1Histogram {
            line_size: profile.line_size().bytes(),
            refs: reuses + dangling,
            cold: dangling,
            masses,
        }
    }

    /// A histogram from `(sd, len, weight)` triples (any order, non-overlapping, `len ≥ 1`,
    /// weights finite and ≥ 0) and a cold count. Errors otherwise, or on a line size that is
    /// not a power of two.
    pub fn from_masses(
        line_size: u64,
        cold: f64,
        masses: &[(u64, u64, f64)],
    ) -> Result<L1Histogram> {
        crate::access::LineSize::new(line_size)?;
        let bad = |message: String| Error::InvalidParameter {
            name: "L1 histogram",
            message,
        };
        if !(cold.is_finite() && cold >= 0.0) {
            return Err(bad(format!("cold count {cold} is not a finite number ≥ 0")));
        }
        let mut m: Vec<Mass> = masses
            .iter()
            .map(|&(sd, len, weight)| Mass { sd, len, weight })
            .collect();
        m.sort_unstable_by_key(|x| x.sd);
        for (i, x) in m.iter().enumerate() {
            if x.len == 0 || !(x.weight.is_finite() && x.weight >= 0.0) {
                return Err(bad(format!(
                    "mass at {} of length {} and weight {} (need length ≥ 1, weight ≥ 0)",
                    x.sd, x.len, x.weight
                )));
            }
            if i > 0 && m[i - 1].sd + m[i - 1].len > x.sd {
                return Err(bad(format!("masses overlap at distance {}", x.sd)));
            }
        }
        let reuses: f64 = m.iter().map(|x| x.weight).sum();
        Ok(L1Histogram {
            line_size,
            refs: cold + reuses,
            cold,
            masses: m,
        })
    }

    /// Reuses (references that are not first references).
    pub fn reuses(&self) -> f64 {
        self.refs - self.cold
    }
}
