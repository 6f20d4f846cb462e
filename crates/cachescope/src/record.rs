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
//! Files: this one holds [`Recording`]'s lifecycle (waiting, stopping, cleaning up);
//! `lackey_run.rs` starts lackey (with or without the interposer); `process.rs` the FIFO and
//! process plumbing both backends share; `tool_run.rs` starts the tool.

mod lackey_run;
pub mod log;
pub mod preload;
mod process;
#[cfg(target_os = "linux")]
mod ring;
pub mod sentinel;
pub mod tool;
mod tool_decode;
mod tool_run;
mod tool_sampled;

pub use tool_run::{ToolOptions, ToolStream, tool_status, valgrind};
pub use tool_sampled::sample_program;

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
