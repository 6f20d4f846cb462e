//! The threads section of a sampled report: the trace read again as the same sampled stream,
//! each thread's SHARDS curve (its own references' stack distances among the sampled lines,
//! over its own references in the spans), and the sharing table of the sampled lines. A
//! sampled line is sampled for every thread, so what the table says of it (who reads and
//! writes which bytes, true or false sharing, the code that writes it) is exact; lines outside
//! the sample are not in it (docs/sampled.md).

use std::path::Path;

use crate::analysis::PerThread;
use crate::error::Result;
use crate::method::{ThreadCurve, ThreadCurves};
use crate::pass::{Analyses, Hooks, Pass};
use crate::reuse::{Options, ShardsAnalysis};
use crate::sharing;
use crate::sim::Geometry;
use crate::spatial::SpatialOptions;
use crate::trace::Trace;

use super::super::{Report, catalog};

/// Fills a sampled `report`'s threads section from `again`, the trace opened anew, read as the
/// stream `spatial` samples; as [`crate::report::threads::complete`] otherwise.
pub fn complete<H: Hooks>(
    report: &mut Report,
    again: Option<&mut dyn FnMut() -> std::result::Result<Trace, H::Error>>,
    pass: &mut Pass<H>,
    log: Option<&Path>,
    spatial: SpatialOptions,
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
    let options = Options {
        line_size: crate::LineSize::new(report.line_size)?,
        ..Options::default()
    };
    let sizes: Vec<u64> = report
        .mrc
        .first()
        .map(|m| m.points.iter().map(|p| p.size_bytes).collect())
        .unwrap_or_default();
    let mut trace = again()?;
    trace.sampled(spatial, None)?;
    let mut per = PerThread::new(move |_| ShardsAnalysis::new(options));
    pass.run(&mut trace, Analyses(&mut [&mut per]))?;
    let mut sampled = Vec::new();
    let curves = ThreadCurves {
        method: "shards".into(),
        policy: "lru".into(),
        line_size: report.line_size,
        threads: per
            .into_parts()
            .into_iter()
            .map(|(thread, a)| {
                let d = a.finish();
                sampled.push((thread, d.sampled));
                ThreadCurve {
                    thread,
                    refs: d.refs,
                    points: d.mrc(&sizes).points,
                }
            })
            .collect(),
    };
    let d = sharing::Options::default();
    let sharing_options = sharing::Options {
        l1: Geometry::new(d.l1.size_bytes(), d.l1.assoc(), report.line_size)?,
        ll: Geometry::new(d.ll.size_bytes(), d.ll.assoc(), report.line_size)?,
        ..d
    };
    let mut trace = again()?;
    trace.sampled(spatial, None)?;
    let sharing = sharing::analyse(&mut trace, pass, sharing_options, log)?;
    if let Some(section) = &mut report.threads {
        section.curves = Some(curves);
        section.sharing = Some(sharing);
    }
    super::warnings::warn_threads(report, &sampled);
    let rate = report
        .sampled
        .as_ref()
        .map_or(spatial.rate, |s| s.final_rate);
    super::warnings::warn_sharing(report, rate);
    report.figures = catalog::list(report);
    super::expected::caption(report);
    Ok(())
}
