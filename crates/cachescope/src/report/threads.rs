//! The report's threads section: each thread's exact LRU curve and the lines threads share
//! with their coherence misses, for a trace of more than one thread.
//!
//! The report's pass only notes which threads there are (a look at each batch's thread runs):
//! per-thread curves in that pass would double the stack-distance work of every single-thread
//! trace, and the sharing model has to see the threads re-interleaved, so both read the trace
//! again, after the pass, only when there are threads to show. A trace that cannot be read
//! again (standard input) keeps the ids and says so in a note.

use std::path::Path;

use super::Report;
use super::catalog;
use crate::error::Result;
use crate::method::{MrcOptions, ThreadCurves, mrc_per_thread};
use crate::pass::{Hooks, Pass};
use crate::reuse::Options;
use crate::sharing::{self, Sharing};
use crate::sim::Geometry;
use crate::trace::Trace;

/// Fills `report`'s threads section from `again`, the same trace opened anew (`None` when it
/// cannot be), with `pass`; names the shared lines from the event log at `log`. Does nothing
/// for a trace of one thread.
pub fn complete<H: Hooks>(
    report: &mut Report,
    again: Option<&mut dyn FnMut() -> std::result::Result<Trace, H::Error>>,
    pass: &mut Pass<H>,
    log: Option<&Path>,
) -> Result<(), H::Error> {
    let Some(section) = &report.threads else {
        return Ok(());
    };
    let Some(again) = again else {
        report.notes.push(format!(
            "the trace has {} threads; their curves and sharing need a second read of it, \
             which {} does not allow: save it to a file and report on that",
            section.ids.len(),
            report.source
        ));
        return Ok(());
    };
    let curves = curves(report, &mut again()?, pass)?;
    let sharing = shared(report.line_size, &mut again()?, pass, log)?;
    if let Some(section) = &mut report.threads {
        section.curves = Some(curves);
        section.sharing = Some(sharing);
    }
    report.figures = catalog::list(report);
    Ok(())
}

/// Each thread's exact LRU curve at the sizes of the report's exact curve.
fn curves<H: Hooks>(
    report: &Report,
    trace: &mut Trace,
    pass: &mut Pass<H>,
) -> Result<ThreadCurves, H::Error> {
    let opts = MrcOptions {
        sizes: report
            .mrc
            .first()
            .map(|m| m.points.iter().map(|p| p.size_bytes).collect())
            .unwrap_or_default(),
        options: Options {
            line_size: crate::LineSize::new(report.line_size)?,
            ..Options::default()
        },
        ..MrcOptions::default()
    };
    let runs = mrc_per_thread(trace, &opts, pass)?;
    Ok(ThreadCurves::new(&runs, &opts)?)
}

/// `sharing`'s analysis with its default machine, at the report's line size (the lines with
/// coherence misses).
fn shared<H: Hooks>(
    line_size: u64,
    trace: &mut Trace,
    pass: &mut Pass<H>,
    log: Option<&Path>,
) -> Result<Sharing, H::Error> {
    let d = sharing::Options::default();
    let options = sharing::Options {
        l1: Geometry::new(d.l1.size_bytes(), d.l1.assoc(), line_size)?,
        ll: Geometry::new(d.ll.size_bytes(), d.ll.assoc(), line_size)?,
        ..d
    };
    sharing::analyse(trace, pass, options, log)
}
