//! `callgraph` for Python: each function's costs, self and inclusive of its callees, and the
//! calls between functions (`cachescope attribute --callgraph --json`, and `--callgrind-out`).

use std::path::PathBuf;

use cachescope::attribution::EventSource;
use cachescope::attribution::callgraph::{self as graph, CallGraph, Options};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::sim::Geometry;
use cachescope::{Error, Result};
use pyo3::prelude::*;

use crate::attribution::write_atomically;
use crate::passes::{Progress, pretty};
use crate::source::Spec;
use crate::{NativeSource, err, progress};

/// The call graph's JSON (`--thread`: that thread's graph); the Callgrind file too (one per
/// thread, FILE-NN, with `per_thread`).
#[allow(clippy::too_many_arguments)]
fn run(
    spec: &Spec,
    caches: [String; 3],
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    per_thread: bool,
    callgrind_out: Option<PathBuf>,
    line_size: cachescope::LineSize,
    threads: usize,
    progress: Progress,
    sampled: Option<cachescope::spatial::SpatialOptions>,
) -> Result<String> {
    let events_path = events.or_else(|| Some(sidecar_path(spec.file()?)).filter(|p| p.exists()));
    let log: Option<EventSource<'static>> = match &events_path {
        Some(p) => Some(Box::new(EventReader::open(p)?)),
        None => None,
    };
    let (read, thread) = match spec {
        Spec::Thread { inner, thread } => (&**inner, Some(*thread)),
        _ => (spec, None),
    };
    let caches = [
        Geometry::parse(&caches[0])?,
        Geometry::parse(&caches[1])?,
        Geometry::parse(&caches[2])?,
    ];
    let opts = Options {
        caches,
        per_thread: per_thread || thread.is_some(),
        exe,
        only_with_calls: false,
        // sampled=True: the sampled lines in miniatures of D1 and LL (docs/callgraph.md).
        sampled: match &sampled {
            Some(s) => Some(cachescope::report::callgraph_miniatures(caches, s.rate)?),
            None => None,
        },
    };
    let mut graph = CallGraph::new(opts, log)?;
    let mut trace = read.open(line_size)?;
    if let Some(s) = sampled {
        trace.sampled(s, None)?;
    }
    cachescope::pass::Pass::new(threads)
        .with_progress(progress)
        .run(&mut trace, cachescope::pass::Analyses(&mut [&mut graph]))?;
    let mut report = graph.finish()?;
    if let Some(path) = &callgrind_out {
        let cmd = spec.describe();
        if per_thread {
            for t in &report.threads {
                let mut p = path.as_os_str().to_owned();
                p.push(format!("-{:02}", t.thread));
                write_atomically(
                    &PathBuf::from(p),
                    &graph::render(&report, &cmd, Some(t.thread)),
                )?;
            }
        } else {
            write_atomically(path, &graph::render(&report, &cmd, None))?;
        }
    }
    if let Some(t) = thread {
        let g = report
            .threads
            .iter()
            .find(|g| g.thread == t)
            .cloned()
            .ok_or_else(|| Error::InvalidParameter {
                name: "thread",
                message: format!("thread {t} made no reference"),
            })?;
        (report.totals, report.functions, report.calls) = (g.totals, g.functions, g.calls);
        report.threads.clear();
    }
    Ok(pretty(&report))
}

/// `cachescope attribute --callgraph --json` (and `--callgrind-out`, `--per-thread`).
#[pyfunction]
#[pyo3(signature = (source, i1, d1, ll, events, exe, per_thread, callgrind_out, line_size, threads, progress_cb = None, sampled = None))]
#[allow(clippy::too_many_arguments)]
pub fn callgraph(
    py: Python<'_>,
    source: &NativeSource,
    i1: String,
    d1: String,
    ll: String,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    per_thread: bool,
    callgrind_out: Option<PathBuf>,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
    sampled: Option<(f64, u64)>,
) -> PyResult<String> {
    let ls = crate::line_size(line_size)?;
    let spec = source.spec.clone();
    // `sampled`: the share of lines and the hash's seed; D1's lines, a fixed rate.
    let spatial = match sampled {
        Some((rate, seed)) => Some(cachescope::spatial::SpatialOptions {
            rate,
            seed,
            max_lines: None,
            line_size: Geometry::parse(&d1).map_err(err)?.line_size(),
        }),
        None => None,
    };
    py.detach(move || {
        run(
            &spec,
            [i1, d1, ll],
            events,
            exe,
            per_thread,
            callgrind_out,
            ls,
            threads.max(1),
            progress(progress_cb),
            spatial,
        )
    })
    .map_err(err)
}
