//! `cachescope record -- PROGRAM ARGS…`: a real program's references, straight into a trace,
//! with its memory map and heap events beside it in `TRACE.events`.
//!
//! Files: this one holds the arguments and [`record`], which picks the backend and starts it;
//! `lackey.rs` starts the lackey fallback; `write.rs` writes the trace and event log and reports.

use crate::args::heading;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cachescope::attribution::events::{EVENTS_VERSION, Header, sidecar_path};
use cachescope::attribution::run_id;
use cachescope::record::{ProgramOutput, Recording, ToolOptions, ToolStream};
use clap::Args;

use super::convert::print_summary;
use crate::args::{LiveArgs, RunArgs, SummaryFormat, values};
use crate::program::Capture;

mod lackey;
mod write;

pub use crate::args::Backend;
use lackey::start_lackey;
use write::{finish, write_events};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where to write the trace (`-` for stdout) [default: PROGRAM.cst in the current directory].
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "TRACE", conflicts_with = "save")]
    pub output: Option<PathBuf>,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(help_heading = heading::OUTPUT, long, default_value = "native", value_parser = values::output_format)]
    pub to: cachescope::trace::Format,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
    /// The program and its arguments, after `--`.
    #[arg(help_heading = heading::ARGUMENTS, id = "program", value_name = "PROGRAM", last = true, required = true, num_args = 1..)]
    pub command: Vec<std::ffi::OsString>,
}

pub fn run(args: RecordArgs) -> Result<()> {
    let (program, _) = args.command.split_first().expect("clap requires a program");
    let out = args
        .output
        .clone()
        .or_else(|| args.live.save.clone())
        .unwrap_or_else(|| {
            let name = std::path::Path::new(program)
                .file_name()
                .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
            PathBuf::from(format!("{name}.cst"))
        });
    // The program keeps the terminal's stdout, unless the trace goes there.
    let output = if out.as_os_str() == "-" {
        ProgramOutput::Stderr
    } else {
        ProgramOutput::Inherit
    };
    let capture = Capture::new(&args.live, output);
    let recorded = record(
        &args.command,
        &out,
        args.to,
        &args.run,
        args.summary.wanted(),
        &capture,
        true,
    )?;
    if args.summary.wanted() {
        print_summary(&recorded.summary, &args.summary, &args.run)?;
    }
    Ok(())
}

/// What [`record`] wrote.
pub struct Recorded {
    /// The trace's summary.
    pub summary: super::convert::WriteSummary,
    /// The event log beside the trace, when one was written.
    pub events: Option<PathBuf>,
}

/// Records `command` (program and arguments) as `capture` says (the tool, or lackey when asked
/// for or when the tool cannot run here) into `out` in format `to`, with its event log in
/// `out.events` when `capture.events` is on, both carrying one run id; notes on stderr unless
/// quiet. `distinct` counts the distinct lines for the summary. `kept`: `out` is the user's
/// file; otherwise a temporary one another command reads, which the notes do not name. How the
/// program ended is told to [`crate::exit::program_ended`].
pub fn record(
    command: &[std::ffi::OsString],
    out: &Path,
    to: cachescope::trace::Format,
    run: &crate::args::RunArgs,
    distinct: bool,
    capture: &Capture,
    kept: bool,
) -> Result<Recorded> {
    let (program, rest) = command.split_first().context("no program to record")?;
    let quiet = run.quiet;
    let backend = capture.backend(quiet)?;
    let events = capture.events && out.as_os_str() != "-";
    if capture.events && !events && !quiet {
        eprintln!(
            "cachescope: recording without allocation events: they are written beside the \
             trace file (TRACE.events), so give one with -o"
        );
    }
    let events_path = sidecar_path(out);
    let run_id = run_id::new();
    let (recording, stream, events_writer, recorded_with) = if backend == Backend::Tool {
        let opts = ToolOptions {
            events,
            instr: true,
            output: capture.output.clone(),
            trace_children: capture.trace_children,
            collect_at_start: capture.collect_at_start,
            toggle_collect: capture.toggle_collect.clone(),
            calls: capture.calls,
        };
        let (recording, stream, rx) = Recording::start_tool_stream(program, rest, opts)?;
        let writer = rx.map(|rx| {
            let header = Header {
                cachescope_events: EVENTS_VERSION,
                program: recording.description().to_string(),
                run: run_id.clone(),
            };
            let path = events_path.clone();
            std::thread::spawn(move || write_events(&path, &header, rx))
        });
        let with = "valgrind --tool=cachescope (cachescope's own tool)".to_string();
        (recording, Stream::Tool(Box::new(stream)), writer, with)
    } else {
        let (recording, trace, writer, with) =
            start_lackey(program, rest, events, quiet, &events_path, capture, &run_id)?;
        (recording, Stream::Trace(trace), writer, with)
    };
    let meta = vec![
        ("source".to_string(), recording.description().to_string()),
        ("source_format".into(), "lackey".into()),
        ("recorded_with".into(), recorded_with),
        (run_id::KEY.into(), run_id),
    ];
    let recorded = finish(
        recording,
        stream,
        events_writer,
        out,
        to,
        run,
        meta,
        distinct,
        backend,
        kept,
    )?;
    if recorded.summary.records == 0 && !quiet {
        eprintln!("{}", capture.nothing_recorded());
    }
    Ok(recorded)
}

/// The event log being written on its own thread: its uncommitted file and how many events.
type EventsThread = std::thread::JoinHandle<Result<(crate::output::Pending, u64)>>;

/// The references being recorded: the tool's stream, or any trace (lackey's).
enum Stream {
    Tool(Box<ToolStream>),
    Trace(cachescope::trace::Trace),
}
