//! `cachescope record -- PROGRAM ARGS…`: a real program's references, straight into a trace,
//! with its memory map and heap events beside it in `TRACE.events`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cachescope::Source;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventWriter, Header, sidecar_path};
use cachescope::record::{Recording, ToolOptions, ToolStream, preload, tool_status};
use cachescope::units::{Precision, format_bytes, thousands};
use clap::Args;

use super::convert::{print_summary, write_tool_native, write_trace};
use crate::args::{RunArgs, SummaryFormat, values};

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

/// Starts lackey, with the LD_PRELOAD interposer when `events` and it is found.
fn start_lackey(
    program: &std::ffi::OsStr,
    rest: &[std::ffi::OsString],
    events: bool,
    quiet: bool,
    events_path: &Path,
) -> Result<(
    Recording,
    cachescope::trace::Trace,
    Option<EventsThread>,
    String,
)> {
    let preload = if !events {
        None
    } else {
        match preload::locate() {
            Ok(p) => Some(p),
            Err(searched) => {
                if !quiet {
                    eprintln!(
                        "cachescope: recording without allocation events: {} not found ({searched}); \
                         build it with `{}` or name it with ${}",
                        preload::FILE_NAME,
                        preload::BUILD_HINT,
                        preload::ENV
                    );
                }
                None
            }
        }
    };
    let (recording, trace, events_writer) = match &preload {
        Some(so) => {
            let (recording, trace, rx) = Recording::start_with_events(program, rest, so)?;
            let header = Header {
                cachescope_events: EVENTS_VERSION,
                program: recording.description().to_string(),
            };
            let path = events_path.to_owned();
            let writer = std::thread::spawn(move || write_events(&path, &header, rx));
            (recording, trace, Some(writer))
        }
        None => {
            let (recording, trace) = Recording::start(program, rest)?;
            (recording, trace, None)
        }
    };
    let with = if preload.is_some() {
        "valgrind --tool=lackey --trace-mem=yes, LD_PRELOAD=libcachescope_preload.so \
         (its own references removed)"
    } else {
        "valgrind --tool=lackey --trace-mem=yes"
    };
    Ok((recording, trace, events_writer, with.into()))
}

/// Streams the trace into `out`, waits for the program, and reports what was written.
#[allow(clippy::too_many_arguments)]
fn finish(
    recording: Recording,
    stream: Stream,
    events_writer: Option<EventsThread>,
    out: &Path,
    to: cachescope::trace::Format,
    run: &crate::args::RunArgs,
    meta: Vec<(String, String)>,
    distinct: bool,
    backend: Backend,
) -> Result<Recorded> {
    let quiet = run.quiet;
    let events_path = sidecar_path(out);
    // The tool's words go straight into a plain native file's blocks, skipping batches (the
    // summary's distinct lines need them); any other output is written from batches.
    let direct = to == cachescope::trace::Format::Native
        && out.as_os_str() != "-"
        && cachescope::trace::write::compression_for_path(out)
            == cachescope::trace::Compression::None
        && !distinct;
    // Each arm drops its stream at its end, closing the event channel, which ends the writer
    // thread.
    let (written, source) = match stream {
        Stream::Tool(mut tool) if direct => {
            let written = write_tool_native(&mut tool, out, run, meta);
            (written, tool.source().to_string())
        }
        Stream::Tool(tool) => {
            let source = tool.source().clone();
            let mut trace = cachescope::trace::Trace::from_reader(tool, source);
            let written = write_trace(&mut trace, out, to, run, meta, distinct);
            (written, trace.source().to_string())
        }
        Stream::Trace(mut trace) => {
            let written = write_trace(&mut trace, out, to, run, meta, distinct);
            (written, trace.source().to_string())
        }
    };
    let finished = recording.finish()?;
    let logged = events_writer.map(|w| w.join().expect("event writer thread"));
    let summary = match written {
        Ok(s) => s,
        Err(e) => {
            // No trace was left (a cut stream, a full disk): no event log without its trace.
            let _ = std::fs::remove_file(&events_path);
            return Err(e);
        }
    };
    if !quiet {
        eprintln!(
            "cachescope: recorded {source} into {} ({}; {} records, {})",
            out.display(),
            finished.status,
            thousands(summary.records),
            format_bytes(summary.bytes, Precision::ThreeDigits)
        );
    }
    let mut kept_events = None;
    if let (Some(logged), Some(counts)) = (logged, &finished.events) {
        logged?;
        if counts.brackets == 0 {
            let _ = std::fs::remove_file(&events_path);
            if !quiet {
                eprintln!(
                    "cachescope: no allocation events (statically linked?): the interposer never \
                     ran in the program, so {} was not written",
                    events_path.display()
                );
            }
        } else {
            kept_events = Some(events_path.clone());
            if !quiet {
                let total = counts.kept + counts.dropped;
                if backend == Backend::Tool {
                    eprintln!(
                        "cachescope: logged {} allocations, {} frees and {} mappings into {}{}",
                        counts.allocs,
                        counts.frees,
                        counts.maps,
                        events_path.display(),
                        if counts.allocs + counts.frees == 0 {
                            " (no heap events: a statically linked program, whose allocator \
                             cannot be wrapped, or one that never called malloc)"
                        } else {
                            ""
                        }
                    );
                    return Ok(Recorded {
                        summary,
                        status: finished.status,
                        events: kept_events,
                    });
                }
                eprintln!(
                    "cachescope: logged {} allocations, {} frees and {} mappings into {}; removed \
                     {} interposer references ({:.1} % of the {} recorded){}",
                    counts.allocs,
                    counts.frees,
                    counts.maps,
                    events_path.display(),
                    counts.dropped,
                    100.0 * counts.dropped as f64 / total.max(1) as f64,
                    total,
                    if counts.unclosed > 0 {
                        format!(
                            "; {} event(s) cut off by the program's end",
                            counts.unclosed
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    Ok(Recorded {
        summary,
        status: finished.status,
        events: kept_events,
    })
}

/// Streams the events into `path` as they arrive; returns how many were written.
fn write_events(path: &Path, header: &Header, rx: impl IntoIterator<Item = Event>) -> Result<u64> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let source = Source::File(path.to_owned());
    let mut w = EventWriter::new(std::io::BufWriter::new(file), source, header)?;
    let mut n = 0;
    for event in rx {
        w.write(&event)?;
        n += 1;
    }
    let buf = w.finish()?;
    buf.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(n)
}
