//! `advise` and `whatif` for Python: the library's one-call functions (`cachescope::advice`)
//! on a recorded trace file and its event log, on the machine the command line's flags give
//! (`advise TRACE --json`, `whatif TRACE --change SPEC… --json`).

use std::path::PathBuf;

use cachescope::advice::{self, Machine};
use cachescope::attribution::events::sidecar_path;
use cachescope::layout::Change;
use cachescope::pass::Pass;
use cachescope::sim::Geometry;
use cachescope::{Error, Result};

use crate::passes::{Progress, pretty};
use crate::source::Spec;

/// The machine: independent `caches`, `cores` cores (each a 32 KiB L1 over a shared 8 MiB
/// LL), or `advise`'s default hierarchy.
fn machine(caches: &[String], cores: Option<u32>) -> Result<Machine> {
    match (caches.is_empty(), cores) {
        (true, None) => Ok(Machine::default_single()),
        (true, Some(c)) => Ok(Machine::default_cores(c)),
        (false, None) => Ok(Machine::Caches(
            caches
                .iter()
                .map(|c| Geometry::parse(c))
                .collect::<Result<_>>()?,
        )),
        (false, Some(_)) => Err(Error::InvalidParameter {
            name: "cores",
            message:
                "give caches or cores (each core's 32 KiB L1 over a shared 8 MiB LL), not both"
                    .into(),
        }),
    }
}

/// The trace file and its event log (`events`, else TRACE.events beside it).
fn file(spec: &Spec, events: Option<PathBuf>) -> Result<(PathBuf, Option<PathBuf>)> {
    let path = match spec {
        Spec::File { path, .. } => path.clone(),
        _ => {
            return Err(Error::InvalidParameter {
                name: "source",
                message: "advise and whatif need a recorded trace file and its event log, not a \
                          workload or one thread of a source"
                    .into(),
            });
        }
    };
    let log = events.or_else(|| Some(sidecar_path(&path)).filter(|p| p.exists()));
    Ok((path, log))
}

/// `cachescope whatif TRACE --change SPEC… [--cache …|--cores N] --json`.
#[allow(clippy::too_many_arguments)]
pub fn whatif(
    spec: &Spec,
    changes: &[String],
    caches: &[String],
    cores: Option<u32>,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let changes = changes
        .iter()
        .map(|c| c.parse::<Change>())
        .collect::<Result<Vec<_>>>()?;
    if changes.is_empty() {
        return Err(Error::InvalidParameter {
            name: "changes",
            message: "nothing to change: give layout changes like \"split:parts=x\"".into(),
        });
    }
    let machine = machine(caches, cores)?;
    let (path, log) = file(spec, events)?;
    let mut pass = Pass::new(threads).with_progress(progress);
    let w = advice::whatif(
        &path,
        log.as_deref(),
        exe.as_deref(),
        &machine,
        &changes,
        None,
        &mut pass,
    )?;
    Ok(pretty(&w.to_json()))
}

/// `cachescope advise TRACE [--cache …|--cores N] --json`.
pub fn advise(
    spec: &Spec,
    caches: &[String],
    cores: Option<u32>,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let machine = machine(caches, cores)?;
    let (path, log) = file(spec, events)?;
    let mut pass = Pass::new(threads).with_progress(progress);
    let name = path.display().to_string();
    let a = advice::advise(
        &path,
        log.as_deref(),
        exe.as_deref(),
        &machine,
        &name,
        &mut pass,
    )?;
    Ok(pretty(&a))
}
