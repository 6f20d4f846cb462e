//! cachescope-report: one command from a trace to a self-contained HTML report.
//!
//! ```text
//! Trace ─▶ collect::Collector (one pass: stats, stack distances, reuse times, footprint,
//!          random replacement, sampling, 3C simulation, two-level L1/L2 simulation, phases,
//!          policies: FIFO/SRRIP/DRRIP miniatures and OPT)
//!          ─▶ model::Report (= report.json)
//!                                                              ├─▶ figures (SVG + PNG)
//!                                                              └─▶ html (report.html)
//! ```
//!
//! - [`model`]: the one data model, serialised as `report.json`; everything else renders it.
//! - [`collect`]: the analyses of one pass ([`collect::Collector::analyses`] for a driver
//!   with progress, or [`collect::collect`]) and the models run on their results.
//! - [`kinds`]: the accesses of each kind (the trace summary's counts).
//! - [`policies`]: the policy curves (miniature simulations and OPT) of the policies figure.
//! - [`figures`]: plotters drawings of the model, each as SVG and PNG, with the embedded
//!   DejaVu Sans font (no system fonts), and the evicted-by heatmap of any percentage matrix.
//! - [`html`]: the page, one file with inline SVG and CSS, no script and no network.
//! - [`mod@write`]: the output directory, every file written under a temporary name and renamed
//!   when complete.
//!
//! This is a crate of its own so the plotting and templating dependencies stay out of the
//! core `cachescope` library.
//!
//! ```
//! use cachescope::trace::Trace;
//! use cachescope::workloads::{self, Params, Workload};
//! use cachescope::Source;
//! use cachescope_report::collect::{collect, CollectOptions};
//!
//! let params = Params { lines: 64, refs: Some(20_000), ..Params::default() };
//! let generator = workloads::generator(Workload::Loop, &params)?;
//! let mut trace = Trace::from_reader(Box::new(generator), Source::Workload("loop".into()));
//! let report = collect(&mut trace, CollectOptions::default(), 1)?;
//! // A loop over 64 lines: exact LRU misses everything below 4 KiB, only cold misses from it.
//! let lru = &report.mrc[0];
//! let at = |bytes| lru.points.iter().find(|p| p.size_bytes == bytes).unwrap().miss_ratio.unwrap();
//! assert_eq!(at(2048), 1.0);
//! assert!((at(4096) - 64.0 / 20_000.0).abs() < 1e-12);
//! let html = cachescope_report::html::render(&report, &cachescope_report::figures::render_all(&report)?)?;
//! assert!(html.contains("<svg"));
//! # Ok::<(), cachescope_report::Error>(())
//! ```

pub mod collect;
pub mod error;
pub mod figures;
pub mod html;
pub mod kinds;
pub mod model;
pub mod policies;
pub mod write;

pub use error::{Error, Result};
pub use model::Report;
