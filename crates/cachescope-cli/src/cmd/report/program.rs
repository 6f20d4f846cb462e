//! `report -- PROGRAM`: the report's pass runs while the program runs under cachescope's
//! Valgrind tool, fed from the tool's stream as the other live commands are, with the
//! attribution reading the program's allocation events from the same stream. The trace and
//! its event log are written as they pass, for the threads section's second read: into
//! `--save`'s file, kept, or into a temporary directory removed at the end (a sampled run's
//! copy of the tool's stream by a thread of its own, and a short one only if the program
//! had a second thread: `cachescope::record::StreamCopy`). Under lackey
//! (asked for, or where the tool cannot run) the program is recorded first and the trace
//! reported on after, since lackey's events come from a file complete only at the end.

use std::ffi::OsStr;
use std::path::Path;

use anyhow::Result;
use cachescope::attribution::EventSource;
use cachescope::attribution::events::{EVENTS_VERSION, EventReader, Header, sidecar_path};
use cachescope::record::ProgramOutput;
use cachescope::report::sampled::reuse_options;
use cachescope::spatial::SpatialOptions;
use cachescope_report::collect::CollectOptions;

use super::live_log::LiveLog;
use super::{Again, Named, ReportArgs, analyse, complete, print_summary};
use crate::args::Backend;
use crate::input;
use crate::output::CreatedDir;
use crate::program::{Capture, Kept};

/// Reports on `args.program` as it runs (or, under lackey, once recorded) into `args.output`.
/// A DIR this run creates is removed again if it fails or is interrupted.
pub fn report(
    program: &OsStr,
    args: &ReportArgs,
    options: CollectOptions,
    sampled: Option<SpatialOptions>,
) -> Result<()> {
    if sampled.is_some() && args.report.advise {
        // The advice reads a whole trace again; the sampled run keeps only its sample.
        anyhow::bail!(
            "--advise needs the whole trace: drop --sampled, or record the program and report \
             on its trace with --advise"
        );
    }
    let capture = Capture::new(&args.live, ProgramOutput::Stderr);
    // Quiet here: the path taken asks again and says, once, why lackey runs.
    let backend = capture.backend(true)?;
    let created = CreatedDir::create(&args.output)?;
    let name = Path::new(program)
        .file_name()
        .map_or_else(|| "program".into(), |n| n.to_string_lossy().into_owned());
    // The second read's copy: --save's file, or one in a directory removed on the way out
    // (a forced exit included: it is a directory this run created).
    let (temporary, trace_path) = match &args.live.save {
        Some(path) => (None, path.clone()),
        None => {
            let dir =
                std::env::temp_dir().join(format!("cachescope-report-{}", std::process::id()));
            let temporary = CreatedDir::create(&dir)?;
            (Some(temporary), dir.join(format!("{name}.cst")))
        }
    };
    let (report, kept_log, kept) = match backend {
        Backend::Tool => live(args, &capture, &trace_path, options, sampled)?,
        Backend::Lackey => {
            let (report, log) = recorded(args, &capture, &trace_path, options, sampled)?;
            (report, log, Kept::Trace)
        }
    };
    let again = Some(Again {
        trace: &trace_path,
        read: &args.read,
        stream: sampled.filter(|_| kept == Kept::ToolStream),
        advise: args.report.advise,
        per_structure: false,
    });
    let (report, written) = complete(report, again, &args.output, &args.run)?;
    created.keep();
    if args.live.save.is_some() && !args.run.quiet {
        eprintln!(
            "cachescope: the recorded trace is kept in {}{}",
            trace_path.display(),
            if kept_log {
                " (with its event log beside it)"
            } else {
                ""
            }
        );
    }
    drop(temporary);
    print_summary(&report, &written, args.json, args.csv)
}

/// The pass over the running program's stream, its trace written to `trace_path` and its
/// events (unless `--no-events`) beside it as they pass. Under `--sampled`, the tool samples
/// (`crate::program::start_sampled`), and what is kept in `trace_path` may be its sampled
/// stream. Returns the report before its threads section, whether an event log was written,
/// and what `trace_path` holds.
fn live(
    args: &ReportArgs,
    capture: &Capture,
    trace_path: &Path,
    options: CollectOptions,
    sampled: Option<SpatialOptions>,
) -> Result<(cachescope_report::Report, bool, Kept)> {
    let quiet = args.run.quiet;
    // Call events in the sampled stream only when asked for (`--sampled-calls`: they cost).
    let mut sampled_live = args.live.clone();
    sampled_live.no_calls |= !args.sampled_calls;
    let (mut started, kept, copy) = match sampled {
        Some(spatial) => crate::program::start_sampled(
            &args.program,
            &sampled_live,
            (spatial, Some(reuse_options(&options))),
            Some(trace_path),
            capture.events,
            quiet,
        )?,
        None => {
            let keep = Some(trace_path.to_owned());
            let started = crate::program::start(
                &args.program,
                &args.live,
                keep,
                capture.events,
                true,
                quiet,
            )?;
            (started, Kept::Trace, None)
        }
    };
    let log = match started.events.take() {
        Some(rx) => {
            let header = Header {
                cachescope_events: EVENTS_VERSION,
                program: started.description.clone(),
                run: started.run_id.clone(),
            };
            Some(LiveLog::create(&sidecar_path(trace_path), &header, rx)?)
        }
        None => None,
    };
    let events = log.as_ref().map(LiveLog::source);
    // The report names the program, not the file it is recorded into.
    let named = Named {
        source: Some(started.description.clone()),
        program: Some(started.description.clone()),
    };
    let report = analyse(
        &mut started.trace,
        options,
        sampled,
        events,
        named,
        &args.run,
    )?;
    // The tool's stream's copy is read again only for the threads section.
    if let Some(copy) = copy {
        copy.finish(report.threads.is_some())?;
    }
    let kept_log = log.map(LiveLog::finish).transpose()?.is_some();
    Ok((report, kept_log, kept))
}

/// Records the program into `trace_path` with its event log beside it (`cachescope
/// record`), then reports on that trace: lackey's way.
fn recorded(
    args: &ReportArgs,
    capture: &Capture,
    trace_path: &Path,
    options: CollectOptions,
    sampled: Option<SpatialOptions>,
) -> Result<(cachescope_report::Report, bool)> {
    let recorded = crate::cmd::record::record(
        &args.program,
        trace_path,
        cachescope::trace::Format::Native,
        &args.run,
        false,
        capture,
        args.live.save.is_some(),
    )?;
    let events = match &recorded.events {
        Some(log) => Some(Box::new(EventReader::open(log)?) as EventSource<'static>),
        None => None,
    };
    let mut trace = input::open_path(trace_path, &args.read)?;
    let named = Named {
        source: Some(recorded.summary.source.clone()),
        program: Some(recorded.summary.source.clone()),
    };
    let report = analyse(&mut trace, options, sampled, events, named, &args.run)?;
    Ok((report, recorded.events.is_some()))
}
