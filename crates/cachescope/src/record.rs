//! Recording a real program: run it under Valgrind's lackey and read the trace as it is written.
//!
//! `valgrind --tool=lackey --trace-mem=yes` prints one line per reference; a run of a second
//! writes gigabytes of text. [`Recording::start`] never stores that text: lackey writes into a
//! named pipe (a FIFO made with `mkfifo(1)` in a private temporary directory), and the returned
//! [`Trace`] decodes it as it arrives, so the caller streams it straight into the native format
//! ([`crate::trace::native::Writer`]) or into an analysis.
//!
//! The program's own stdin, stdout and stderr are the caller's: only lackey's log goes through
//! the pipe. Valgrind's own lines in that log (`==pid== …`) are skipped by the lackey reader.
//!
//! If Valgrind exits before opening the pipe (a bad option, a program it cannot run), a watcher
//! thread opens the pipe's write end itself so the reader sees an empty stream instead of
//! waiting forever; [`Recording::finish`] then reports Valgrind's exit status.

pub mod log;
pub mod sentinel;

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Error, Result, Source};
use crate::trace::{Format, FormatChoice, OpenOptions, Trace};

/// A program running under lackey, and the trace it is producing.
pub struct Recording {
    child: Arc<Mutex<Child>>,
    dir: PathBuf,
    description: String,
}

/// How a recorded program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// Valgrind's exit status (the program's, unless Valgrind itself failed).
    pub status: ExitStatus,
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
        let description = std::iter::once(program)
            .chain(args.iter().map(OsString::as_os_str))
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let source = Source::Program(description.clone());
        let dir = private_dir().map_err(|e| Error::io(&source, e))?;
        let fifo = dir.join("lackey.fifo");
        let made = Command::new("mkfifo").arg(&fifo).status();
        if !matches!(made, Ok(s) if s.success()) {
            let _ = fs::remove_dir_all(&dir);
            return Err(Error::InvalidParameter {
                name: "record",
                message: "could not make a named pipe with mkfifo(1) (coreutils)".into(),
            });
        }
        let mut log_file = OsString::from("--log-file=");
        log_file.push(&fifo);
        let spawned = Command::new(valgrind)
            .args(["--tool=lackey", "--trace-mem=yes"])
            .arg(log_file)
            .arg(program)
            .args(args)
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .spawn();
        let child = match spawned {
            Ok(c) => Arc::new(Mutex::new(c)),
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(if e.kind() == io::ErrorKind::NotFound {
                    Error::InvalidParameter {
                        name: "record",
                        message: format!(
                            "{} not found: recording runs the program under Valgrind's lackey; \
                             install it (Debian/Ubuntu: apt-get install valgrind; Fedora: dnf \
                             install valgrind; macOS is not supported by Valgrind)",
                            valgrind.to_string_lossy()
                        ),
                    }
                } else {
                    Error::io(&source, e)
                });
            }
        };
        let recording = Recording {
            child: child.clone(),
            dir,
            description,
        };
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
        match Trace::from_read(file, source, None, &opts) {
            Ok(trace) => Ok((recording, trace)),
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

    /// Waits for Valgrind to exit (call after reading the trace to its end).
    pub fn finish(self) -> Result<Finished> {
        let status = self
            .child
            .lock()
            .expect("not poisoned")
            .wait()
            .map_err(|e| Error::io(&Source::Program(self.description.clone()), e))?;
        Ok(Finished { status })
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
