//! `cachescope record -- PROGRAM ARGS…`: a real program's references, straight into a trace,
//! with its memory map and heap events beside it in `TRACE.events`.
//!
//! Files: this one holds the arguments and [`record`], which picks the backend and starts it;
//! `lackey.rs` starts the lackey fallback; `write.rs` writes the trace and event log and reports.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cachescope::attribution::events::{EVENTS_VERSION, Header, sidecar_path};
use cachescope::record::{Recording, ToolOptions, ToolStream, tool_status};
use clap::Args;

use super::convert::print_summary;
use crate::args::{RunArgs, SummaryFormat, values};

mod lackey;
mod write;

use lackey::start_lackey;
use write::{finish, write_events};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where to write the trace (`-` for stdout) [default: PROGRAM.cst in the current directory].
    #[arg(short, long, value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(long, default_value = "native", value_parser = values::output_format)]
    pub to: cachescope::trace::Format,
    /// Do not record allocation events: no TRACE.events (memory map, heap allocations and
    /// frees) beside the trace.
    #[arg(long)]
    pub no_events: bool,
    /// What records the references: `tool`, cachescope's own Valgrind tool (binary records,
    /// ~40x faster than lackey on gzip), or `lackey`, Valgrind's lackey with the LD_PRELOAD
    /// interposer (the fallback, with a printed reason, where the tool cannot run).
    #[arg(long, value_enum, default_value_t = Backend::Tool)]
    pub backend: Backend,
    /// Follow the programs the recorded one becomes with exec (a shell script's last
    /// command, say): their references continue the trace. Forked children are never
    /// recorded. Needs the tool backend.
    #[arg(long)]
    pub trace_children: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
    /// The program and its arguments, after `--`.
    #[arg(value_name = "PROGRAM", last = true, required = true, num_args = 1..)]
    pub command: Vec<std::ffi::OsString>,
}

/// What `record` runs the program under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// cachescope's own Valgrind tool.
    Tool,
    /// Valgrind's lackey (text), with the LD_PRELOAD allocation interposer.
    Lackey,
}

pub fn run(args: RecordArgs) -> Result<()> {
    let (program, _) = args.command.split_first().expect("clap requires a program");
    let out = args.output.clone().unwrap_or_else(|| {
        let name = std::path::Path::new(program)
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        PathBuf::from(format!("{name}.cst"))
    });
    let recorded = record(
        &args.command,
        &out,
        args.to,
        &args.run,
        !args.no_events,
        args.summary.wanted(),
        Capture {
            backend: args.backend,
            trace_children: args.trace_children,
            stdout_to_stderr: false,
        },
    )?;
    if args.summary.wanted() {
        print_summary(&recorded.summary, &args.summary, &args.run)?;
    }
    if !recorded.status.success() {
        bail!(
            "the recorded program exited with {}; the trace in {} is complete up to its exit",
            recorded.status,
            out.display()
        );
    }
    Ok(())
}

/// How [`record`] captures the references.
#[derive(Clone, Copy, Debug)]
pub struct Capture {
    /// The tool or lackey.
    pub backend: Backend,
    /// Follow the programs the recorded one execs (the tool only).
    pub trace_children: bool,
    /// The program's standard output goes to standard error (an analysis prints on standard
    /// output after the recording).
    pub stdout_to_stderr: bool,
}

/// What [`record`] wrote.
pub struct Recorded {
    /// The trace's summary.
    pub summary: super::convert::WriteSummary,
    /// How the program ended (not an error here: its references up to the exit are written).
    pub status: std::process::ExitStatus,
    /// The event log beside the trace, when one was written.
    pub events: Option<PathBuf>,
}

/// Records `command` (program and arguments) under cachescope's Valgrind tool (or lackey,
/// with `backend` or when the tool cannot run here) into `out` in format `to`, with its event
/// log in `out.events` when `events` is on; notes on stderr unless quiet. `distinct` counts
/// the distinct lines for the summary.
pub fn record(
    command: &[std::ffi::OsString],
    out: &Path,
    to: cachescope::trace::Format,
    run: &crate::args::RunArgs,
    events: bool,
    distinct: bool,
    capture: Capture,
) -> Result<Recorded> {
    let Capture {
        backend,
        trace_children,
        stdout_to_stderr,
    } = capture;
    let (program, rest) = command.split_first().context("no program to record")?;
    if trace_children && backend == Backend::Lackey {
        bail!(
            "--trace-children needs the tool backend: lackey would write every child into the \
             same log"
        );
    }
    let quiet = run.quiet;
    let events = events && out.as_os_str() != "-";
    if !events && out.as_os_str() == "-" && !quiet {
        eprintln!(
            "cachescope: recording without allocation events: they are written beside the \
             trace file (TRACE.events), so give one with -o"
        );
    }
    let backend = match backend {
        Backend::Tool => match tool_status() {
            Ok(_) => Backend::Tool,
            Err(why) if trace_children => {
                bail!("--trace-children needs cachescope's Valgrind tool, which cannot run: {why}")
            }
            Err(why) => {
                if !quiet {
                    eprintln!("cachescope: recording with lackey (much slower): {why}");
                }
                Backend::Lackey
            }
        },
        Backend::Lackey => Backend::Lackey,
    };
    let events_path = sidecar_path(out);
    let (recording, stream, events_writer, recorded_with) = if backend == Backend::Tool {
        let opts = ToolOptions {
            events,
            instr: true,
            stdout_to_stderr,
            trace_children,
        };
        let (recording, stream, rx) = Recording::start_tool_stream(program, rest, opts)?;
        let writer = rx.map(|rx| {
            let header = Header {
                cachescope_events: EVENTS_VERSION,
                program: recording.description().to_string(),
            };
            let path = events_path.clone();
            std::thread::spawn(move || write_events(&path, &header, rx))
        });
        let with = "valgrind --tool=cachescope (cachescope's own tool)".to_string();
        (recording, Stream::Tool(Box::new(stream)), writer, with)
    } else {
        let (recording, trace, writer, with) =
            start_lackey(program, rest, events, quiet, &events_path)?;
        (recording, Stream::Trace(trace), writer, with)
    };
    let meta = vec![
        ("source".to_string(), recording.description().to_string()),
        ("source_format".into(), "lackey".into()),
        ("recorded_with".into(), recorded_with),
    ];
    finish(
        recording,
        stream,
        events_writer,
        out,
        to,
        run,
        meta,
        distinct,
        backend,
    )
}

type EventsThread = std::thread::JoinHandle<Result<u64>>;

/// The references being recorded: the tool's stream, or any trace (lackey's).
enum Stream {
    Tool(Box<ToolStream>),
    Trace(cachescope::trace::Trace),
}
