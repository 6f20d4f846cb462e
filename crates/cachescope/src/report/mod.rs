//! The report's data model and the one pass that fills it: what `cachescope report` writes as
//! `report.json`, as a [`Report`] a library user gets with one call to [`collect()`]. Drawing
//! the figures and the page is the `cachescope-report` crate's; nothing here plots.
//!
//! ```text
//! Trace ─▶ Collector (one pass: access counts, stack distances with the 3C caches and the
//!          two-level L1/L2 simulation, reuse times, footprint, random replacement, sampling,
//!          phases, policies: FIFO/SRRIP/DRRIP miniatures and OPT's spill)
//!       ─▶ Collector::finish (the models: StatCache, StatStack, HOTL, Smith, the L2 model, OPT)
//!       ─▶ Report (= report.json)
//! ```
//!
//! - [`model`]: [`Report`] and its parts, the `report.json` contract.
//! - [`CollectOptions`], [`Collector`]: the analyses of one pass ([`Collector::analyses`] for a
//!   driver of one's own, [`Collector::analyses_send`] for several threads), then the models.
//! - [`catalog`]: the figures a report has, with their titles and captions.
//! - [`octave_histogram`]: the power-of-two bins of every histogram.
//! - [`kinds`], [`policies`]: the trace summary's access counts and the policies' curves.
//! - [`threads`]: the threads section of a trace with several (per-thread curves, sharing),
//!   from a second read of the trace after the pass.
//!
//! What each section and figure shows is in docs/report.md.
//!
//! ```
//! use cachescope::report::{self, CollectOptions};
//! use cachescope::trace::Trace;
//! use cachescope::workloads::{self, Params, Workload};
//! use cachescope::Source;
//!
//! let params = Params { lines: 64, refs: Some(20_000), ..Params::default() };
//! let generator = workloads::generator(Workload::Loop, &params)?;
//! let mut trace = Trace::from_reader(Box::new(generator), Source::Workload("loop".into()));
//! let report = report::collect(&mut trace, CollectOptions::default(), 1)?;
//! // A loop over 64 lines: exact LRU misses everything below 4 KiB, only cold misses from it.
//! let lru = &report.mrc[0];
//! let at = |bytes| lru.points.iter().find(|p| p.size_bytes == bytes).unwrap().miss_ratio.unwrap();
//! assert_eq!(at(2048), 1.0);
//! assert!((at(4096) - 64.0 / 20_000.0).abs() < 1e-12);
//! assert_eq!((report.stats.refs, report.stats.distinct_lines), (20_000, 64));
//! assert_eq!(report.figures[0].id, "mrc");
//! # Ok::<(), cachescope::Error>(())
//! ```

pub mod advice;
mod assemble;
mod callgraph;
pub mod catalog;
mod collector;
mod histogram;
mod hotl_points;
pub mod kinds;
mod l2;
pub mod model;
mod options;
mod pages;
pub mod policies;
pub mod sampled;
mod summaries;
mod sweep;
pub mod threads;

pub use callgraph::miniatures as callgraph_miniatures;
pub use catalog::FigureKind;
pub use collector::Collector;
pub use histogram::octave_histogram;
pub use model::Report;
pub use options::CollectOptions;

use crate::Result;
use crate::trace::Trace;

/// Reads `trace` once with `threads` threads and returns its report.
pub fn collect(trace: &mut Trace, options: CollectOptions, threads: usize) -> Result<Report> {
    let mut collector = Collector::new(options)?.with_threads(threads);
    let mut pass = crate::pass::Pass::new(threads);
    if threads > 1 {
        pass.run(
            trace,
            crate::pass::Independent(&mut collector.analyses_send()),
        )?;
    } else {
        pass.run(trace, crate::pass::Analyses(&mut collector.analyses()))?;
    }
    collector.finish(trace)
}
