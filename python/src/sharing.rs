//! `sharing` for Python: the lines threads share, true or false, with their coherence misses
//! in a multi-core model (`cachescope sharing --json`, the library's [`cachescope::sharing`]).

use std::path::PathBuf;

use cachescope::Result;
use cachescope::attribution::events::sidecar_path;
use cachescope::pass::Pass;
use cachescope::sharing::{self, Options};
use cachescope::sim::Geometry;

use crate::passes::{Progress, pretty};
use crate::source::Spec;

/// The JSON of `cachescope sharing --L1 l1 --LL ll [--cores N] --interleave I [--quantum Q]
/// [--all] [--events F] --json`.
#[allow(clippy::too_many_arguments)]
pub fn sharing(
    spec: &Spec,
    l1: &str,
    ll: &str,
    cores: Option<u32>,
    interleave: &str,
    quantum: Option<u64>,
    all: bool,
    events: Option<PathBuf>,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let schedule = crate::cores::schedule(interleave, quantum)?;
    let options = Options {
        l1: Geometry::parse(l1)?,
        ll: Geometry::parse(ll)?,
        cores,
        schedule,
        all,
    };
    // The event log: `events`, else TRACE.events beside a trace file.
    let log = events.or_else(|| Some(sidecar_path(spec.file()?)).filter(|p| p.exists()));
    let mut trace = spec.open(options.l1.line_size())?;
    let mut pass = Pass::new(threads).with_progress(progress);
    let found = sharing::analyse(&mut trace, &mut pass, options, log.as_deref())?;
    Ok(pretty(&found))
}
