//! `advise` and `whatif` in one call each, on a trace file with its event log and a
//! [`Machine`]: for library callers (the report's "What to change" section, Python's
//! `advise()` and `whatif()`). The command line runs the same steps with `simulate`'s flags.

use std::path::Path;

use super::machine::{Machine, Simulated};
use super::{Advice, Candidate, Collect, NO_LOG, Options, candidates, rank};
use crate::attribution::EventSource;
use crate::attribution::events::EventReader;
use crate::error::Result;
use crate::layout::{self, Applied, Change, Relayout};
use crate::pass::{Analyses, Hooks, Pass};
use crate::trace::{OpenOptions, Trace};

/// A what-if: the simulations of the trace as it is and changed.
#[derive(Clone, Debug)]
pub struct WhatIf {
    /// The changes, as their SPECs.
    pub changes: Vec<String>,
    /// What each did.
    pub applied: Vec<Applied>,
    /// The trace as it is.
    pub original: Simulated,
    /// The trace changed.
    pub changed: Simulated,
}

impl WhatIf {
    /// `whatif --json`'s document.
    pub fn to_json(&self) -> serde_json::Value {
        layout::whatif_json(
            &self.changes,
            &self.applied,
            self.original.to_json(),
            self.changed.to_json(),
            &self.original.misses(),
            &self.changed.misses(),
        )
    }
}

fn events(log: Option<&Path>) -> Result<Option<EventSource<'static>>> {
    Ok(match log {
        Some(p) => Some(Box::new(EventReader::open(p)?) as EventSource<'static>),
        None => None,
    })
}

/// The trace at `path` read through `changes` (none: as it is).
fn open(
    path: &Path,
    log: Option<&Path>,
    exe: Option<&Path>,
    changes: &[Change],
    line: u64,
) -> Result<(Trace, Option<layout::Outcome>)> {
    let mut trace = crate::trace::open(path, &OpenOptions::default())?;
    if changes.is_empty() {
        return Ok((trace, None));
    }
    let relayout = Relayout::new(changes.to_vec(), events(log)?, exe, line)?;
    let outcome = layout::relay(&mut trace, relayout);
    Ok((trace, Some(outcome)))
}

/// `machine`'s simulation of the trace at `path` as it is and with `changes` (its event log
/// at `log`), and with a stride prefetcher `prefetch` strides ahead on the changed side.
pub fn whatif<H: Hooks>(
    path: &Path,
    log: Option<&Path>,
    exe: Option<&Path>,
    machine: &Machine,
    changes: &[Change],
    prefetch: Option<u32>,
    pass: &mut Pass<H>,
) -> Result<WhatIf, H::Error> {
    let line = machine.levels().0.line_size().bytes();
    let (mut trace, _) = open(path, log, exe, &[], line)?;
    let original = machine.run(&mut trace, pass, None)?;
    let (mut trace, outcome) = open(path, log, exe, changes, line)?;
    let changed = machine.run(&mut trace, pass, prefetch)?;
    let applied = outcome
        .and_then(|o| o.lock().expect("not poisoned").take())
        .unwrap_or_default();
    Ok(WhatIf {
        changes: changes.iter().map(ToString::to_string).collect(),
        applied,
        original,
        changed,
    })
}

/// `advise`'s findings for the trace at `path` (its event log at `log`) on `machine`; `name`
/// is how the findings' `whatif` commands name the trace.
pub fn advise<H: Hooks>(
    path: &Path,
    log: Option<&Path>,
    exe: Option<&Path>,
    machine: &Machine,
    name: &str,
    pass: &mut Pass<H>,
) -> Result<Advice, H::Error> {
    let (first, next, last) = machine.levels();
    let options = Options {
        l1: first,
        next,
        sharing: machine.cores().map(|cores| crate::sharing::Options {
            l1: first,
            ll: last,
            cores: Some(cores),
            // Every shared line: a line without coherence misses may be latent false sharing.
            all: true,
            ..crate::sharing::Options::default()
        }),
    };
    let line = first.line_size().bytes();
    let (mut trace, _) = open(path, log, exe, &[], line)?;
    let (candidates, notes) =
        evidence(&mut trace, &options, log, exe, |t, job, _| pass.run(t, job))?;
    let (mut trace, _) = open(path, log, exe, &[], line)?;
    let before = machine.run(&mut trace, pass, None)?.misses();
    let mut predicted = Vec::new();
    for c in &candidates {
        if c.estimate.is_some() {
            predicted.push(None);
            continue;
        }
        let (mut trace, _) = open(path, log, exe, &c.changes, line)?;
        let distance = c.prefetch.as_ref().map(|p| p.1);
        predicted.push(Some(machine.run(&mut trace, pass, distance)?.misses()));
    }
    let command = format!("cachescope whatif {name}{}", machine.flags());
    Ok(Advice {
        findings: rank(candidates, &before, predicted, &command),
        notes,
    })
}

/// Steps 1 and 2 of the module doc on an opened trace: the evidence pass, with cores the
/// sharing model's second pass over the threads dealt to them, then the candidates and the
/// notes that limit them. `drive` runs a job over a trace (the caller's pass, with its hooks;
/// its flag is true for a second pass over the same run; it gives the references read).
pub fn evidence<E: From<crate::Error>>(
    trace: &mut Trace,
    options: &Options,
    log: Option<&Path>,
    exe: Option<&Path>,
    mut drive: impl FnMut(&mut Trace, Analyses<'_, '_>, bool) -> Result<u64, E>,
) -> Result<(Vec<Candidate>, Vec<String>), E> {
    let mut collect = Collect::new(options, events(log)?, exe)?;
    drive(trace, Analyses(&mut collect.analyses()), false)?;
    let (mut evidence, finder) = collect.finish(log, exe)?;
    if let Some(finder) = finder {
        let mut m = finder.machine(trace)?;
        if let Some(dealt) = &mut m.trace {
            drive(dealt, Analyses(&mut []), true)?;
        }
        let mut sharing = m.finish();
        sharing.name_from(trace, log, options.l1.line_size().bytes())?;
        evidence.sharing = Some(sharing);
    }
    let (candidates, mut notes) = candidates(&evidence, options);
    if log.is_none() {
        notes.push(NO_LOG.into());
    }
    Ok((candidates, notes))
}
