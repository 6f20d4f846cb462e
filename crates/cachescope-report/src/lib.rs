//! cachescope-report: the figures and the page of `cachescope report`, from the data model the
//! library collects ([`cachescope::report`]).
//!
//! ```text
//! Trace ─▶ cachescope::report::Collector (one pass) ─▶ cachescope::report::Report (= report.json)
//!                                                        ├─▶ figures (SVG + PNG)
//!                                                        └─▶ html (report.html)
//!                                                      ─▶ write (the output directory)
//! ```
//!
//! - [`figures`]: plotters drawings of the model, each as SVG and PNG, with the embedded
//!   DejaVu Sans font (no system fonts), one file per figure family, and the evicted-by heatmap
//!   of any percentage matrix.
//! - [`html`]: the page, one file with inline SVG and CSS, no script and no network.
//! - [`mod@write`]: the output directory, every file written under a temporary name and renamed
//!   when complete.
//! - [`collect`] and [`model`] are the library's [`cachescope::report`] and its model,
//!   re-exported under the names this crate's callers have always used.
//!
//! This is a crate of its own so the plotting and templating dependencies stay out of the
//! core `cachescope` library.
//!
//! ```
//! use cachescope::report::{collect, CollectOptions};
//! use cachescope::trace::Trace;
//! use cachescope::workloads::{self, Params, Workload};
//! use cachescope::Source;
//!
//! let params = Params { lines: 64, refs: Some(20_000), ..Params::default() };
//! let generator = workloads::generator(Workload::Loop, &params)?;
//! let mut trace = Trace::from_reader(Box::new(generator), Source::Workload("loop".into()));
//! let report = collect(&mut trace, CollectOptions::default(), 1)?;
//! let figures = cachescope_report::figures::render_all(&report)?;
//! assert_eq!(figures.len(), report.figures.len());
//! let html = cachescope_report::html::render(&report, &figures)?;
//! assert!(html.contains("<svg"));
//! # Ok::<(), cachescope_report::Error>(())
//! ```

pub mod error;
pub mod figures;
pub mod html;
pub mod write;

/// The one-pass collection, now [`cachescope::report`]: `collect::{Collector, CollectOptions,
/// collect}` as before.
pub use cachescope::report as collect;
pub use cachescope::report::model;

pub use error::{Error, Result};
pub use model::Report;
