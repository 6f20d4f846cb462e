//! Recording a real program: run it under Valgrind and read its trace as it is written.
//!
//! Two backends. The default, [`Recording::start_tool`], runs cachescope's own Valgrind tool
//! (crate `cachescope-valgrind`), which writes 8-byte binary records, allocation and memory-map
//! events included, into a shared-memory ring (`ring.rs`; one token per full slot through a
//! named pipe) that [`tool::ToolReader`] decodes as they arrive (~40x faster than lackey on
//! `docs/recording.md`'s speed row). [`tool_status`] says whether the tool can run
//! here and, if not, why. The second runs `valgrind --tool=lackey --trace-mem=yes`, which
//! prints one line per reference ([`Recording::start`]); it is the fallback. Neither stores
//! the stream: it comes through a FIFO (made with `mkfifo(3)` in a private temporary
//! directory), and the returned [`Trace`](crate::trace::Trace) decodes it as it arrives, so the caller streams it
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
//! the trace and sends each [`Event`](crate::attribution::events::Event) on a channel, positioned in the filtered stream. See
//! `docs/recording.md`.
//!
//! ## Lifetime
//! Valgrind and the processes the program forks never outlive the recording: dropping a
//! [`Recording`] kills them, [`kill_all`] kills every recording's at once (a signal handler's
//! thread calls it), and the kernel kills Valgrind when the thread that started it ends
//! (`PR_SET_PDEATHSIG`; start recordings on a thread that outlives them). See `lifetime.rs`.
//!
//! Files: this one holds [`Recording`]'s lifecycle (waiting, stopping, cleaning up);
//! `lifetime.rs` the list of running recordings and how they are killed; `ending.rs` how a
//! program ended, in words; `lackey_run.rs` starts lackey (with or without the interposer);
//! `process.rs` the FIFO and process plumbing both backends share; `tool_run.rs` starts the
//! tool.

mod ending;
mod lackey_run;
mod lifetime;
pub mod log;
pub mod preload;
mod process;
#[cfg(target_os = "linux")]
mod ring;
pub mod sentinel;
mod stream_copy;
pub mod tool;
mod tool_decode;
mod tool_run;
mod tool_sampled;
pub mod tool_spatial;
mod tool_spatial_run;

pub use ending::{crash_report, describe_status};
pub use lifetime::{kill_all, remove_all_dirs};
pub use process::ProgramOutput;
pub use stream_copy::StreamCopy;
pub use tool_run::{ToolOptions, ToolStream, tool_status, valgrind};
pub use tool_sampled::sample_program;
pub use tool_spatial_run::SpatialStream;

use std::fs::{self, File};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{Error, Result, Source};
use process::{describe, make_fifo, open_fifo, private_dir, spawn_error};
use sentinel::EventCounts;

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
    /// Valgrind's log file, where it has one of its own (the tool).
    log: Option<PathBuf>,
    /// Said about the run by the stream's reader (an exec not followed).
    notes: Vec<String>,
}

/// How a recorded program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// Valgrind's exit status (the program's, unless Valgrind itself failed).
    pub status: ExitStatus,
    /// With the interposer: what was logged and removed. `brackets == 0` means the interposer
    /// never ran (a statically linked program ignores `LD_PRELOAD`).
    pub events: Option<EventCounts>,
    /// Killed by a signal: Valgrind's report of it (the fault and the program's stack, see
    /// [`crash_report`]), where Valgrind's log is apart from the trace (the tool).
    pub crash: Option<String>,
    /// What else the recording noticed, for the caller to tell (an exec not followed).
    pub notes: Vec<String>,
}

impl Recording {
    /// A started Valgrind `child` whose pipes are in `dir` (removed with the recording), listed
    /// among the recordings [`kill_all`] kills.
    fn new(child: Arc<Mutex<Child>>, dir: PathBuf, description: String) -> Recording {
        lifetime::register(&child, &dir);
        Recording {
            child,
            dir,
            description,
            events: None,
            tool_counts: None,
            log: None,
            notes: Vec::new(),
        }
    }

    /// The command line being recorded.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The CPU time (user and system) Valgrind has used so far running the program, where
    /// the system says (Linux's `/proc`): how far the program has got, whatever the reader
    /// keeps up with (a tool waiting for the reader sleeps).
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        let pid = self.child.lock().ok()?.id();
        process::cpu_time(pid)
    }

    /// Kills Valgrind if it still runs and returns its status (a recording that failed to
    /// start).
    fn finish_now(&mut self) -> Option<ExitStatus> {
        lifetime::kill_running(&self.child);
        lifetime::wait(&self.child).ok()
    }

    /// Waits for Valgrind to exit (call after reading the trace to its end).
    pub fn finish(mut self) -> Result<Finished> {
        let status = lifetime::wait(&self.child)
            .map_err(|e| Error::io(&Source::Program(self.description.clone()), e))?;
        let events = match (&mut self.events, &self.tool_counts) {
            (Some(side), _) => {
                side.stop();
                Some(side.counts.lock().map(|c| c.clone()).unwrap_or_default())
            }
            (None, Some(counts)) => Some(counts.lock().map(|c| c.clone()).unwrap_or_default()),
            (None, None) => None,
        };
        let crash = match (&self.log, status.code()) {
            (Some(log), None) => fs::read_to_string(log)
                .ok()
                .and_then(|text| crash_report(&text)),
            _ => None,
        };
        Ok(Finished {
            status,
            events,
            crash,
            notes: std::mem::take(&mut self.notes),
        })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // A recording dropped early (an error, an interruption, a closed pipe): stop Valgrind
        // and what the program forked rather than leave them running, or blocked writing into
        // a pipe nobody reads.
        lifetime::kill_running(&self.child);
        let _ = lifetime::wait(&self.child);
        lifetime::unregister(&self.dir);
        if let Some(side) = self.events.as_mut() {
            side.stop();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}
