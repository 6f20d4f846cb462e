//! `report --sampled TRACE`'s attribution from the per-structure line sample
//! ([`Attribution::per_structure`], docs/accuracy/sampled.md) instead of the uniform one.
//!
//! The estimator needs every reference of the lines it keeps at rate 1, which the sampled
//! stage (`trace/sampled.rs`) does not pass on: a recorded trace is read a second time, on the
//! full stream, beside the sampled pass (the caller's thread, the other core), with the same
//! rate and seed as the stage. Its counts are the full cache's: nothing is scaled after.
//! A live run (`--sampled -- PROGRAM`) keeps the uniform estimate ([`uniform_note`]): the
//! tool's filter would need the structures' ranges.

use super::super::Report;
use super::super::summaries::attribution_summary;
use crate::Result;
use crate::attribution::{Attribution, EventSource, Options, StructureBudget};
use crate::pass::{Analyses, Pass};
use crate::report::model;
use crate::trace::Trace;

/// The figure whose caption names the attribution's method.
const FIGURE: &str = "evicted-by";

/// The per-structure estimate of a trace's attribution, for [`PerStructure::apply`].
#[derive(Clone, Debug)]
pub struct PerStructure {
    summary: model::Attribution,
    full_lines: u64,
    rate: f64,
    budget: StructureBudget,
}

/// Measures `trace` (not read yet, the full stream) with `events`, its event log, by the
/// per-structure line sample at `rate` within `budget`, hashed with `seed`: what `attribute
/// --per-structure RATE --per-structure-lines PER,TOTAL --seed SEED TRACE` counts.
pub fn measure(
    trace: &mut Trace,
    events: EventSource<'static>,
    rate: f64,
    budget: StructureBudget,
    seed: u64,
) -> Result<PerStructure> {
    let options = Options {
        cost: None,
        mrc: false,
        loads: false,
        utilization: false,
        seed,
        ..Options::default()
    };
    let mut a = Attribution::new(options, Some(events))?.per_structure(rate, budget, seed)?;
    Pass::new(1).run(trace, Analyses(&mut [&mut a]))?;
    let full_lines = a.full_rate_lines().unwrap_or(0);
    Ok(PerStructure {
        summary: attribution_summary(&a.finish()?),
        full_lines,
        rate,
        budget,
    })
}

impl PerStructure {
    /// How the counts were estimated, as the report's note says it.
    pub fn note(&self) -> String {
        format!(
            "the attribution: a per-structure line sample of the full trace, {} lines at rate 1 \
             (at most {} per structure, {} in all), the others at {}, counts the full cache's \
             (docs/accuracy/sampled.md)",
            self.full_lines, self.budget.per_bucket, self.budget.total, self.rate
        )
    }

    /// The attribution summary.
    pub fn summary(&self) -> &model::Attribution {
        &self.summary
    }

    /// `report`'s attribution section replaced by this estimate, its note and the evicted-by
    /// figure's caption naming the method.
    pub fn apply(self, report: &mut Report) {
        let note = self.note();
        report.attribution = Some(self.summary);
        push_note(report, note);
    }
}

/// The note of a sampled report whose attribution is the uniform line sample's (a live run).
pub fn uniform_note(report: &mut Report) {
    if report.attribution.is_none() {
        return;
    }
    let rate = report.sampled.as_ref().map_or(1.0, |s| s.final_rate);
    push_note(
        report,
        format!(
            "the attribution: the uniform line sample at rate {rate}, counts scaled by 1/rate \
             (small structures are estimated closer by the per-structure sample of a recorded \
             trace, `report --sampled --per-structure TRACE`, which needs every reference of \
             their lines; docs/accuracy/sampled.md)"
        ),
    );
}

fn push_note(report: &mut Report, note: String) {
    if let Some(f) = report.figures.iter_mut().find(|f| f.id == FIGURE) {
        f.caption.push_str(&format!(" Note: {note}."));
    }
    report.notes.push(note);
}
