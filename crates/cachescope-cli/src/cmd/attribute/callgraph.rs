//! `attribute --callgraph` (the call graph instead of the attribution's tables) and
//! `--callgrind-out FILE` (Callgrind's format, one file per thread with `--per-thread`):
//! each function's costs, self and inclusive of its callees, from a recording's call events
//! (docs/callgraph.md).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use cachescope::ThreadId;
use cachescope::attribution::EventSource;
use cachescope::attribution::callgraph::{self, CallGraph, CallGraphReport, Costs};
use cachescope::attribution::events::EventReader;
use cachescope::pass::Analyses;
use cachescope::spatial::SpatialOptions;
use cachescope::trace::Trace;
use cachescope::units::thousands;

use super::super::drive;
use super::AttributeArgs;
use super::table::cut;
use crate::input::LiveEvents;
use crate::output::{self, Format, Output};

/// The call graph's options from the flags.
pub(super) fn options(args: &AttributeArgs, thread: Option<ThreadId>) -> callgraph::Options {
    callgraph::Options {
        caches: [args.i1, args.d1, args.ll],
        per_thread: args.per_thread || thread.is_some(),
        exe: args.exe.clone(),
        only_with_calls: false,
        sampled: None,
    }
}

/// A call graph reading `log` (the event log, for structures and names).
pub(super) fn analysis(
    args: &AttributeArgs,
    thread: Option<ThreadId>,
    log: Option<EventReader<std::fs::File>>,
) -> Result<CallGraph> {
    let events = log.map(|l| Box::new(l) as EventSource<'static>);
    Ok(CallGraph::new(options(args, thread), events)?)
}

/// The events a pass reads: the event log, or a program's as the tool sends them.
pub(super) fn events(
    log: Option<EventReader<std::fs::File>>,
    live: Option<LiveEvents>,
) -> Option<EventSource<'static>> {
    match (log, live) {
        (Some(log), _) => Some(Box::new(log)),
        // What the channel holds so far: every event due before a record is sent before it.
        (None, Some(live)) => {
            let rx = live.rx;
            Some(Box::new(std::iter::from_fn(move || {
                rx.try_recv().ok().map(Ok)
            })))
        }
        (None, None) => None,
    }
}

/// The line filter a program runs under for `--callgraph --sampled`: at the fixed rate the
/// misses are scaled by (docs/callgraph.md), as [`run`] samples a recorded trace. Without
/// `--callgraph`, no call events (`--no-calls`): nothing reads them.
pub(super) fn live_spatial(args: &mut AttributeArgs, s: SpatialOptions) -> SpatialOptions {
    args.input.live.no_calls |= !args.callgraph;
    if args.callgraph {
        SpatialOptions {
            max_lines: None,
            ..s
        }
    } else {
        s
    }
}

/// Writes `--callgrind-out`: FILE, or with `--per-thread` FILE-NN per thread (Callgrind's
/// `--separate-threads` naming), each under a temporary name until complete.
pub(super) fn write_files(
    report: &CallGraphReport,
    path: &Path,
    cmd: &str,
    per_thread: bool,
) -> Result<()> {
    let files: Vec<(std::path::PathBuf, Option<u32>)> = if per_thread {
        report
            .threads
            .iter()
            .map(|t| {
                let mut p = path.as_os_str().to_owned();
                p.push(format!("-{:02}", t.thread));
                (p.into(), Some(t.thread))
            })
            .collect()
    } else {
        vec![(path.to_path_buf(), None)]
    };
    for (p, thread) in files {
        use std::io::Write as _;
        let (pending, mut file) = output::Pending::create(&p).context("--callgrind-out")?;
        file.write_all(callgraph::render(report, cmd, thread).as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", p.display()))?;
        drop(file);
        pending.commit()?;
    }
    Ok(())
}

/// `--callgraph`: the pass, the files, the output.
pub(super) fn run(
    trace: &mut Trace,
    args: &AttributeArgs,
    events: Option<EventSource<'static>>,
    cmd: &str,
    (thread, spatial): (Option<ThreadId>, Option<SpatialOptions>),
) -> Result<()> {
    let mut graph = match spatial {
        // --sampled: the sampled lines in miniatures of D1 and LL, the misses scaled.
        // A fixed rate: the misses are scaled by it (no --sample-lines cap lowering it).
        Some(s) => {
            trace.sampled(
                SpatialOptions {
                    max_lines: None,
                    ..s
                },
                None,
            )?;
            let mut options = options(args, thread);
            let caches = [args.i1, args.d1, args.ll];
            options.sampled = Some(cachescope::report::callgraph_miniatures(caches, s.rate)?);
            CallGraph::new(options, events)?
        }
        None => CallGraph::new(options(args, thread), events)?,
    };
    drive(trace, Analyses(&mut [&mut graph]), &args.run)?;
    let mut report = graph.finish().context("the call graph")?;
    if let Some(path) = &args.callgrind_out {
        write_files(&report, path, cmd, args.per_thread)?;
    }
    if let Some(t) = thread {
        let Some(g) = report.threads.iter().find(|g| g.thread == t).cloned() else {
            anyhow::bail!(
                "thread {t} made no reference (threads: {})",
                thread_list(&report)
            );
        };
        (report.totals, report.functions, report.calls) = (g.totals, g.functions, g.calls);
        report.threads.clear();
    }
    let out = Graph {
        report,
        top: args.top,
    };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

fn thread_list(r: &CallGraphReport) -> String {
    r.threads
        .iter()
        .map(|t| t.thread.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The call graph and how many functions the terminal shows.
struct Graph {
    report: CallGraphReport,
    top: usize,
}

impl Output for Graph {
    fn json(&self) -> Result<String> {
        output::json(&self.report)
    }

    /// One row per function (the JSON's `functions`).
    fn csv(&self) -> Result<String> {
        let v = serde_json::to_value(&self.report)?;
        Ok(output::csv_records(
            v["functions"].as_array().map_or(&[][..], Vec::as_slice),
        ))
    }

    fn table(&self) -> String {
        render(&self.report, self.top)
    }
}

fn d1(c: &Costs) -> u64 {
    c.d1_misses()
}

/// The terminal table: the functions with the most inclusive D1 misses, their calls.
fn render(r: &CallGraphReport, top: usize) -> String {
    let mut o = String::new();
    let t = &r.totals;
    let _ = writeln!(
        o,
        "I1 {} · D1 {} · LL {} (Cachegrind's model) · {} instructions · {} data refs · {} D1 misses · {} LL data misses",
        r.caches[0],
        r.caches[1],
        r.caches[2],
        thousands(t.get("Ir").unwrap_or(0)),
        thousands(t.get("Dr").unwrap_or(0) + t.get("Dw").unwrap_or(0)),
        thousands(d1(t)),
        thousands(t.ll_data_misses()),
    );
    if let Some(rate) = r.sampled {
        let _ = writeln!(
            o,
            "sampled at rate {rate}: misses are estimates (×{:.0}); Ir, Dr, Dw and calls exact",
            1.0 / rate
        );
    }
    let _ = writeln!(
        o,
        "\n{:<34} {:>9} {:>12} {:>12} {:>12} {:>12}  structures missed on (inclusive D1 misses)",
        "function", "calls", "D1 miss self", "D1 miss incl", "LL miss incl", "Ir incl"
    );
    for f in r.functions.iter().take(top) {
        let incl = f.inclusive.as_ref();
        let cell = |v: Option<u64>| v.map_or("-".to_string(), thousands);
        let structures: Vec<String> = f
            .structures
            .iter()
            .take(3)
            .map(|s| format!("{} {}", cut(&s.structure, 28), thousands(s.d1_misses)))
            .collect();
        let _ = writeln!(
            o,
            "{:<34} {:>9} {:>12} {:>12} {:>12} {:>12}  {}",
            cut(&f.function, 34),
            thousands(f.calls),
            thousands(d1(&f.self_cost)),
            cell(incl.map(d1)),
            cell(incl.map(Costs::ll_data_misses)),
            cell(incl.and_then(|c| c.get("Ir"))),
            structures.join(", ")
        );
    }
    if !r.calls.is_empty() {
        let _ = writeln!(
            o,
            "\n{:<28} {:<28} {:<24} {:>9} {:>12}",
            "caller", "callee", "site", "calls", "D1 miss incl"
        );
        let mut calls: Vec<_> = r.calls.iter().collect();
        calls.sort_by(|a, b| {
            d1(&b.inclusive)
                .cmp(&d1(&a.inclusive))
                .then(b.calls.cmp(&a.calls))
        });
        for c in calls.into_iter().take(top) {
            let _ = writeln!(
                o,
                "{:<28} {:<28} {:<24} {:>9} {:>12}",
                cut(&c.caller, 28),
                cut(&c.callee, 28),
                cut(c.site.as_deref().unwrap_or("?"), 24),
                thousands(c.calls),
                thousands(d1(&c.inclusive))
            );
        }
    }
    for n in &r.notes {
        let _ = writeln!(o, "\nnote: {n}");
    }
    o
}
