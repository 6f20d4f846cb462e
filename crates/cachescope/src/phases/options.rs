//! [`PhaseOptions`]: what a phase analysis computes, with documented defaults and validation;
//! [`Method`], [`IntervalUnit`] and [`KChoice`].

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::sim::{Cache, Geometry, Policy};

fn invalid(name: &'static str, message: String) -> Error {
    Error::InvalidParameter { name, message }
}

/// A phase-classification method: a per-interval signature and what of it is clustered
/// (§5.1 of Zwick et al. says, for each method, whether the vector or its magnitude).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// Setvectors (§3), clustered on their Euclidean magnitude, as §5.1 does (on a log scale,
    /// [`log_scale`](super::signature::log_scale)).
    Setvector,
    /// Setvectors clustered as vectors (one dimension per set): not in the paper, for contrast.
    SetvectorVector,
    /// Activity vectors (§2.2, accesses per super-set), clustered as vectors (§5.1 a).
    Activity,
    /// Activity vectors clustered on their magnitude (§5.1 b).
    ActivityMagnitude,
    /// Stack reuse-distance histograms (§2.3), clustered as vectors.
    ReuseDistance,
    /// Weighted Haar-wavelet coefficients of the 16×16 address-histogram matrix (§2.1).
    Wavelet,
    /// The top-left Haar coefficient alone (§5.1 "haar wav.\[0\]\[0\]"), proportional to the
    /// matrix's mean.
    WaveletDc,
    /// The column space of U in the SVD `M = U Σ Vᵀ` of the same matrix (§2.1, §5.1).
    WaveletSvd,
}

impl Method {
    /// Every method, in report order.
    pub const ALL: [Method; 8] = [
        Method::Setvector,
        Method::SetvectorVector,
        Method::Activity,
        Method::ActivityMagnitude,
        Method::ReuseDistance,
        Method::Wavelet,
        Method::WaveletDc,
        Method::WaveletSvd,
    ];

    /// Short, stable, kebab-case name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::Setvector => "setvector",
            Method::SetvectorVector => "setvector-vector",
            Method::Activity => "activity",
            Method::ActivityMagnitude => "activity-magnitude",
            Method::ReuseDistance => "reuse-distance",
            Method::Wavelet => "wavelet",
            Method::WaveletDc => "wavelet-dc",
            Method::WaveletSvd => "wavelet-svd",
        }
    }

    /// The method called `name`, if any.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Parses a comma-separated list of method names, or `all`. Errors name the valid methods.
    pub fn parse_list(text: &str) -> Result<Vec<Method>> {
        if text.trim() == "all" {
            return Ok(Method::ALL.to_vec());
        }
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim) {
            let m = Method::from_name(part).ok_or_else(|| {
                let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
                invalid(
                    "phase method",
                    format!("{part:?} is not one of {}, or all", names.join(", ")),
                )
            })?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// True when the method clusters a scalar (a magnitude or one coefficient).
    pub fn is_scalar(self) -> bool {
        matches!(
            self,
            Method::Setvector | Method::ActivityMagnitude | Method::WaveletDc
        )
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Method> {
        match Method::parse_list(s)?.as_slice() {
            [m] => Ok(*m),
            _ => Err(invalid(
                "phase method",
                format!("{s:?} names more than one method"),
            )),
        }
    }
}

/// What an interval's length counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalUnit {
    /// Instruction fetches when the trace has them, data references otherwise: decided on the
    /// first non-empty batch (instructions if it holds any fetch). The default.
    #[default]
    Auto,
    /// Instruction fetches (`I` entries); data references belong to the interval of the
    /// instruction before them.
    Instructions,
    /// Data references (loads, stores, modifies).
    DataRefs,
}

impl IntervalUnit {
    /// `auto`, `instructions` or `data-refs`.
    pub fn name(self) -> &'static str {
        match self {
            IntervalUnit::Auto => "auto",
            IntervalUnit::Instructions => "instructions",
            IntervalUnit::DataRefs => "data-refs",
        }
    }
}

/// The number of phases: given, or chosen per method from a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KChoice {
    /// Exactly this many clusters (fewer when there are fewer distinct signatures).
    Fixed(usize),
    /// Every k from `min` to `max`; each method keeps the smallest k whose BIC reaches 90 % of
    /// the range between the worst and the best BIC (SimPoint's rule; see `kmeans`).
    Sweep {
        /// Smallest k tried.
        min: usize,
        /// Largest k tried.
        max: usize,
    },
}

/// Largest k accepted.
pub const MAX_K: usize = 64;

impl KChoice {
    /// Parses `4` (fixed) or `2..8` / `2-8` (a sweep, both ends included).
    pub fn parse(text: &str) -> Result<KChoice> {
        let bad = || {
            invalid(
                "k",
                format!("{text:?}: expected a number of phases like 4, or a range like 2..8"),
            )
        };
        let t = text.trim();
        let k = if let Some((a, b)) = t.split_once("..").or_else(|| t.split_once('-')) {
            let min = a.trim().parse().map_err(|_| bad())?;
            let max = b
                .trim()
                .trim_start_matches('=')
                .parse()
                .map_err(|_| bad())?;
            KChoice::Sweep { min, max }
        } else {
            KChoice::Fixed(t.parse().map_err(|_| bad())?)
        };
        k.validate()?;
        Ok(k)
    }

    /// The values of k to try, in increasing order.
    pub fn range(self) -> std::ops::RangeInclusive<usize> {
        match self {
            KChoice::Fixed(k) => k..=k,
            KChoice::Sweep { min, max } => min..=max,
        }
    }

    fn validate(self) -> Result<()> {
        let (min, max) = (*self.range().start(), *self.range().end());
        if min == 0 || max > MAX_K || min > max {
            return Err(invalid(
                "k",
                format!("{min}..{max} is not a number of phases from 1 to {MAX_K}, low to high"),
            ));
        }
        Ok(())
    }
}

/// Phases by default: two, the paper's setting (§4: "good" and "bad" intervals). The one
/// definition `phases`, the report and the Python package share, so one trace gives one PoEC.
pub const DEFAULT_K: usize = 2;

/// Interval length by default: 100 000 units. The paper's is 1 M instructions, but a report
/// needs at least four intervals and is often made of a trace of a few hundred thousand
/// references; `phases` and the report share this one so their figures agree.
pub const DEFAULT_INTERVAL: u64 = 100_000;

impl Default for KChoice {
    /// [`DEFAULT_K`] phases.
    fn default() -> KChoice {
        KChoice::Fixed(DEFAULT_K)
    }
}

impl std::fmt::Display for KChoice {
    /// As `--k` takes it: `3` or `2..8`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KChoice::Fixed(k) => write!(f, "{k}"),
            KChoice::Sweep { min, max } => write!(f, "{min}..{max}"),
        }
    }
}

/// Options of a [`PhaseAnalysis`](super::PhaseAnalysis). Every field has a documented default
/// ([`PhaseOptions::default`]); [`PhaseOptions::validate`] checks them all before any work.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseOptions {
    /// Interval length in [`PhaseOptions::unit`]s. Default [`DEFAULT_INTERVAL`] (100 000; the
    /// paper's is 1 M instructions). At least 16 (the wavelet matrix has 16 sub-interval columns).
    pub interval: u64,
    /// What the interval length counts. Default [`IntervalUnit::Auto`].
    pub unit: IntervalUnit,
    /// Number of phases. Default [`KChoice::Fixed`]`(`[`DEFAULT_K`]`)`.
    pub k: KChoice,
    /// Methods to run, in report order. Default: every method ([`Method::ALL`]).
    pub methods: Vec<Method>,
    /// The L2 cache: the ground truth's cache, and the geometry setvectors and activity vectors
    /// are computed for. Default `1M,16,64`: 1 MiB, 16 ways, 64-byte lines (1024 sets). The
    /// paper does not state its L2's geometry; this one is our choice.
    pub l2: Geometry,
    /// Replacement policy of the ground-truth L2 (and L1). Default LRU.
    pub policy: Policy,
    /// An L1 data cache in front of the L2, or `None` (the default): the L2 then sees every data
    /// reference. The paper computes every signature from the raw reference stream and gives no
    /// L1, so by default its hit rate is over data references; with an L1 the L2 hit rate is
    /// local (hits over L1 misses).
    pub l1: Option<Geometry>,
    /// Setvector elements saturate at `2^bits − 1` (§3's n). Default 8 (one byte per set).
    /// From 1 to 8.
    pub setvector_bits: u32,
    /// Super-sets of the activity vectors: groups of consecutive L2 sets. Default 64 (fewer
    /// when the L2 has fewer sets). A power of two.
    pub activity_supersets: u64,
    /// The wavelet histogram's modulo M, in bytes (§2.1: 16 K, "matched to the L1 size").
    /// Default 16384. At least 16.
    pub wavelet_modulo: u64,
    /// Singular vectors kept by `wavelet-svd`. Default 4. From 1 to 16.
    pub svd_rank: usize,
    /// Seed of k-means++. Default 1: the same seed gives the same phases.
    pub seed: u64,
    /// k-means restarts (new k-means++ seeding each); the lowest inertia is kept. Default 10.
    pub restarts: u32,
    /// Lloyd iterations per restart at most. Default 100.
    pub max_iterations: u32,
    /// Intervals simulated before each representative interval to warm its caches, in the
    /// representative-interval (SimPoint-style) estimate. Default 1; 0 starts cold.
    pub warmup_intervals: u64,
    /// Finished intervals kept at most (at least 2), past which adjacent ones merge in pairs and
    /// the interval doubles (module `merge`). Default `None`: every interval kept.
    pub max_intervals: Option<usize>,
}

/// [`PhaseOptions::max_intervals`] of the reports: 409.6 M instructions before any merge.
pub const BOUNDED_INTERVALS: usize = 4096;

impl Default for PhaseOptions {
    fn default() -> PhaseOptions {
        PhaseOptions {
            interval: DEFAULT_INTERVAL,
            unit: IntervalUnit::Auto,
            k: KChoice::default(),
            methods: Method::ALL.to_vec(),
            l2: Geometry::new(1 << 20, 16, 64).expect("1 MiB, 16-way, 64 B is valid"),
            policy: Policy::Lru,
            l1: None,
            setvector_bits: 8,
            activity_supersets: 64,
            wavelet_modulo: 16 << 10,
            svd_rank: 4,
            seed: 1,
            restarts: 10,
            max_iterations: 100,
            warmup_intervals: 1,
            max_intervals: None,
        }
    }
}

impl PhaseOptions {
    /// Checks every field; the error names the field and what is valid.
    pub fn validate(&self) -> Result<()> {
        if self.interval < 16 {
            return Err(invalid(
                "interval",
                format!(
                    "{} is shorter than 16 (the wavelet matrix has 16 sub-interval columns)",
                    self.interval
                ),
            ));
        }
        self.k.validate()?;
        if let Some(m @ 0..2) = self.max_intervals {
            return Err(invalid(
                "max_intervals",
                format!("{m} intervals: merging in pairs needs at least 2"),
            ));
        }
        if self.methods.is_empty() {
            return Err(invalid("phase method", "no method selected".into()));
        }
        for (i, m) in self.methods.iter().enumerate() {
            if self.methods[..i].contains(m) {
                return Err(invalid("phase method", format!("{m} is listed twice")));
            }
        }
        if !(1..=8).contains(&self.setvector_bits) {
            return Err(invalid(
                "setvector bits",
                format!("{} is not from 1 to 8", self.setvector_bits),
            ));
        }
        // Setvectors and activity vectors group sets by their index bits.
        if !self.l2.sets().is_power_of_two() {
            return Err(invalid(
                "phase L2 cache",
                format!(
                    "{} has {} sets: phase signatures group sets by their index bits, so the \
                     phase cache needs a power-of-two number of sets",
                    self.l2,
                    self.l2.sets()
                ),
            ));
        }
        if !self.activity_supersets.is_power_of_two() {
            return Err(invalid(
                "activity super-sets",
                format!("{} is not a power of two", self.activity_supersets),
            ));
        }
        if self.wavelet_modulo < 16 {
            return Err(invalid(
                "wavelet modulo",
                format!("{} bytes is less than 16", self.wavelet_modulo),
            ));
        }
        if !(1..=16).contains(&self.svd_rank) {
            return Err(invalid(
                "svd rank",
                format!("{} is not from 1 to 16", self.svd_rank),
            ));
        }
        if self.restarts == 0 {
            return Err(invalid(
                "restarts",
                "0: k-means needs at least one run".into(),
            ));
        }
        if self.max_iterations == 0 {
            return Err(invalid(
                "iterations",
                "0: k-means needs at least one iteration".into(),
            ));
        }
        // The caches must be buildable with this policy (tree-PLRU needs 2^k ways).
        Cache::new(self.l2, self.policy)?;
        if let Some(l1) = self.l1 {
            Cache::new(l1, self.policy)?;
        }
        Ok(())
    }

    /// Super-sets actually used: [`PhaseOptions::activity_supersets`], at most the L2's sets.
    pub fn supersets(&self) -> u64 {
        self.activity_supersets.min(self.l2.sets())
    }
}

#[cfg(test)]
mod tests;
