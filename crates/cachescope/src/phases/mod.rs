//! Memory phase classification: Zwick, Durkovic, Obermeier & Diepold, *Setvectors for memory
//! phase classification*, with the methods it compares and its PoEC metric.
//!
//! ## What is computed
//! The trace is cut into intervals of N instructions (default 1 M, the paper's), or N data
//! references when the trace has no instruction fetch ([`IntervalUnit`], `intervals`). Per
//! interval, in one pass ([`PhaseAnalysis`]):
//!
//! - signatures (`signature`), one per [`Method`]:
//!   - `setvector` (§3): `s_s = min(2^n − 1, |{distinct lines of set s}|)` for every set `s` of
//!     the L2, clustered on `|s|` (§5.1); `setvector-vector` clusters the vector itself; both
//!     on the scale `ln(1 + x / unit)`, unit the ways for an element and `ways·√sets` for
//!     `|s|` (`signature::log_scale`: footprints beyond the cache compare by ratio);
//!   - `activity`, `activity-magnitude` (§2.2): accesses per super-set of L2 sets, clustered as
//!     a vector and as its magnitude;
//!   - `reuse-distance` (§2.3): the stack-distance histogram in log₂ bins, as fractions;
//!   - `wavelet`, `wavelet-dc`, `wavelet-svd` (§2.1): the 16 × 16 image of
//!     `⌊(a mod M)·16/M⌋` per sixteenth of the interval, its weighted Haar coefficients, their
//!     top-left (mean) coefficient, and `σ_j u_j` of its SVD;
//! - the ground truth (`truth`): the interval's L2 hit rate from the exact simulator
//!   ([`crate::sim::Cache`]), warm across intervals. The L2 sees every data reference directly
//!   (the paper builds every signature from the raw data references and states no L1); an L1
//!   can be put in front ([`PhaseOptions::l1`]).
//!
//! [`PhaseAnalysis::finish`] then clusters each method's signatures (`kmeans`: k-means++ with
//! seeded restarts for vectors, the exact 1-D optimum for scalars; k fixed or swept with
//! SimPoint's BIC rule), clusters the hit rates into as many classes, and scores each method
//! (`metrics`) with
//!
//! - PoEC = `(a − 1/k) / (1 − 1/k)` clipped to [0, 1], `a` the fraction of intervals on which
//!   the method's phases and the hit-rate classes agree under the best one-to-one matching
//!   (Hungarian algorithm, `matching`); `2·(max(a, 1 − a) − 0.5)` for k = 2. This is the
//!   reading of docs/definitions.md: the printed Eq. 3 can never be positive;
//! - CoV = `Σ_i (σ_i / μ_i) n_i / N` (Eq. 1) and weighted σ = `Σ_i σ_i n_i / N` (Eq. 2) of the
//!   hit rates within each phase (population σ; fractions, not percentages).
//!
//! Beyond the paper, [`RepresentativeSim`] is a second pass that simulates one representative
//! interval per phase and extrapolates the L2 miss ratio (`simpoint`).
//!
//! ## Conventions
//! Data references only (loads, stores, modifies; instruction fetches only count intervals),
//! each at the line of its first byte. Lines are `addr >> log2(L2 line size)`, sets the low
//! bits of the line ([`crate::sim::Geometry::set_of`]). Stack distances follow
//! docs/definitions.md (`sd`, distinct other lines in between). Hit rates are hits over L2
//! accesses, cold misses included.
//!
//! ## Defaults ([`PhaseOptions::default`])
//! 100 000-unit intervals ([`DEFAULT_INTERVAL`]; the paper's 1 M gives a short trace too few);
//! k = 2 ([`DEFAULT_K`] (the paper's "good" and "bad" intervals); every method; L2 1 MiB,
//! 16-way, 64-byte lines, LRU (the paper does not state its L2); 8-bit setvectors; 64
//! super-sets; M = 16 KiB; SVD rank 4; seed 1; 10 restarts of at most 100 iterations; one
//! warm-up interval per representative.
//!
//! ## Example
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::pass::{Analyses, Pass};
//! use cachescope::phases::{KChoice, Method, PhaseAnalysis, PhaseOptions};
//! use cachescope::sim::Geometry;
//! use cachescope::trace::Trace;
//! use cachescope::workloads::{Params, Workload, generator};
//! use cachescope::Source;
//!
//! // Loop, stream and random segments, twice, 24 576 references each; intervals of 2048.
//! let params = Params { lines: 384, ..Params::default() };
//! let trace = || -> cachescope::Result<Trace> {
//!     let g = generator(Workload::Phases, &params)?;
//!     Ok(Trace::from_reader(Box::new(g), Source::Workload("phases".into())))
//! };
//! let options = PhaseOptions {
//!     interval: 2048,
//!     k: KChoice::Fixed(3),
//!     methods: vec![Method::Setvector, Method::ReuseDistance],
//!     l2: Geometry::parse("8K,4,64")?,
//!     ..PhaseOptions::default()
//! };
//! let mut phases = PhaseAnalysis::new(options)?;
//! Pass::new(1).run(&mut trace()?, Analyses(&mut [&mut phases]))?;
//! let mut report = phases.finish()?;
//! assert_eq!(report.intervals.len(), 72);
//! assert_eq!(report.method(Method::Setvector).unwrap().poec, Some(1.0));
//!
//! // Second pass: simulate one interval per phase and extrapolate.
//! let mut reps = report.representative_simulation()?;
//! Pass::new(1).run(&mut trace()?, Analyses(&mut [&mut reps]))?;
//! report.apply_representatives(&reps.finish())?;
//! let est = report.method(Method::Setvector).unwrap().simpoint.clone().unwrap();
//! // Three representatives and their warm-up intervals: a twelfth of the trace or less.
//! assert!(est.error.abs() < 0.01 && est.speedup >= 12.0);
//! # Ok::<(), cachescope::Error>(())
//! ```

mod analysis;
mod clusters;
mod intervals;
pub mod kmeans;
pub mod matching;
mod merge;
#[cfg(test)]
mod merge_tests;
pub mod metrics;
mod options;
#[cfg(test)]
mod planted_tests;
mod report;
pub mod signature;
mod simpoint;
mod truth;

pub use analysis::PhaseAnalysis;
pub use intervals::{COLUMNS, IntervalCounts, Unit};
pub use options::{
    BOUNDED_INTERVALS, DEFAULT_INTERVAL, DEFAULT_K, IntervalUnit, KChoice, MAX_K, Method,
    PhaseOptions,
};
pub use report::{
    IntervalReport, KScore, MethodReport, PhaseReport, PhaseSettings, PhaseSummary,
    SimPointEstimate, poec_table,
};
pub use simpoint::{RepresentativeRuns, RepresentativeSim};
pub use truth::L2Counts;
