//! HOTL, the higher-order theory of locality (Xiang, Ding, Luo & Bao, ASPLOS 2013): the
//! average footprint of every window length in one linear pass, and its conversion to the
//! fill time, inter-miss time, miss ratio and reuse-distance distribution of LRU caches of
//! every size.
//!
//! ## The formulas
//! The average footprint `fp(w)`, the mean number of distinct lines over all `n − w + 1`
//! windows of `w` references, is given exactly by the Xiang formula (PACT 2011; HOTL Lemma 2.1):
//!
//! `fp(w) = m − [ Σ_lines (f − w)⁺ + Σ_lines (l − w)⁺ + Σ_reuses (rt − w)⁺ ] / (n − w + 1)`
//!
//! and the conversions (§2.3–2.6) take differences going down and sums going up:
//!
//! | metric | from the footprint | back up |
//! |---|---|---|
//! | fill time | `vt(c) = fp⁻¹(c)` | |
//! | miss ratio | `mr(c) = (fp(x+Δx) − fp(x))/Δx` at `c = fp(x)` | `mr(c) = Σ_{r > c} P(rd = r)` |
//! | inter-miss time | `im(c) = vt(c+1) − vt(c)` | `vt(c) = Σ_{k < c} im(k)` |
//! | reuse distance | `P(rd = c) = mr(c−1) − mr(c)` | `fp = vt⁻¹` |
//!
//! They are exact when every reuse window holds as many lines as the average window of its
//! length (the reuse-window hypothesis, §2.7), which [`ReuseWindowAnalysis`] measures.
//!
//! ## Conventions
//! Following docs/definitions.md: positions are 1-based; the reuse time is `rt = i − j ≥ 1`;
//! `f` is a line's first position and `l = n + 1 −` its last; HOTL's reuse distance is
//! `rd = sd + 1`, the LRU stack distance plus the line itself, so a cache of `c` lines hits
//! iff `rd ≤ c` ([`Filmer::reuse_distance_probability`] takes `rd`; [`Filmer::stack_distances`]
//! gives `sd`, the crate's internal convention). A reuse window spans `j ..= i`, `rt + 1`
//! references. Cache sizes are in lines; every miss ratio is per counted reference (data
//! references, and instruction fetches with
//! [`include_instructions`](crate::reuse::Options::include_instructions)), with
//! `miss_ratio` counting the `m` cold misses and `miss_ratio_warm` leaving them out
//! (see [`Filmer`] for how the footprint's slope maps onto them).
//!
//! ## Parts
//! | item | paper | what |
//! |---|---|---|
//! | [`FootprintAnalysis`] → [`Footprint`] | §2.2, Lemma 2.1 | `fp(w)` for every `w`, exact on the grid and listed windows |
//! | [`Filmer`], [`mrc`] | §2.3–2.6 | the conversions; `mrc --method hotl --hotl-variant paper` |
//! | [`LocalFootprintAnalysis`] → [`LocalFootprint`] | §2.7, per stretch | the time-local reading: `mrc --method hotl` (the default, [`HotlVariant`]) |
//! | [`footprint_from_distances`] | §2.6 | the reverse conversion, from any stack-distance distribution |
//! | [`reuse_time_mrc`], [`Footprint::reuse_time_mrc`] | §2.7 | the reuse-time conversion (`hotl-rt`) |
//! | [`crate::models::smith`] | §2.4, §3 | set-associative caches from [`Filmer::stack_distances`] |
//! | [`FootprintSampler`] | §3 | footprint sampling, both designs, with coverage |
//! | [`ReuseWindowAnalysis`] | §2.7 | `rfp(l)` against `fp(l)`: where the conversions err |
//! | [`DirectFillTimeAnalysis`] | §2.3, App. A, §4.4 | the direct fill time, a diagnostic |
//! | [`corun`] | §4.5 | shared-cache miss ratios from solo profiles, and their simulation |
//! | [`FootprintCurve`] | | a footprint as points: saved profiles, sampled and integrated curves |
//!
//! ## Accuracy and speed
//! docs/accuracy/hotl.md compares the paper's conversion and the time-local reading on real
//! programs (worst point over them: 11.6 pp → under 9 pp, `gzip`'s cliff; `hash` 11.6 →
//! 0.8 pp). Measured by the tests named here (run them with `--nocapture` to see the figures):
//! - `tests/hotl_footprint.rs`: `fp(w)` equals a brute-force average at every `w` of random
//!   traces, and at listed windows off the grid of 400 K-reference synthetic traces and of a
//!   3 M-reference Valgrind trace of `sort`.
//! - `tests/hotl_conversions.rs`: against the exact LRU curve, at the paper's 3073 sizes and
//!   at every size up to twice the data, the mean absolute error is within 0.01 pp for
//!   `loop`, `matmul` and `stencil`, 0.03–0.16 pp for `random` and `zipf`, 0.03 pp for the
//!   `sort` trace; the largest errors are at sharp knees of tiled loops (up to 29 pp at a
//!   handful of sizes below 120 lines) and in `phases` (mean 4–5 pp, 35 pp at its loop's
//!   size), whose reuse windows are not typical windows (`tests/hotl_diagnostics.rs` measures
//!   `rfp(257) = 256` against `fp(257) = 179`).
//! - `tests/hotl_smith.rs`: Smith's formula within 0.08 pp (mean) of 1-, 4- and 8-way
//!   simulation where lines fall in sets at random, up to 7 pp where they do not.
//! - `tests/hotl_corun.rs`: 60 co-run predictions (15 pairs of 4 synthetic workloads and 2
//!   Valgrind traces): median relative error 0.8 % (fully associative) and 1.3 % (8-way).
//!
//! The footprint pass does one table lookup per reference (`benches/hotl.rs`, one core of a
//! loaded 2-core machine): 120–133 M references/s on a Zipf stream over 64 Ki lines, 75–80 M
//! over 256 Ki lines, 37–48 M over 1 Mi lines: 1.7–2.3 times the exact stack-distance pass on
//! the same batches.
//!
//! ## Example
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::models::hotl::{self, Filmer, FootprintAnalysis};
//! use cachescope::reuse::Options;
//! use cachescope::{Access, Batch};
//!
//! // HOTL §2.2: "abbb" has fp(2) = 4/3.
//! let batch: Batch = [0, 64, 64, 64].map(|a| Access::load(a, 8)).into_iter().collect();
//! let mut a = FootprintAnalysis::new(Options::default(), &[2])?;
//! a.observe(&batch);
//! let fp = a.finish();
//! assert!((fp.fp(2) - 4.0 / 3.0).abs() < 1e-12);
//! // A one-line cache: the footprint's concave majorant rises by 1/3 per reference there,
//! // below the 2 cold misses per 4 references that every LRU cache takes, so mr(1) = 1/2,
//! // which is also the exact miss ratio (a, b miss; b, b hit).
//! let f = Filmer::new(&fp);
//! assert_eq!(f.miss_ratio(1.0), 0.5);
//! let mrc = hotl::mrc(&fp, &[64, 128]);
//! assert_eq!(mrc.points[1].miss_ratio, Some(0.5));
//! # Ok::<(), cachescope::Error>(())
//! ```

pub mod corun;
pub mod curve;
pub mod fill_time;
pub mod filmer;
pub mod footprint;
pub mod local;
pub mod profile;
pub mod reuse_time;
pub mod reuse_window;
pub mod sampling;
pub(crate) mod sums;

pub use curve::{CurvePoint, FootprintCurve};
pub use fill_time::{
    DirectFillTime, DirectFillTimeAnalysis, DirectFillVolume, FillTimePoint, MAX_VOLUME,
};
pub use filmer::{DENSE_WINDOWS, Filmer, PER_OCTAVE, footprint_from_distances, mrc};
pub use footprint::{Footprint, FootprintAnalysis, FootprintPoint};
pub use local::{HotlVariant, LocalCurve, LocalFootprint, LocalFootprintAnalysis};
pub use profile::ProfileFootprint;
pub use reuse_time::reuse_time_mrc;
pub use reuse_window::{ReuseWindowAnalysis, ReuseWindowCheck, ReuseWindowPoint, ReuseWindows};
pub use sampling::{FootprintSampler, SampledFootprint, SamplingOptions};
