//! The threads section of a sampled report: the trace read again as the same sampled stream,
//! each thread's SHARDS curve (its own references' stack distances among the sampled lines,
//! over its own references in the spans), while below the stage a bounded detector finds the
//! lines two or more threads write ([`crate::sharing::detect`]) and StatCache's sampler, one
//! per thread, samples each thread's reuses: each thread's curve is then `combined` as the
//! report's LRU curve is (`thread_reuse.rs`); then read whole for the sharing table of
//! the sampled lines and of those, promoted ([`crate::sharing::promote`]).
//! A sampled or promoted line is measured for every thread, so what the table says of it (who
//! reads and writes which bytes, true or false sharing, the code that writes it) is exact; the
//! curves see the sampled lines only (docs/sampled.md).

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::pass::{Hooks, Pass};
use crate::reuse::Options;
use crate::sharing;
use crate::sharing::detect::{Detector, PromoteOptions};
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
    // The detector reads the whole stream below the stage (sharing::detect), but for the
    // tool's stream of a running program, which is the sample already; beside it each
    // thread's reuse sampler, or the tool's records of them (thread_reuse.rs).
    let trace = again()?;
    let detector = Arc::new(Mutex::new(Detector::new(
        options.line_size,
        PromoteOptions::default(),
    )));
    let reuse = super::thread_reuse::sampler_options(report.sampling.seed, options.line_size);
    let read = super::thread_reuse::read(
        trace,
        pass,
        (spatial, reuse, options),
        Some(detector.clone()),
    )?;
    let (curves, shards_curves, sampled) = super::thread_reuse::curves(
        &read.shards,
        read.profiles.as_ref(),
        &sizes,
        reuse,
        report.line_size,
    )?;
    let d = sharing::Options::default();
    let sharing_options = sharing::Options {
        l1: Geometry::new(d.l1.size_bytes(), d.l1.assoc(), report.line_size)?,
        ll: Geometry::new(d.ll.size_bytes(), d.ll.assoc(), report.line_size)?,
        ..d
    };
    // The sharing table: the sampled lines plus those a second thread writes, found in the
    // whole trace (sharing::promote). The tool's stream of a running program has the sample
    // and the lines its tool promoted, from the write that promoted them on (cs_share.c).
    let mut trace = again()?;
    let live = trace.sample_itself(&spatial);
    let sharing = if live {
        let promoted = trace.pass_promoted();
        trace.sampled(spatial, None)?;
        // Every line is kept until the promoted ones are known: a line promoted live is
        // listed whatever its coherence misses (`keep_listed`).
        let all = sharing_options.all;
        let options = sharing::Options {
            all: true,
            ..sharing_options
        };
        let mut sharing = sharing::analyse(&mut trace, pass, options, log)?;
        if let Some(p) = promoted {
            let p = p.lock().unwrap_or_else(|e| e.into_inner());
            sharing::promote::mark_live(&mut sharing, &p);
        }
        if !all {
            sharing::promote::keep_listed(&mut sharing);
        }
        sharing
    } else {
        let detector = detector.lock().unwrap_or_else(|e| e.into_inner());
        let found = (spatial, &*detector);
        sharing::promote::analyse(&mut trace, pass, sharing_options, log, found)?
    };
    let promotion = sharing.promotion.clone();
    if let Some(section) = &mut report.threads {
        section.curves = Some(curves);
        section.shards_curves = shards_curves;
        section.sharing = Some(sharing);
    }
    super::warnings::warn_threads(report, &sampled);
    let rate = report
        .sampled
        .as_ref()
        .map_or(spatial.rate, |s| s.final_rate);
    super::warnings::warn_sharing(report, rate, promotion.as_ref(), live);
    report.figures = catalog::list(report);
    super::expected::caption(report);
    Ok(())
}
