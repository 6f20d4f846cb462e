//! `attribute` for Python: misses and evictions by data structure and code line
//! (`cachescope attribute --json`, and `--cachegrind-out`).

use std::path::{Path, PathBuf};

use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{Attribution, CostModel, EventSource, Options};
use cachescope::sim::Geometry;
use cachescope::{Error, LineSize, Result, Source};

use crate::passes::{Progress, pretty};
use crate::source::Spec;

/// What `attribute` takes besides the source, named as its flags.
pub struct Request {
    pub cache: String,
    pub sample: u64,
    pub events: Option<PathBuf>,
    pub exe: Option<PathBuf>,
    pub handler_lines: u64,
    pub no_cost: bool,
    pub no_mrc: bool,
    pub cachegrind_out: Option<PathBuf>,
    pub seed: u64,
    pub writebacks: bool,
    pub utilization: bool,
}

/// The attribution report's JSON; the Cachegrind-format file too when asked for.
pub fn attribute(
    spec: &Spec,
    req: &Request,
    line_size: LineSize,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    if req.sample == 0 {
        return Err(Error::InvalidParameter {
            name: "sample",
            message: "sample=N needs N ≥ 1 (1 samples every miss)".into(),
        });
    }
    // The event log: `events`, else TRACE.events beside a trace file.
    let events_path = req
        .events
        .clone()
        .or_else(|| Some(sidecar_path(spec.file()?)).filter(|p| p.exists()));
    let events: Option<EventSource<'static>> = match &events_path {
        Some(p) => Some(Box::new(EventReader::open(p)?)),
        None => None,
    };
    let opts = Options {
        geometry: Geometry::parse(&req.cache)?,
        sample_every: req.sample,
        seed: req.seed,
        cost: (!req.no_cost).then(|| CostModel {
            handler_lines: req.handler_lines,
            ..CostModel::default()
        }),
        mrc: !req.no_mrc,
        exe: req.exe.clone(),
        per_instruction: req.cachegrind_out.is_some(),
        writebacks: req.writebacks,
        utilization: req.utilization,
        ..Options::default()
    };
    let mut attribution = Attribution::new(opts, events)?;
    // One thread's references are kept by the attribution, not by a filter on the trace: the
    // event log's positions count every thread's records.
    let read = match spec {
        Spec::Thread { inner, thread } => {
            attribution = attribution.only_thread(*thread);
            inner
        }
        _ => spec,
    };
    cachescope::pass::Pass::new(threads)
        .with_progress(progress)
        .run(
            &mut read.open(line_size)?,
            cachescope::pass::Analyses(&mut [&mut attribution]),
        )?;
    let mut report = attribution.finish()?;
    if events_path.is_none() {
        report.notes.insert(
            0,
            "no event log (TRACE.events): no memory map and no allocation events".into(),
        );
    }
    if let Some(path) = &req.cachegrind_out {
        let cmd = match spec {
            Spec::Workload { workload, .. } => format!("workload {}", workload.name()),
            _ => spec.describe(),
        };
        write_atomically(
            path,
            &cachescope::attribution::cachegrind_out::render(&report, &cmd),
        )?;
    }
    Ok(pretty(&report))
}

/// Writes `text` into a temporary file beside `path`, then renames it into place.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let source = Source::File(path.to_owned());
    let io = |e| Error::io(&source, e);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
