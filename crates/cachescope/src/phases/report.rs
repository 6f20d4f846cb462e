//! [`PhaseReport`]: what `cachescope phases` reports. Field names are a public contract
//! (`--json`): `methods[]` with `name`, `poec`, `cov`, `sigma_weighted`, `k`, …, and
//! `intervals[]` with `index`, `l2_hit_rate` and `phases` (method name → phase id).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::intervals::Unit;
use super::options::{KChoice, Method};
use crate::sim::{Geometry, Policy};

/// The settings a report was computed with (the resolved interval unit included).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PhaseSettings {
    /// Interval length, in `unit`s.
    pub interval: u64,
    /// What the interval length counted.
    pub unit: Unit,
    /// Number of phases asked for.
    pub k: KChoice,
    /// The ground truth's L2, also the geometry of setvectors and activity vectors.
    pub l2: Geometry,
    /// The L1 in front of the L2, if any.
    pub l1: Option<Geometry>,
    /// Replacement policy of the simulated caches.
    pub policy: Policy,
    /// Setvector saturation bits.
    pub setvector_bits: u32,
    /// Activity-vector super-sets used.
    pub activity_supersets: u64,
    /// Wavelet modulo in bytes.
    pub wavelet_modulo: u64,
    /// Singular vectors kept by `wavelet-svd`.
    pub svd_rank: usize,
    /// k-means seed.
    pub seed: u64,
    /// k-means restarts.
    pub restarts: u32,
    /// Lloyd iterations per restart at most.
    pub max_iterations: u32,
    /// Warm-up intervals before each representative interval.
    pub warmup_intervals: u64,
    /// Times the intervals were merged in pairs to keep at most `max_intervals`: `interval`
    /// is the length asked for times `2^merged` (left out of JSON when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub merged: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One phase of one method.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PhaseSummary {
    /// Phase id (0 is the phase of interval 0, then in order of first appearance).
    pub id: usize,
    /// Intervals in the phase.
    pub intervals: u64,
    /// `intervals` over all intervals.
    pub share: f64,
    /// Data references in the phase's intervals.
    pub data_refs: u64,
    /// Mean L2 hit rate of its intervals.
    pub mean_l2_hit_rate: f64,
    /// Population standard deviation of their L2 hit rates.
    pub std_l2_hit_rate: f64,
    /// The interval nearest the phase's centroid (in signature space; the earliest on a tie),
    /// simulated for the representative-interval estimate.
    pub representative: u64,
}

/// BIC of one k tried in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct KScore {
    /// Clusters asked for.
    pub k: usize,
    /// Clusters made (fewer when there were fewer distinct signatures).
    pub clusters: usize,
    /// Bayesian information criterion (higher is better).
    pub bic: f64,
}

/// The SimPoint-style estimate of one method: one interval per phase simulated, weighted by
/// the phase's data references (see `simpoint`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SimPointEstimate {
    /// Extrapolated L2 miss ratio (misses over L2 accesses).
    pub miss_ratio: f64,
    /// The full, warm simulation's L2 miss ratio.
    pub actual_miss_ratio: f64,
    /// `miss_ratio − actual_miss_ratio`.
    pub error: f64,
    /// `|error| / actual_miss_ratio`; `None` when the actual miss ratio is 0.
    pub relative_error: Option<f64>,
    /// Intervals simulated: the representatives and their warm-up intervals.
    pub intervals_simulated: u64,
    /// `intervals / intervals_simulated`: the speed-up in simulated intervals (intervals /
    /// phases without warm-up).
    pub speedup: f64,
    /// Data references simulated (representatives and warm-up).
    pub refs_simulated: u64,
    /// `data_refs / refs_simulated`: the speed-up in simulated references.
    pub speedup_refs: f64,
    /// Measured: the full simulation's time (first pass) over the representatives' (second
    /// pass, at its measured time per simulated reference). Varies run to run.
    pub measured_speedup: Option<f64>,
}

/// One method's clustering and its scores.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MethodReport {
    /// Method name (kebab-case, [`Method::name`]).
    pub name: &'static str,
    /// PoEC against the L2 hit-rate classes; `None` (null) with a single phase.
    pub poec: Option<f64>,
    /// Eq. 1, a fraction.
    pub cov: f64,
    /// Eq. 2, in hit-rate units.
    pub sigma_weighted: f64,
    /// Phases made.
    pub k: usize,
    /// The BIC of every k tried, for a sweep (empty for a fixed k).
    pub k_scores: Vec<KScore>,
    /// Dimensions of the clustered signature (1 for a magnitude).
    pub dims: usize,
    /// k-means inertia of the kept clustering.
    pub inertia: f64,
    /// The phases, by id.
    pub phases: Vec<PhaseSummary>,
    /// Time to build the method's signatures, per data reference (measured, varies run to run;
    /// methods sharing a signature share its time: setvector and setvector-vector; activity and
    /// activity-magnitude; wavelet, wavelet-dc and wavelet-svd).
    pub signature_ns_per_ref: f64,
    /// Time to cluster (every k of a sweep) and score, in milliseconds (measured).
    pub clustering_ms: f64,
    /// The same time per data reference of the trace, to set beside `signature_ns_per_ref`.
    pub clustering_ns_per_ref: f64,
    /// The representative-interval estimate, once a second pass has run
    /// ([`PhaseReport::apply_representatives`]).
    pub simpoint: Option<SimPointEstimate>,
}

/// One interval.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct IntervalReport {
    /// 0-based index.
    pub index: u64,
    /// Instruction fetches in the interval.
    pub instructions: u64,
    /// Data references in the interval.
    pub data_refs: u64,
    /// References that reached the L2.
    pub l2_accesses: u64,
    /// Of those, hits.
    pub l2_hits: u64,
    /// `l2_hits / l2_accesses` (1 with no access), warm caches.
    pub l2_hit_rate: f64,
    /// The phase each method put the interval in.
    pub phases: BTreeMap<&'static str, usize>,
}

/// Everything a phase analysis found. Serializes with the field names documented here.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PhaseReport {
    /// One entry per method, in the order asked for.
    pub methods: Vec<MethodReport>,
    /// One entry per interval, in trace order.
    pub intervals: Vec<IntervalReport>,
    /// The settings used.
    pub settings: PhaseSettings,
    /// Instruction fetches in the trace.
    pub instructions: u64,
    /// Data references in the trace.
    pub data_refs: u64,
    /// L2 accesses over the whole trace.
    pub l2_accesses: u64,
    /// L2 hits over the whole trace.
    pub l2_hits: u64,
    /// L2 misses over accesses for the whole trace (warm, cold misses included).
    pub l2_miss_ratio: f64,
    /// Time of the exact L2 simulation per data reference (measured).
    pub ground_truth_ns_per_ref: f64,
}

impl PhaseReport {
    /// The report with its measured times zeroed, to compare two runs (tests, reproducibility).
    pub fn untimed(mut self) -> PhaseReport {
        self.ground_truth_ns_per_ref = 0.0;
        for m in &mut self.methods {
            (
                m.signature_ns_per_ref,
                m.clustering_ms,
                m.clustering_ns_per_ref,
            ) = (0.0, 0.0, 0.0);
        }
        self
    }

    /// The report of `method`, if it was run.
    pub fn method(&self, method: Method) -> Option<&MethodReport> {
        self.methods.iter().find(|m| m.name == method.name())
    }

    /// The phase of every interval under `method`, in interval order.
    pub fn labels(&self, method: Method) -> Option<Vec<usize>> {
        self.method(method)?;
        Some(
            self.intervals
                .iter()
                .map(|i| i.phases[method.name()])
                .collect(),
        )
    }

    /// The L2 hit rate of every interval.
    pub fn hit_rates(&self) -> Vec<f64> {
        self.intervals.iter().map(|i| i.l2_hit_rate).collect()
    }
}

/// A Markdown table of every method's PoEC on several traces, one row per trace and a last row
/// with each method's mean over the traces (the paper's Figures 1 and 3 as a table). Methods
/// are the union of the reports' methods, in first-seen order; a missing or undefined PoEC is
/// shown as `–` and left out of the mean.
pub fn poec_table(rows: &[(&str, &PhaseReport)]) -> String {
    let mut names: Vec<&'static str> = Vec::new();
    for (_, r) in rows {
        for m in &r.methods {
            if !names.contains(&m.name) {
                names.push(m.name);
            }
        }
    }
    let mut out = String::from("| trace |");
    for n in &names {
        let _ = write!(out, " {n} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(names.len()));
    out.push('\n');
    let mut sums = vec![(0.0, 0usize); names.len()];
    for (trace, r) in rows {
        let _ = write!(out, "| {trace} |");
        for (j, n) in names.iter().enumerate() {
            match r.methods.iter().find(|m| m.name == *n).and_then(|m| m.poec) {
                Some(p) => {
                    sums[j].0 += p;
                    sums[j].1 += 1;
                    let _ = write!(out, " {p:.3} |");
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out.push_str("| **mean** |");
    for (s, n) in sums {
        if n == 0 {
            out.push_str(" – |");
        } else {
            let _ = write!(out, " {:.3} |", s / n as f64);
        }
    }
    out.push('\n');
    out
}
