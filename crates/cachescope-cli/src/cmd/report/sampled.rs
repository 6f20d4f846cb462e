//! `report --sampled`: the report's pass over the trace read as a sampled stream
//! (docs/sampled.md), then the same threads section, notes and files as the exact report.

use anyhow::{Context, Result};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{EventSource, StructureBudget};
use cachescope::pass::{Analyses, Independent};
use cachescope::report::sampled::{SampledCollector, per_structure, reuse_options};
use cachescope::spatial::SpatialOptions;
use cachescope::trace::Trace;
use cachescope_report::Report;
use cachescope_report::collect::CollectOptions;

use super::super::drive;
use super::{Again, Named};
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
    let mut report = pass(trace, options, spatial, events, named, run, |_| Ok(()))?;
    per_structure::uniform_note(&mut report);
    Ok(report)
}

/// [`analyse`] of a trace file with its event log (`again`): the attribution section from the
/// per-structure line sample of the full trace, which the sampled stage hands to the estimator
/// beside the pass, the trace decoded once (`cachescope::report::sampled::per_structure`).
pub fn analyse_beside(
    trace: &mut Trace,
    options: CollectOptions,
    spatial: SpatialOptions,
    events: Option<EventSource<'static>>,
    named: Named,
    run: &RunArgs,
    again: Again<'_>,
) -> Result<Report> {
    let log = sidecar_path(again.trace);
    let estimator = Box::new(EventReader::open(&log)?) as EventSource<'static>;
    let budget = StructureBudget::default();
    let mut beside = None;
    let report = pass(trace, options, spatial, events, named, run, |trace| {
        let b = per_structure::Beside::start(trace, estimator, spatial.rate, budget, spatial.seed);
        beside = Some(b?);
        Ok(())
    });
    let estimate = beside.map(|b| {
        b.finish(trace)
            .with_context(|| format!("the per-structure attribution of {}", again.trace.display()))
    });
    let mut report = report?;
    if let Some(estimate) = estimate {
        estimate?.apply(&mut report);
    }
    Ok(report)
}

/// The sampled pass and the report after it; `beside` is given the trace once it is made
/// sampled, before it is read.
fn pass(
    trace: &mut Trace,
    options: CollectOptions,
    spatial: SpatialOptions,
    events: Option<EventSource<'static>>,
    named: Named,
    run: &RunArgs,
    beside: impl FnOnce(&mut Trace) -> cachescope::Result<()>,
) -> Result<Report> {
    trace.sampled(spatial, Some(reuse_options(&options)))?;
    beside(trace)?;
    if !options.sampled_calls {
        // No sampled call graph: the calls need not pass (CallsSeen reads the first).
        trace.sampled_first_call_only();
    }
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
