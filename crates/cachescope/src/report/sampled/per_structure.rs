//! `report --sampled TRACE`'s attribution from the per-structure line sample
//! ([`Attribution::per_structure`], docs/accuracy/sampled.md) instead of the uniform one.
//!
//! The estimator needs every reference of the lines it keeps at rate 1, which the sampled
//! stage (`trace/sampled.rs`) does not pass on: the stage hands it every batch of the full
//! stream once it has filtered it ([`Trace::sampled_beside`]), so the trace is decoded once,
//! and the estimator runs on a thread of its own beside the sampled pass, its batches handed
//! over (not copied) and sent back to be read into again. It has the same rate and seed as
//! the stage; its counts are the full cache's: nothing is scaled after. A live run
//! (`--sampled -- PROGRAM`) keeps the uniform estimate ([`uniform_note`]): the tool's filter
//! would need the structures' ranges.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::super::Report;
use super::super::summaries::attribution_summary;
use crate::Result;
use crate::analysis::Analysis;
use crate::attribution::{Attribution, EventSource, Options, StructureBudget};
use crate::batch::Batch;
use crate::report::model;
use crate::trace::Trace;

/// The figure whose caption names the attribution's method.
const FIGURE: &str = "evicted-by";

/// Full batches in flight between the stage and the estimator: the stage waits when the
/// estimator is this far behind, so they bound its memory.
const IN_FLIGHT: usize = 4;

/// The per-structure estimate of a trace's attribution, for [`PerStructure::apply`].
#[derive(Clone, Debug)]
pub struct PerStructure {
    summary: model::Attribution,
    full_lines: u64,
    rate: f64,
    budget: StructureBudget,
}

/// The estimator at work beside a sampled pass ([`Beside::start`]).
pub struct Beside {
    worker: JoinHandle<Result<PerStructure>>,
}

impl Beside {
    /// Measures the full stream of `trace` (made sampled, not read yet) with `events`, its
    /// event log, by the per-structure line sample at `rate` within `budget`, hashed with
    /// `seed`: what `attribute --per-structure RATE --per-structure-lines PER,TOTAL --seed
    /// SEED TRACE` counts. [`Beside::finish`] gives it once the pass has read `trace`.
    pub fn start(
        trace: &mut Trace,
        events: EventSource<'static>,
        rate: f64,
        budget: StructureBudget,
        seed: u64,
    ) -> Result<Beside> {
        let options = Options {
            cost: None,
            mrc: false,
            loads: false,
            utilization: false,
            seed,
            ..Options::default()
        };
        let a = Attribution::new(options, Some(events))?.per_structure(rate, budget, seed)?;
        let (to, batches) = sync_channel::<Batch>(IN_FLIGHT);
        let (back, spare) = sync_channel::<Batch>(IN_FLIGHT + 1);
        trace.sampled_beside(Box::new(move |full: &mut Batch| hand(full, &to, &spare)))?;
        let worker = std::thread::spawn(move || measure(a, &batches, &back, rate, budget));
        Ok(Beside { worker })
    }

    /// The estimate, once the pass over `trace` has ended (or stopped: then what it read).
    pub fn finish(self, trace: &mut Trace) -> Result<PerStructure> {
        trace.end_beside();
        self.worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// The stage's hook: `full` sent to the estimator, a batch it is done with (or a new one)
/// left in its place.
fn hand(full: &mut Batch, to: &SyncSender<Batch>, spare: &Receiver<Batch>) {
    let next = spare.try_recv().unwrap_or_else(|_| Batch::new());
    // The estimator gone (it panicked): its join says so.
    let _ = to.send(std::mem::replace(full, next));
}

/// The estimator's thread: each batch measured, then sent back to be read into again.
fn measure(
    mut a: Attribution<'static>,
    batches: &Receiver<Batch>,
    back: &SyncSender<Batch>,
    rate: f64,
    budget: StructureBudget,
) -> Result<PerStructure> {
    for batch in batches {
        a.observe(&batch);
        let _ = back.try_send(batch);
    }
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
