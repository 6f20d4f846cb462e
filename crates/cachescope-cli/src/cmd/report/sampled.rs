//! `report --sampled`: the report's pass over the trace read as a sampled stream
//! (docs/sampled.md), then the same threads section, notes and files as the exact report.

use anyhow::Result;
use cachescope::attribution::EventSource;
use cachescope::pass::{Analyses, Independent};
use cachescope::report::sampled::{SampledCollector, reuse_options};
use cachescope::spatial::SpatialOptions;
use cachescope::trace::Trace;
use cachescope_report::Report;
use cachescope_report::collect::CollectOptions;

use super::super::drive;
use super::Named;
use crate::args::RunArgs;
use crate::progress::Progress;

/// [`super::analyse`] under `--sampled`: `trace` filtered with `spatial` as it is read (unless
/// its reader already gives a sampled stream), StatCache's sampler on the full stream beside
/// the filter.
pub fn analyse(
    trace: &mut Trace,
    options: CollectOptions,
    spatial: SpatialOptions,
    events: Option<EventSource<'static>>,
    named: Named,
    run: &RunArgs,
) -> Result<Report> {
    trace.sampled(spatial, Some(reuse_options(&options)))?;
    let mut collector = SampledCollector::new(options, spatial)?.with_threads(run.threads);
    if let Some(events) = events {
        collector = collector.with_attribution(events)?;
    }
    // Shared out over the threads, as the exact report's (one decode, the same report).
    if run.threads > 1 {
        drive(trace, Independent(&mut collector.analyses_send()), run)?;
    } else {
        drive(trace, Analyses(&mut collector.analyses()), run)?;
    }
    let mut report = Progress::stage(run.quiet, "after the pass", || collector.finish(trace))?;
    if let Some(source) = named.source {
        report.source = source;
    }
    report.program = named.program;
    Ok(report)
}
