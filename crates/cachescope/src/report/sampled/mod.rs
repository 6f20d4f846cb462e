//! `report --sampled`: every section of the report from a sampled stream ([`crate::spatial`],
//! docs/sampled.md), with `report.json`'s schema, so the sampled and the exact report of one
//! run compare field by field.
//!
//! ```text
//! Trace read as a sampled stream (Trace::sampled, or the Valgrind tool's sampled stream)
//!   ─▶ SampledCollector (one pass over the sampled references: SHARDS stack distances, the
//!      footprint at full-stream positions, LRU/FIFO/SRRIP/DRRIP and random miniatures inside
//!      the sample, OPT on the sampled lines, phases cut at full-stream instructions, the
//!      attribution at full-stream positions, the access counts from the spans)
//!   ─▶ SampledCollector::finish (scaled by the rate; StatCache and StatStack from the reuse
//!      profile sampled beside the filter) ─▶ Report, with `sampled` saying how
//! ```
//!
//! How each section scales, and which sizes a sample cannot serve (a miniature needs at least
//! one set of a cache's sets, `sets · R ≥ 1`), is in docs/sampled.md; the errors measured
//! against exact reports are in docs/accuracy/sampled.md, and each figure's expected error
//! comes from there ([`expected`]).

mod assemble;
mod collector;
mod curves;
pub mod expected;
pub mod per_structure;
mod phases;
mod scale;
mod thread_reuse;
pub mod threads;
mod warnings;

pub use collector::{SampledCollector, reuse_options};
pub use curves::{MIN_SAMPLED_LINES, shards_serves};
pub use scale::miniature_rate;
pub use scale::scaled_geometry as miniature;

use crate::Result;
use crate::spatial::SpatialOptions;
use crate::trace::Trace;

use super::{CollectOptions, Report};

/// Reads `trace` as a sampled stream with `spatial` (StatCache's sampler on the full stream
/// beside it) and returns its sampled report. The trace must not be read yet.
pub fn collect(
    trace: &mut Trace,
    options: CollectOptions,
    spatial: SpatialOptions,
    threads: usize,
) -> Result<Report> {
    trace.sampled(spatial, Some(collector::reuse_options(&options)))?;
    if !options.sampled_calls {
        // No sampled call graph: the calls need not pass (CallsSeen reads the first).
        trace.sampled_first_call_only();
    }
    let mut collector = SampledCollector::new(options, spatial)?.with_threads(threads);
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
