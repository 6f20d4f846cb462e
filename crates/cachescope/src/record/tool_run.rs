//! Starting a program under cachescope's own Valgrind tool (the default backend of
//! `record`): the tool writes binary records into a FIFO that [`super::tool::ToolReader`]
//! decodes as they arrive. Allocation events travel in the same stream, so no second pipe,
//! preload interposer or sentinel filter is needed.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use super::sentinel::EventCounts;
use super::tool::ToolReader;
use super::{Recording, open_fifo, private_dir, spawn_error};
use crate::attribution::events::Event;
use crate::error::{Error, Result, Source};
use crate::sampling::SamplerOptions;
use crate::trace::Trace;

/// What the tool records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolOptions {
    /// Allocation and memory-map events (the tool's preload library is loaded into the
    /// program).
    pub events: bool,
    /// Instruction records (off: data references only, about twice as fast).
    pub instr: bool,
    /// The program's standard output goes to cachescope's standard error, so that an analysis
    /// printed on standard output is not mixed with it.
    pub stdout_to_stderr: bool,
    /// Follow the programs the recorded process becomes with `execve` (Valgrind's
    /// `--trace-children=yes`); forked children are never written into the stream.
    pub trace_children: bool,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            events: true,
            instr: true,
            stdout_to_stderr: false,
            trace_children: false,
        }
    }
}

/// The Valgrind executable: `$CACHESCOPE_VALGRIND` or `valgrind` on `PATH`.
pub fn valgrind() -> OsString {
    std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into())
}

/// Whether the tool can run here, or why not (not built, another Valgrind version, Valgrind
/// missing): the reason `record` prints when it falls back to lackey.
pub fn tool_status() -> std::result::Result<cachescope_valgrind::ToolDirs, String> {
    cachescope_valgrind::locate(&valgrind())
}

impl Recording {
    /// Starts `valgrind --tool=cachescope PROGRAM ARGS…` and opens the trace it writes; with
    /// `opts.events`, the receiver yields the memory map and every allocation and free, each
    /// sent before the batch holding its position is returned.
    pub fn start_tool(
        program: &OsStr,
        args: &[OsString],
        opts: ToolOptions,
    ) -> Result<(Recording, Trace, Option<crossbeam_channel::Receiver<Event>>)> {
        let Launched {
            mut recording,
            file,
            log,
            source,
        } = launch(program, args, opts, None)?;
        let counts = Arc::new(Mutex::new(EventCounts::default()));
        if opts.events {
            recording.tool_counts = Some(counts.clone());
        }
        let mut reader = ToolReader::new(file, source.clone()).with_shared_counts(counts);
        let mut rx = None;
        if opts.events {
            let (tx, events) = crossbeam_channel::unbounded();
            reader = reader.with_events(tx);
            rx = Some(events);
        }
        if let Err(e) = reader.start() {
            return Err(no_trace(e, &mut recording, &log));
        }
        Ok((recording, Trace::from_reader(Box::new(reader), source), rx))
    }
}

/// A started tool: the recording, the record stream's read end, Valgrind's log.
pub(super) struct Launched {
    pub recording: Recording,
    pub file: File,
    pub log: PathBuf,
    pub source: Source,
}

/// Starts the tool on `program` and opens its record stream. With `sampling`, the tool samples
/// (docs/recording.md): the positions to sample are to be written into
/// `recording.dir/positions.fifo`.
pub(super) fn launch(
    program: &OsStr,
    args: &[OsString],
    opts: ToolOptions,
    sampling: Option<&SamplerOptions>,
) -> Result<Launched> {
    let valgrind = valgrind();
    let dirs = cachescope_valgrind::locate(&valgrind).map_err(|why| Error::InvalidParameter {
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
    let dir = private_dir().map_err(|e| Error::io(&source, e))?;
    let fifo = dir.join("records.fifo");
    let log = dir.join("valgrind.log");
    let mut fifos = vec![fifo.clone()];
    let mut sample_args = Vec::new();
    if let Some(s) = sampling {
        let positions = dir.join(POSITIONS);
        let mut from = OsString::from("--cs-sample-from=");
        from.push(&positions);
        sample_args = vec![
            from,
            format!("--cs-line-shift={}", s.line_size.shift()).into(),
        ];
        fifos.push(positions);
    }
    for f in &fifos {
        if !matches!(Command::new("mkfifo").arg(f).status(), Ok(s) if s.success()) {
            let _ = fs::remove_dir_all(&dir);
            return Err(Error::InvalidParameter {
                name: "record",
                message: "could not make a named pipe with mkfifo(1) (coreutils)".into(),
            });
        }
    }
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let mut out = OsString::from("--cs-out=");
    out.push(&fifo);
    let mut log_file = OsString::from("--log-file=");
    log_file.push(&log);
    let spawned = Command::new(&valgrind)
        .arg(format!("--tool={}", cachescope_valgrind::TOOL_NAME))
        .arg(out)
        .arg(log_file)
        .arg(format!("--cs-events={}", yes_no(opts.events)))
        .arg(format!("--cs-instr={}", yes_no(opts.instr)))
        .arg(format!("--trace-children={}", yes_no(opts.trace_children)))
        // Only the process cachescope starts (and what it execs) writes the stream.
        .arg(format!("--cs-parent={}", std::process::id()))
        .args(sample_args)
        .arg(program)
        .args(args)
        .env("VALGRIND_LIB", lib)
        .stdin(Stdio::inherit())
        .stdout(if opts.stdout_to_stderr {
            io::stderr().into()
        } else {
            Stdio::inherit()
        })
        .stderr(Stdio::inherit())
        .spawn();
    let child = match spawned {
        Ok(c) => Arc::new(Mutex::new(c)),
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(spawn_error(&valgrind, &source, e));
        }
    };
    let recording = Recording {
        child: child.clone(),
        dir,
        description,
        events: None,
        tool_counts: None,
    };
    let file = open_fifo(&child, &fifo, &source)?;
    Ok(Launched {
        recording,
        file,
        log,
        source,
    })
}

/// The name of the sampled positions' pipe in the recording's directory.
pub(super) const POSITIONS: &str = "positions.fifo";

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
