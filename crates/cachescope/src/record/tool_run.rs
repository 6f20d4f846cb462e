//! Starting a program under cachescope's own Valgrind tool (the default backend of
//! `record`): the tool hands its binary records over in a shared-memory ring (`ring.rs`),
//! with their order and end in a FIFO, and [`super::tool::ToolReader`] decodes them as they
//! arrive. Allocation events travel in the same stream, so no second pipe, preload
//! interposer or sentinel filter is needed.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use super::sentinel::EventCounts;
use super::tool::ToolReader;
use super::{ProgramOutput, Recording, lifetime, make_fifo, open_fifo, private_dir, spawn_error};
use crate::attribution::events::Event;
use crate::error::{Error, Result, Source};
use crate::sampling::SamplerOptions;
use crate::spatial::SpatialOptions;
use crate::trace::Trace;

/// What the tool records, and where the program's output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOptions {
    /// Allocation and memory-map events (the tool's preload library is loaded into the
    /// program).
    pub events: bool,
    /// Instruction records (off: data references only, about twice as fast).
    pub instr: bool,
    /// Where the program's standard output goes (an analysis printed on standard output wants
    /// it elsewhere).
    pub output: ProgramOutput,
    /// Follow the programs the recorded process becomes with `execve` (Valgrind's
    /// `--trace-children=yes`); forked children are never written into the stream.
    pub trace_children: bool,
    /// Record from the start (Callgrind's `--collect-atstart`); off, only between the
    /// program's `CACHESCOPE_START()` and `CACHESCOPE_STOP()` (include/cachescope.h).
    pub collect_at_start: bool,
    /// Record only while a function matching one of these names (Valgrind's wildcards `*`
    /// and `?`) is on the stack (Callgrind's `--toggle-collect`); empty: everywhere.
    pub toggle_collect: Vec<String>,
    /// Call events: each thread's calls and returns, kept as a shadow stack by the tool
    /// ([`crate::batch::CallEvent`]s of the batches; docs/callgraph.md).
    pub calls: bool,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            events: true,
            instr: true,
            output: ProgramOutput::Inherit,
            trace_children: false,
            collect_at_start: true,
            toggle_collect: Vec::new(),
            calls: true,
        }
    }
}

/// The Valgrind executable: `$CACHESCOPE_VALGRIND` or `valgrind` on `PATH`.
pub fn valgrind() -> OsString {
    std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into())
}

/// Whether the tool can run here, or why not (not built, another Valgrind version, Valgrind
/// missing): the reason `record` prints when it falls back to lackey.
///
/// Known once per process and Valgrind (it runs `valgrind --version`, ~35 ms, and `record`
/// asks before it starts the tool).
pub fn tool_status() -> std::result::Result<cachescope_valgrind::ToolDirs, String> {
    type Status = std::result::Result<cachescope_valgrind::ToolDirs, String>;
    static KNOWN: std::sync::Mutex<Vec<(OsString, Status)>> = std::sync::Mutex::new(Vec::new());
    let valgrind = valgrind();
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, status)) = known.iter().find(|(v, _)| *v == valgrind) {
        return status.clone();
    }
    let status = cachescope_valgrind::locate(&valgrind);
    known.push((valgrind, status.clone()));
    status
}

/// The record stream of a running tool, as [`Recording::start_tool_stream`] returns it.
pub type ToolStream = ToolReader<Box<dyn Read + Send>>;

impl Recording {
    /// Starts `valgrind --tool=cachescope PROGRAM ARGS…` and opens the trace it writes; with
    /// `opts.events`, the receiver yields the memory map and every allocation and free, each
    /// sent before the batch holding its position is returned.
    pub fn start_tool(
        program: &OsStr,
        args: &[OsString],
        opts: ToolOptions,
    ) -> Result<(Recording, Trace, Option<crossbeam_channel::Receiver<Event>>)> {
        let (recording, reader, rx) = Recording::start_tool_stream(program, args, opts)?;
        let source = reader.source().clone();
        Ok((recording, Trace::from_reader(Box::new(reader), source), rx))
    }

    /// [`Recording::start_tool`], with the tool's stream itself rather than a [`Trace`] over
    /// it: its [`ToolReader::write_native`] writes a native trace without batches.
    pub fn start_tool_stream(
        program: &OsStr,
        args: &[OsString],
        opts: ToolOptions,
    ) -> Result<(
        Recording,
        ToolStream,
        Option<crossbeam_channel::Receiver<Event>>,
    )> {
        let Launched {
            mut recording,
            input,
            log,
            source,
            ..
        } = launch(program, args, &opts, InTool::default())?;
        let counts = Arc::new(Mutex::new(EventCounts::default()));
        if opts.events {
            recording.tool_counts = Some(counts.clone());
        }
        let mut reader = ToolReader::new(input, source)
            .with_shared_counts(counts)
            .following_exec(opts.trace_children)
            .with_children_file(recording.dir.join(CHILDREN));
        let mut rx = None;
        if opts.events {
            let (tx, events) = crossbeam_channel::unbounded();
            reader = reader.with_events(tx);
            rx = Some(events);
        }
        if let Err(e) = reader.start() {
            return Err(no_trace(e, &mut recording, &log));
        }
        Ok((recording, reader, rx))
    }
}

/// A started tool: the recording, the record stream, Valgrind's log.
pub(super) struct Launched {
    pub recording: Recording,
    /// The record stream: through the ring, or straight from the FIFO.
    pub input: Box<dyn Read + Send>,
    pub log: PathBuf,
    pub source: Source,
    /// Where the spatial sampler's threshold is published, when it runs through a ring.
    pub threshold: Option<Threshold>,
}

/// The handle that publishes the spatial sampler's threshold (only through a ring).
#[cfg(target_os = "linux")]
pub(super) type Threshold = super::ring::Threshold;
#[cfg(not(target_os = "linux"))]
pub(super) type Threshold = std::convert::Infallible;

/// The samplers run inside the tool (none: the full stream).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct InTool<'a> {
    /// StatCache's reuse sampler (`cs_sample.c`).
    pub reuse: Option<&'a SamplerOptions>,
    /// The spatial sampler (`cs_spatial.c`), told these options' key and starting limit.
    pub spatial: Option<&'a SpatialOptions>,
    /// With `reuse`, a reuse sampler per thread too (`cs_sample.c`), its positions written
    /// into `recording.dir/thread-positions.fifo`.
    pub threads: bool,
    /// With `reuse`, the short reuses' windows measured (`cs_windows.c`), as the stage's
    /// sampler measures them on a trace ([`crate::sampling::Sampler::with_windows`]).
    pub windows: bool,
}

/// Starts the tool on `program` and opens its record stream. With a sampler `in_tool`, the
/// tool samples (docs/recording.md): the reuse sampler's positions are to be written into
/// `recording.dir/positions.fifo`; the spatial sampler's threshold is published through
/// [`Launched::threshold`].
pub(super) fn launch(
    program: &OsStr,
    args: &[OsString],
    opts: &ToolOptions,
    in_tool: InTool<'_>,
) -> Result<Launched> {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let valgrind = valgrind();
    let dirs = tool_status().map_err(|why| Error::InvalidParameter {
        name: "record",
        message: format!("cachescope's Valgrind tool cannot run: {why}"),
    })?;
    let lib = if opts.events {
        &dirs.events
    } else {
        &dirs.plain
    };
    let description = super::describe(program, args);
    let source = Source::Program(description.clone());
    // The spatial sampler's options, checked before anything is made.
    let mut spatial_args: Vec<OsString> = Vec::new();
    if let Some(s) = in_tool.spatial {
        if in_tool.reuse.is_some_and(|r| r.line_size != s.line_size) {
            return Err(Error::InvalidParameter {
                name: "line-size",
                message: "the tool's two samplers need the same line size".into(),
            });
        }
        let limit = crate::spatial::Limit::from_rate(s.rate)?;
        spatial_args = vec![
            "--cs-spatial=yes".into(),
            format!("--cs-spatial-key={:#x}", s.hash().key()).into(),
            format!("--cs-spatial-limit={:#x}", limit.0).into(),
            format!("--cs-line-shift={}", s.line_size.shift()).into(),
        ];
    }
    let dir = private_dir().map_err(|e| Error::io(&source, e))?;
    let fifo = dir.join("records.fifo");
    let log = dir.join("valgrind.log");
    let mut fifos = vec![fifo.clone()];
    let mut sample_args: Vec<OsString> = Vec::new();
    if let Some(s) = in_tool.reuse {
        let positions = dir.join(POSITIONS);
        let mut from = OsString::from("--cs-sample-from=");
        from.push(&positions);
        sample_args = vec![
            from,
            format!("--cs-line-shift={}", s.line_size.shift()).into(),
            format!("--cs-sample-instr={}", yes_no(s.include_instructions)).into(),
            format!("--cs-sample-windows={}", yes_no(in_tool.windows)).into(),
        ];
        fifos.push(positions);
        if in_tool.threads {
            let threads = dir.join(THREAD_POSITIONS);
            let mut from = OsString::from("--cs-sample-threads-from=");
            from.push(&threads);
            sample_args.push(from);
            fifos.push(threads);
        }
    }
    for f in &fifos {
        if make_fifo(f).is_err() {
            let _ = fs::remove_dir_all(&dir);
            return Err(Error::InvalidParameter {
                name: "record",
                message: "could not make a named pipe in the temporary directory".into(),
            });
        }
    }
    // The full stream and the spatial sampler's cross in a shared-memory ring where it can be
    // made (the spatial sampler's threshold is published in its header); the reuse sampler's
    // alone is small and stays in the pipe.
    let ring = match in_tool {
        InTool {
            reuse: Some(_),
            spatial: None,
            ..
        } => None,
        _ => make_ring(),
    };
    let ring_arg = ring.as_ref().map(|(_, arg)| arg.clone());
    let mut out = OsString::from("--cs-out=");
    out.push(&fifo);
    let mut log_file = OsString::from("--log-file=");
    log_file.push(&log);
    let stdout = match opts.output.stdio() {
        Ok(s) => s,
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let mut command = Command::new(&valgrind);
    super::process::without_huge_pages(&mut command);
    lifetime::die_with_parent(&mut command);
    let spawned = command
        .arg(format!("--tool={}", cachescope_valgrind::TOOL_NAME))
        .arg(out)
        .arg(log_file)
        .arg(super::process::VGDB_OFF)
        .arg(format!("--cs-events={}", yes_no(opts.events)))
        .arg(format!("--cs-instr={}", yes_no(opts.instr)))
        .arg(format!("--cs-calls={}", yes_no(opts.calls)))
        .arg(format!("--trace-children={}", yes_no(opts.trace_children)))
        // A forked child the program waits for (a shell's command) is followed too; not by
        // the spatial sampler, whose reader takes one process's stream (the child is named
        // at the end as not recorded).
        .arg(format!(
            "--cs-follow-forks={}",
            yes_no(opts.trace_children && spatial_args.is_empty())
        ))
        .arg(format!(
            "--cs-collect-atstart={}",
            yes_no(opts.collect_at_start)
        ))
        .args(
            opts.toggle_collect
                .iter()
                .map(|f| format!("--cs-toggle-collect={f}")),
        )
        // Only the process cachescope starts (and what it execs) writes the stream.
        .arg(format!("--cs-parent={}", std::process::id()))
        .args(sample_args)
        .args(spatial_args)
        .args(ring_arg)
        .arg(program)
        .args(args)
        .env("VALGRIND_LIB", lib)
        .stdin(Stdio::inherit())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn();
    let child = match spawned {
        Ok(c) => Arc::new(Mutex::new(c)),
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(spawn_error(&valgrind, &source, e));
        }
    };
    let mut recording = Recording::new(child.clone(), dir, description);
    recording.log = Some(log.clone());
    let file = open_fifo(&child, &fifo, &source)?;
    #[cfg(target_os = "linux")]
    let threshold = ring.as_ref().map(|(ring, _)| ring.threshold());
    #[cfg(not(target_os = "linux"))]
    let threshold = None;
    let input: Box<dyn Read + Send> = match ring {
        Some((ring, _)) => Box::new(ring.reader(file)),
        None => Box::new(file),
    };
    Ok(Launched {
        recording,
        input,
        log,
        source,
        threshold,
    })
}

/// A shared-memory ring and the tool's option naming it, or `None` (the records then go
/// through the FIFO itself, as they do where `memfd_create` is missing).
#[cfg(target_os = "linux")]
fn make_ring() -> Option<(super::ring::Ring, OsString)> {
    let ring = super::ring::Ring::create().ok()?;
    let mut arg = OsString::from("--cs-ring=");
    arg.push(ring.path());
    Some((ring, arg))
}

#[cfg(not(target_os = "linux"))]
fn make_ring() -> Option<((), OsString)> {
    None
}

/// The file in the recording's directory where the tool names the programs that children it
/// did not follow ran (`tool/cs_fork.c`).
pub(super) const CHILDREN: &str = "children";

/// The name of the sampled positions' pipe in the recording's directory.
pub(super) const POSITIONS: &str = "positions.fifo";

/// The name of the per-thread sampler's positions' pipe.
pub(super) const THREAD_POSITIONS: &str = "thread-positions.fifo";

/// The error for a stream that did not start: the tool's, or why Valgrind produced nothing.
pub(super) fn no_trace(e: Error, recording: &mut Recording, log: &Path) -> Error {
    let log = read_log(log);
    let status = recording.finish_now();
    match (e, status) {
        (Error::Empty(_), Some(status)) => Error::InvalidParameter {
            name: "record",
            message: format!(
                "valgrind produced no trace of `{}` ({status}); check the program name and \
                 that valgrind runs it{log}",
                recording.description
            ),
        },
        (e, _) => e,
    }
}

/// Valgrind's own messages, quoted in an error.
fn read_log(path: &Path) -> String {
    match fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = &lines[lines.len().saturating_sub(8)..];
            format!("; valgrind said:\n{}", tail.join("\n"))
        }
        _ => String::new(),
    }
}
