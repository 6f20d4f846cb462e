//! Recording a real program: run it under Valgrind and read its trace as it is written.
//!
//! Two backends. The default, [`Recording::start_tool`], runs cachescope's own Valgrind tool
//! (crate `cachescope-valgrind`), which writes 8-byte binary records, allocation and memory-map
//! events included, into a named pipe that [`tool::ToolReader`] decodes as they arrive (50-100x
//! faster than lackey; `docs/recording.md`). [`tool_status`] says whether the tool can run
//! here and, if not, why. The second runs `valgrind --tool=lackey --trace-mem=yes`, which
//! prints one line per reference ([`Recording::start`]); it is the fallback. Neither stores
//! the stream: it comes through a FIFO (made with `mkfifo(1)` in a private temporary
//! directory), and the returned [`Trace`] decodes it as it arrives, so the caller streams it
//! straight into the native format ([`crate::trace::native::Writer`]) or into an analysis.
//!
//! The program's own stdin, stdout and stderr are the caller's: only the records go through
//! the pipe (Valgrind's own messages go to a log file, quoted in errors, with the tool; into
//! lackey's log, where the lackey reader skips them, with lackey).
//!
//! If Valgrind exits before opening the pipe (a bad option, a program it cannot run), a watcher
//! thread opens the pipe's write end itself so the reader sees an empty stream instead of
//! waiting forever; [`Recording::finish`] then reports Valgrind's exit status.
//!
//! ## Allocation events with lackey
//! [`Recording::start_with_events`] also preloads the allocation interposer
//! (`libcachescope_preload.so`, see [`preload`]) into the program. It logs the memory map and
//! every heap allocation and free into a second FIFO (drained by a thread, parsed by [`log`])
//! and marks each event in the reference stream with stores into a sentinel region;
//! [`sentinel::SentinelFilter`] removes those marks and the interposer's own references from
//! the trace and sends each [`Event`] on a channel, positioned in the filtered stream. See
//! `docs/recording.md`.

pub mod log;
pub mod preload;
pub mod sentinel;
pub mod tool;
mod tool_decode;
mod tool_run;
mod tool_sampled;

pub use tool_run::{ToolOptions, tool_status, valgrind};
pub use tool_sampled::sample_program;

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::attribution::events::Event;
use crate::error::{Error, Result, Source};
use crate::trace::{Format, FormatChoice, OpenOptions, Trace};
use sentinel::{ChannelLog, EventCounts, SentinelFilter};

/// The interposer's side of a recording: its log drain and what the filter counted.
struct EventsSide {
    /// A write end of the log FIFO, kept so the drain's read never sees end-of-file early and
    /// used to send the drain its quit record.
    quit: File,
    drain: Option<JoinHandle<()>>,
    counts: Arc<Mutex<EventCounts>>,
}

impl EventsSide {
    fn stop(&mut self) {
        // `Q` ends the drain's log (see log.rs); the program has exited or been killed.
        let _ = self.quit.write_all(b"Q 0\n");
        if let Some(d) = self.drain.take() {
            let _ = d.join();
        }
    }
}

/// A program running under Valgrind (cachescope's tool or lackey), and the trace it is
/// producing.
pub struct Recording {
    child: Arc<Mutex<Child>>,
    dir: PathBuf,
    description: String,
    events: Option<EventsSide>,
    /// With the tool backend and events: what its reader counted.
    tool_counts: Option<Arc<Mutex<EventCounts>>>,
}

/// How a recorded program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// Valgrind's exit status (the program's, unless Valgrind itself failed).
    pub status: ExitStatus,
    /// With the interposer: what was logged and removed. `brackets == 0` means the interposer
    /// never ran (a statically linked program ignores `LD_PRELOAD`).
    pub events: Option<EventCounts>,
}

impl Recording {
    /// Starts `valgrind --tool=lackey --trace-mem=yes PROGRAM ARGS…` and opens the trace it
    /// writes. `valgrind` is looked up on `PATH` (or taken from `$CACHESCOPE_VALGRIND`).
    ///
    /// Errors: Valgrind missing (with how to install it), no `mkfifo`, or a trace that does not
    /// start (the program could not be run: see the exit status in the error).
    pub fn start(program: &OsStr, args: &[OsString]) -> Result<(Recording, Trace)> {
        let valgrind = std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into());
        Recording::start_with(&valgrind, program, args)
    }

    /// [`Recording::start`] with the Valgrind executable given.
    pub fn start_with(
        valgrind: &OsStr,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<(Recording, Trace)> {
        let (rec, trace, _) = Recording::spawn(valgrind, program, args, None)?;
        Ok((rec, trace))
    }

    /// [`Recording::start`] with the allocation interposer at `preload` (see
    /// [`preload::locate`]) loaded into the program. The trace comes without the
    /// interposer's sentinel marks and references; the receiver yields the memory map and
    /// every allocation and free, in stream order, each sent before the batch holding its
    /// position is returned (so drain it after each batch, or on another thread).
    pub fn start_with_events(
        program: &OsStr,
        args: &[OsString],
        preload: &Path,
    ) -> Result<(Recording, Trace, crossbeam_channel::Receiver<Event>)> {
        let valgrind = std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into());
        let (rec, trace, events) = Recording::spawn(&valgrind, program, args, Some(preload))?;
        Ok((rec, trace, events.expect("events requested")))
    }

    fn spawn(
        valgrind: &OsStr,
        program: &OsStr,
        args: &[OsString],
        preload: Option<&Path>,
    ) -> Result<(Recording, Trace, Option<crossbeam_channel::Receiver<Event>>)> {
        let description = describe(program, args);
        let source = Source::Program(description.clone());
        let dir = private_dir().map_err(|e| Error::io(&source, e))?;
        let fifo = dir.join("lackey.fifo");
        let log_fifo = dir.join("events.fifo");
        let made = Command::new("mkfifo")
            .arg(&fifo)
            .args(preload.map(|_| &log_fifo))
            .status();
        if !matches!(made, Ok(s) if s.success()) {
            let _ = fs::remove_dir_all(&dir);
            return Err(Error::InvalidParameter {
                name: "record",
                message: "could not make a named pipe with mkfifo(1) (coreutils)".into(),
            });
        }
        let mut log_file = OsString::from("--log-file=");
        log_file.push(&fifo);
        let mut command = Command::new(valgrind);
        command
            .args(["--tool=lackey", "--trace-mem=yes"])
            .arg(log_file)
            .arg(program)
            .args(args)
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        let mut log_end = None;
        if let Some(so) = preload {
            // Opened read-write: a FIFO open for reading alone would block until the program
            // opens it, and would never be opened at all by a static program.
            let end = FsOpenOptions::new()
                .read(true)
                .write(true)
                .open(&log_fifo)
                .map_err(|e| Error::io(&source, e));
            let end = match end {
                Ok(f) => f,
                Err(e) => {
                    let _ = fs::remove_dir_all(&dir);
                    return Err(e);
                }
            };
            // Valgrind puts its own preloads in front and passes the rest to the program
            // (and strips its own for children it does not trace).
            let mut ld = so.as_os_str().to_owned();
            if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
                ld.push(":");
                ld.push(old);
            }
            command
                .env("LD_PRELOAD", ld)
                .env("CACHESCOPE_EVENTS_LOG", &log_fifo)
                .env("CACHESCOPE_SENTINEL", sentinel::candidates_env());
            log_end = Some(end);
        }
        let spawned = command.spawn();
        let child = match spawned {
            Ok(c) => Arc::new(Mutex::new(c)),
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(spawn_error(valgrind, &source, e));
            }
        };
        let mut recording = Recording {
            child: child.clone(),
            dir,
            description,
            events: None,
            tool_counts: None,
        };
        let mut channels = None;
        if let Some(end) = log_end {
            let quit = end.try_clone().map_err(|e| Error::io(&source, e))?;
            let (tx, rx) = crossbeam_channel::unbounded();
            let log_source =
                Source::Program(format!("allocation log of {}", recording.description));
            let drain = {
                let log_source = log_source.clone();
                std::thread::spawn(move || drain_log(end, log_source, tx))
            };
            recording.events = Some(EventsSide {
                quit,
                drain: Some(drain),
                counts: Arc::new(Mutex::new(EventCounts::default())),
            });
            channels = Some((rx, log_source));
        }
        let opened = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (opened, fifo) = (opened.clone(), fifo.clone());
            std::thread::spawn(move || unblock_if_exited(&child, &opened, &fifo))
        };
        let file = File::open(&fifo);
        opened.store(true, Ordering::SeqCst);
        let _ = watcher.join();
        let file = file.map_err(|e| Error::io(&source, e))?;
        let opts = OpenOptions {
            format: FormatChoice::Exactly(Format::Lackey),
            skip_bad_lines: false,
        };
        match Trace::from_read(file, source.clone(), None, &opts) {
            Ok(trace) => match (channels, &recording.events) {
                (Some((rx, log_source)), Some(side)) => {
                    let (tx, events) = crossbeam_channel::unbounded();
                    let log = Box::new(ChannelLog::new(rx, log_source));
                    let filter = SentinelFilter::new(trace, log, tx, source.clone())
                        .with_shared_counts(side.counts.clone());
                    let trace = Trace::from_reader(Box::new(filter), source);
                    Ok((recording, trace, Some(events)))
                }
                _ => Ok((recording, trace, None)),
            },
            Err(e) => {
                let status = recording.finish().map(|f| f.status);
                Err(match (e, status) {
                    (Error::Empty { .. }, Ok(status)) => Error::InvalidParameter {
                        name: "record",
                        message: format!(
                            "valgrind produced no trace ({status}); check the program name and \
                             that valgrind runs it"
                        ),
                    },
                    (e, _) => e,
                })
            }
        }
    }

    /// The command line being recorded.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Kills Valgrind if it still runs and returns its status (a recording that failed to
    /// start).
    fn finish_now(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.lock().ok()?;
        child.wait().ok()
    }

    /// Waits for Valgrind to exit (call after reading the trace to its end).
    pub fn finish(mut self) -> Result<Finished> {
        let status = self
            .child
            .lock()
            .expect("not poisoned")
            .wait()
            .map_err(|e| Error::io(&Source::Program(self.description.clone()), e))?;
        let events = match (&mut self.events, &self.tool_counts) {
            (Some(side), _) => {
                side.stop();
                Some(side.counts.lock().map(|c| c.clone()).unwrap_or_default())
            }
            (None, Some(counts)) => Some(counts.lock().map(|c| c.clone()).unwrap_or_default()),
            (None, None) => None,
        };
        Ok(Finished { status, events })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // A recording dropped early (an error, a closed pipe): stop Valgrind rather than leave
        // it blocked writing into a pipe nobody reads.
        if let Ok(mut child) = self.child.lock() {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
        if let Some(side) = self.events.as_mut() {
            side.stop();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Polls the child until the reader has opened the pipe; if the child exits first, opens the
/// write end so that the reader's open returns (and it reads an empty stream).
fn unblock_if_exited(child: &Mutex<Child>, opened: &AtomicBool, fifo: &PathBuf) {
    while !opened.load(Ordering::SeqCst) {
        let exited = matches!(child.lock().expect("not poisoned").try_wait(), Ok(Some(_)));
        if exited {
            let _ = FsOpenOptions::new().write(true).open(fifo);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Parses the interposer's log as it arrives and hands each group to the sentinel filter.
fn drain_log(end: File, source: Source, tx: crossbeam_channel::Sender<Result<log::Group>>) {
    let mut reader = log::LogReader::new(io::BufReader::with_capacity(1 << 16, end), source);
    loop {
        match reader.next_group() {
            Ok(Some(g)) => {
                if tx.send(Ok(g)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// The command line, for messages and the trace's metadata.
fn describe(program: &OsStr, args: &[OsString]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error of a Valgrind that could not be started.
fn spawn_error(valgrind: &OsStr, source: &Source, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::NotFound {
        Error::InvalidParameter {
            name: "record",
            message: format!(
                "{} not found: recording runs the program under Valgrind; install it \
                 (Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind; \
                 macOS is not supported by Valgrind)",
                valgrind.to_string_lossy()
            ),
        }
    } else {
        Error::io(source, e)
    }
}

/// A new directory only this process uses, under the system temporary directory.
fn private_dir() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for attempt in 0u32..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "cachescope-record-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("could not create a temporary directory"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Batch;

    fn have_valgrind() -> bool {
        Command::new("valgrind")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn records_a_real_program() {
        if !have_valgrind() {
            eprintln!("skipped: valgrind not installed");
            return;
        }
        let (rec, mut trace) = Recording::start(OsStr::new("true"), &[]).unwrap();
        let mut batch = Batch::new();
        let (mut refs, mut instr) = (0u64, 0u64);
        while trace.read_batch(&mut batch).unwrap() > 0 {
            refs += batch.len() as u64;
            instr += batch
                .kinds
                .iter()
                .filter(|k| **k == crate::AccessKind::Instr)
                .count() as u64;
        }
        let done = rec.finish().unwrap();
        assert!(done.status.success());
        // /bin/true under lackey: tens of thousands of instructions in the dynamic loader.
        assert!(instr > 10_000, "{instr} instructions");
        assert!(refs > instr);
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_hang() {
        if !have_valgrind() {
            eprintln!("skipped: valgrind not installed");
            return;
        }
        let err = Recording::start(OsStr::new("/nonexistent/program"), &[])
            .err()
            .expect("no trace");
        let msg = err.to_string();
        assert!(
            msg.contains("valgrind") || msg.contains("nonexistent"),
            "{msg}"
        );
    }

    #[test]
    fn missing_valgrind_says_how_to_install() {
        let err =
            Recording::start_with(OsStr::new("/nonexistent/valgrind"), OsStr::new("true"), &[])
                .err()
                .expect("no valgrind");
        assert!(
            err.to_string().contains("apt-get install valgrind"),
            "{err}"
        );
    }
}
