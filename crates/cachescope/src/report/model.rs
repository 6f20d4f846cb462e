//! The report's data model: what `report.json` holds and everything else is rendered from.
//!
//! Field names are a public contract (`report.json`). Sizes are bytes, times and windows are
//! references, ratios are per counted (data) reference in `[0, 1]`. Optional sections
//! (`phases`, `attribution`) are left out of the JSON when the analysis did not run.

use crate::reuse::Mrc;
use serde::{Deserialize, Serialize};

mod attribution;
mod callgraph;
mod pages;
pub use attribution::*;
pub use callgraph::*;
pub use pages::*;

/// Version of the `report.json` layout; bumped when a field changes meaning or is removed.
pub const FORMAT_VERSION: u32 = 1;

/// Everything one report shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// The program that wrote it, `cachescope-report VERSION`.
    pub generator: String,
    /// What was analysed: a file name, `<stdin>`, `<workload NAME>` or the recorded command.
    pub source: String,
    /// The recorded program's command line, when known (a trace's event log names it; a
    /// program given after `--` is its own): what the page's summary names first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The trace format read (`workload` for generated traces).
    pub format: String,
    /// Cache line size in bytes every analysis maps references with.
    pub line_size: u64,
    /// Wall-clock seconds the collection pass took (the one non-deterministic field).
    pub elapsed_seconds: f64,
    /// Trace statistics.
    pub stats: TraceSummary,
    /// Miss-ratio curves, fully associative caches: exact LRU first, then exact random
    /// replacement (one size per octave: it simulates each size), then each model (the exact
    /// LRU curve's sizes, eight per octave).
    pub mrc: Vec<Mrc>,
    /// Curves by replacement policy: LRU, FIFO, SRRIP and DRRIP in the 3C section's
    /// set-associative caches (LRU exact, the others miniature simulations with at least 256
    /// sets), and OPT (Belady's MIN, fully associative, exact), the bound none beats.
    #[serde(default)]
    pub policies: Vec<Mrc>,
    /// How the sampled models' reuse distances were taken.
    pub sampling: SamplingSummary,
    /// The working-set graph: average footprint fp(w) (distinct lines) of windows of `w`
    /// references (HOTL, Xiang formula), 8 windows per octave.
    pub working_set: Vec<WorkingSetPoint>,
    /// HOTL's fill time and inter-miss time per cache size.
    pub fill_time: Vec<FillTimePoint>,
    /// Exact reuse-time histogram, one bin per power of two.
    pub reuse_time: Histogram,
    /// Exact LRU stack-distance histogram, one bin per power of two.
    pub stack_distance: Histogram,
    /// Simulated set-associative caches with their misses split into cold, capacity and
    /// conflict, beside Smith's estimate from the stack distances.
    pub three_c: ThreeCReport,
    /// L2 misses predicted from the L1 stack distances (Ji, Ling & Liu) against an exact
    /// two-level simulation of the same pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2: Option<L2Report>,
    /// Memory phases per interval, when the phase analysis ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhasesSummary>,
    /// Data-structure attribution, when it is available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// The threads section, when the trace has more than one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadsReport>,
    /// The "What to change" section: `advise`'s top findings (`report --advise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_to_change: Option<super::advice::WhatToChange>,
    /// The pages section: each thread's TLB miss ratio for every entry count (docs/tlb.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<PagesReport>,
    /// The call graph: functions' misses, self and inclusive, when the trace has call events
    /// (docs/callgraph.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callgraph: Option<CallGraphSummary>,
    /// What was left out and why (a model without samples, too few phase intervals…).
    pub notes: Vec<String>,
    /// The figures rendered from this report, in page order.
    pub figures: Vec<FigureInfo>,
    /// How a sampled report (`report --sampled`) sampled, and each section's expected error;
    /// absent from an exact report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<super::sampled::expected::SampledSummary>,
}

/// The threads of a trace with more than one, what each misses alone and what they share
/// (docs/threads.md). The curves and the sharing need a second read of the trace
/// ([`crate::report::threads::complete`]); without one only the ids are there, and a note says
/// why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadsReport {
    /// The threads, in order.
    pub ids: Vec<crate::ThreadId>,
    /// Each thread's exact LRU curve over its own references (`mrc --per-thread --json`), at
    /// the sizes of the report's exact curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curves: Option<crate::method::ThreadCurves>,
    /// A sampled report's per-thread SHARDS curves alone, where `curves` are `combined` with
    /// StatStack's from each thread's reuse samples (docs/sampled.md); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards_curves: Option<crate::method::ThreadCurves>,
    /// The lines threads share and their coherence misses in a multi-core model of the run
    /// (`sharing --json` with its defaults at the report's line size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharing: Option<crate::sharing::Sharing>,
}

/// Trace statistics (a subset of `cachescope stats --json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Data references: loads + stores + modifies.
    pub refs: u64,
    /// Loads.
    pub loads: u64,
    /// Stores.
    pub stores: u64,
    /// Modifies (read-modify-write; one reference each).
    pub modifies: u64,
    /// Instruction fetches.
    pub instructions: u64,
    /// Distinct lines touched by data references.
    pub distinct_lines: u64,
    /// `distinct_lines × line_size`.
    pub bytes_touched: u64,
}

/// The sampler behind the StatCache and StatStack curves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingSummary {
    /// Probability that a reference is sampled: the rate asked for, lower where a long trace's
    /// samples were thinned ([`crate::sampling::MAX_SAMPLES`]).
    pub rate: f64,
    /// Sampler seed.
    pub seed: u64,
    /// Samples taken.
    pub samples: u64,
    /// Samples whose line was referenced again.
    pub reuses: u64,
    /// Samples whose line never was (dangling).
    pub dangling: u64,
}

/// One point of the working-set graph.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkingSetPoint {
    /// Window length in references.
    pub window: u64,
    /// Average distinct lines in a window of that length.
    pub lines: f64,
    /// The same in bytes (`lines × line_size`).
    pub bytes: f64,
}

/// HOTL's timing metrics for one cache size (fully associative LRU).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FillTimePoint {
    /// Cache size in bytes.
    pub size_bytes: u64,
    /// Cache size in lines.
    pub lines: u64,
    /// References it takes to touch `lines` distinct lines on average (`fp⁻¹`).
    pub fill_time: f64,
    /// References between misses once the cache is full.
    pub inter_miss_time: f64,
}

/// A histogram with one bin per power of two, and the references with no distance (cold).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// What is binned: `reuse_time` (≥ 1) or `stack_distance` (≥ 0).
    pub distance: String,
    /// Bins `[lo, hi]` (both included), increasing, empty bins between non-empty ones kept.
    pub bins: Vec<HistogramBin>,
    /// First references: no distance.
    pub cold: u64,
    /// All counted references: `cold + Σ count`.
    pub total: u64,
}

/// One histogram bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramBin {
    /// Smallest distance in the bin.
    pub lo: u64,
    /// Largest distance in the bin.
    pub hi: u64,
    /// References whose distance falls in the bin.
    pub count: u64,
}

/// The 3C breakdown of simulated set-associative caches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreeCReport {
    /// Ways of every simulated cache.
    pub ways: u32,
    /// Replacement policy (`lru`).
    pub policy: String,
    /// One simulated cache per size.
    pub points: Vec<ThreeCPoint>,
}

/// One simulated cache's misses by class.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreeCPoint {
    /// Cache size in bytes.
    pub size_bytes: u64,
    /// Data references simulated.
    pub refs: u64,
    /// Misses of every class.
    pub misses: u64,
    /// First references to a line.
    pub cold: u64,
    /// Misses a fully associative LRU cache of the same size also takes.
    pub capacity: u64,
    /// The rest: misses due to the mapping onto sets.
    pub conflict: u64,
    /// Smith's estimate of the miss ratio (cold included) from the exact stack distances.
    pub smith_miss_ratio: f64,
}

/// The L2 section: a fully-associative LRU L1 in front of fully-associative L2s of several
/// sizes; the L2 sees the L1 misses only (non-inclusive).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct L2Report {
    /// L1 size in bytes (`cachescope l2`'s default, 32 KiB).
    pub l1_bytes: u64,
    /// L1 lines.
    pub l1_lines: u64,
    /// The L2s' replacement policy (`lru`).
    pub policy: String,
    /// L1 misses, i.e. L2 references, in the simulation.
    pub l2_refs: u64,
    /// Their first references to a line (cold misses of every L2).
    pub cold: u64,
    /// Exact local L2 miss ratios (per L2 reference), method `two-level`.
    pub simulated: Mrc,
    /// The model's local L2 miss ratios at the same sizes: `ji-l2` (the paper's equations)
    /// and `ji-l2-resident` (the corrected reading; see `cachescope::models::l2`).
    pub predicted: Vec<Mrc>,
    /// Exact L2 reuse distances (L2 references between two references to a line), one bin
    /// per power of two; `cold` are the first references.
    pub reuse_simulated: Histogram,
    /// The model's L2 reuse-distance histograms (Eq. 2), same bins, one per `predicted` method.
    pub reuse_predicted: Vec<PredictedHistogram>,
}

/// A predicted histogram: expected references per power-of-two bin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictedHistogram {
    /// The model (`ji-l2`, `ji-l2-resident`).
    pub method: String,
    /// Bins `[lo, hi]`, as in [`Histogram`].
    pub bins: Vec<PredictedBin>,
    /// Expected L2 reuses in all bins.
    pub total: f64,
}

/// One bin of a [`PredictedHistogram`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictedBin {
    /// Smallest distance in the bin.
    pub lo: u64,
    /// Largest distance in the bin.
    pub hi: u64,
    /// Expected references whose distance falls in the bin.
    pub weight: f64,
}

/// The phase timeline: intervals, the phase setvectors give each, and how every method did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhasesSummary {
    /// Interval length.
    pub interval: u64,
    /// What it counts: `instructions` or `data-refs`.
    pub unit: String,
    /// The L2 the hit rates are of (`SIZE,ASSOC,LINE`).
    pub l2: String,
    /// Number of phases.
    pub k: usize,
    /// The method whose phases the timeline shows.
    pub timeline_method: String,
    /// One entry per interval, in trace order.
    pub intervals: Vec<PhaseInterval>,
    /// Each method's agreement with the hit-rate classes.
    pub methods: Vec<PhaseMethod>,
}

/// One interval of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseInterval {
    /// Interval number, from 0.
    pub index: u64,
    /// Data references in it.
    pub data_refs: u64,
    /// Its L2 hit rate.
    pub l2_hit_rate: f64,
    /// The phase the timeline method gives it.
    pub phase: usize,
}

/// One phase-classification method's scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseMethod {
    /// Method name (`setvector`, `reuse-distance`, …).
    pub name: String,
    /// PoEC: 1 = same classes as the L2 hit rate, 0 = chance; absent when undefined.
    pub poec: Option<f64>,
    /// Coefficient of variation of the hit rate inside phases (lower is better).
    pub cov: f64,
    /// Weighted standard deviation of the hit rate inside phases (lower is better).
    pub sigma_weighted: f64,
}

/// One figure of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureInfo {
    /// File stem: `figures/ID.svg` and `figures/ID.png`.
    pub id: String,
    /// Title.
    pub title: String,
    /// One line saying how to read it.
    pub caption: String,
}
