//! Starting `valgrind --tool=lackey --trace-mem=yes` on a FIFO ([`Recording::start`]), with
//! the allocation interposer when events are wanted ([`Recording::start_with_events`]): its
//! log drained on a thread and its brackets removed by [`super::sentinel::SentinelFilter`].

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use super::sentinel::{self, ChannelLog, EventCounts, SentinelFilter};
use super::{
    EventsSide, ProgramOutput, Recording, describe, lifetime, log, make_fifo, open_fifo,
    private_dir, spawn_error,
};
use crate::attribution::events::Event;
use crate::error::{Error, Result, Source};
use crate::trace::{Format, FormatChoice, OpenOptions, Trace};

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
        let (rec, trace, _) =
            Recording::spawn(valgrind, program, args, None, &ProgramOutput::Inherit)?;
        Ok((rec, trace))
    }

    /// [`Recording::start`] with the allocation interposer at `preload` (see
    /// [`preload::locate`](super::preload::locate)) loaded into the program. The trace comes without the
    /// interposer's sentinel marks and references; the receiver yields the memory map and
    /// every allocation and free, in stream order, each sent before the batch holding its
    /// position is returned (so drain it after each batch, or on another thread).
    pub fn start_with_events(
        program: &OsStr,
        args: &[OsString],
        preload: &Path,
    ) -> Result<(Recording, Trace, crossbeam_channel::Receiver<Event>)> {
        let (rec, trace, events) =
            Recording::start_lackey(program, args, Some(preload), &ProgramOutput::Inherit)?;
        Ok((rec, trace, events.expect("events requested")))
    }

    /// [`Recording::start`], with the allocation interposer when `preload` is given (as
    /// [`Recording::start_with_events`]) and the program's standard output sent to `output`.
    pub fn start_lackey(
        program: &OsStr,
        args: &[OsString],
        preload: Option<&Path>,
        output: &ProgramOutput,
    ) -> Result<(Recording, Trace, Option<crossbeam_channel::Receiver<Event>>)> {
        let valgrind = std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into());
        Recording::spawn(&valgrind, program, args, preload, output)
    }

    fn spawn(
        valgrind: &OsStr,
        program: &OsStr,
        args: &[OsString],
        preload: Option<&Path>,
        output: &ProgramOutput,
    ) -> Result<(Recording, Trace, Option<crossbeam_channel::Receiver<Event>>)> {
        let description = describe(program, args);
        let source = Source::Program(description.clone());
        let dir = private_dir().map_err(|e| Error::io(&source, e))?;
        let fifo = dir.join("lackey.fifo");
        let log_fifo = dir.join("events.fifo");
        let made = make_fifo(&fifo).and_then(|()| match preload {
            Some(_) => make_fifo(&log_fifo),
            None => Ok(()),
        });
        if made.is_err() {
            let _ = fs::remove_dir_all(&dir);
            return Err(Error::InvalidParameter {
                name: "record",
                message: "could not make a named pipe in the temporary directory".into(),
            });
        }
        let mut log_file = OsString::from("--log-file=");
        log_file.push(&fifo);
        let stdout = match output.stdio() {
            Ok(s) => s,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let mut command = Command::new(valgrind);
        super::process::without_huge_pages(&mut command);
        lifetime::die_with_parent(&mut command);
        command
            .args(["--tool=lackey", "--trace-mem=yes"])
            .arg(log_file)
            .arg(program)
            .args(args)
            .stdin(Stdio::inherit())
            .stdout(stdout)
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
        let mut recording = Recording::new(child.clone(), dir, description);
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
        let file = open_fifo(&child, &fifo, &source)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Batch;

    #[test]
    fn records_a_real_program() {
        if !cachescope_testkit::tools_or_skip(&["valgrind"]) {
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
        if !cachescope_testkit::tools_or_skip(&["valgrind"]) {
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
