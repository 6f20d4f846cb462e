//! The process and FIFO plumbing both backends share: a private directory for the pipes, an
//! unblocked open when Valgrind dies first, where the program's output goes, the command line
//! for messages, spawn errors.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Error, Result, Source};

/// Opens the read end of `fifo`, which blocks until Valgrind opens the write end; a watcher
/// thread unblocks it if the program exits first (the reader then sees an empty stream).
pub(super) fn open_fifo(
    child: &Arc<Mutex<Child>>,
    fifo: &PathBuf,
    source: &Source,
) -> Result<File> {
    let opened = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (child, opened, fifo) = (child.clone(), opened.clone(), fifo.clone());
        std::thread::spawn(move || unblock_if_exited(&child, &opened, &fifo))
    };
    let file = File::open(fifo);
    opened.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    file.map_err(|e| Error::io(source, e))
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

/// Where the recorded program's standard output goes (its standard error and input stay
/// this process's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ProgramOutput {
    /// This process's standard output.
    #[default]
    Inherit,
    /// This process's standard error: an analysis printed on standard output stays apart from
    /// what the program prints.
    Stderr,
    /// Discarded (`/dev/null`).
    Null,
    /// This file, created or truncated.
    File(PathBuf),
}

impl ProgramOutput {
    /// The program's standard output (a file is created now).
    pub(super) fn stdio(&self) -> Result<std::process::Stdio> {
        use std::process::Stdio;
        Ok(match self {
            ProgramOutput::Inherit => Stdio::inherit(),
            ProgramOutput::Stderr => io::stderr().into(),
            ProgramOutput::Null => Stdio::null(),
            ProgramOutput::File(path) => File::create(path)
                .map_err(|e| Error::io(&Source::File(path.clone()), e))?
                .into(),
        })
    }
}

/// Valgrind's option that keeps its gdbserver off. By default (`--vgdb=yes`) Valgrind makes
/// FIFOs and a shared-memory file in /tmp (`vgdb-pipe-*`) for a debugger to attach, and removes
/// them at its exit: a run killed by a signal (a Ctrl-C, SIGKILL) left them behind for good.
/// Nothing here uses gdbserver, so it is off for every run, the children it follows too
/// (Valgrind passes its options on to them).
pub(super) const VGDB_OFF: &str = "--vgdb=no";

/// Turns transparent huge pages off for the Valgrind process `command` starts (and the program
/// it runs) where the kernel gives them to every anonymous region (`enabled` is `always`).
/// Valgrind reserves large areas and touches them sparsely, so there a first touch can zero
/// 2 MiB. Measured while Valgrind still parsed the system's debug files, this saved ~0.13 s of
/// `record -- /bin/true`; most of the page zeroing was those files' parsing, which the tool now
/// skips (docs/recording.md, "Start-up, second look"), so the gain left is smaller and was not
/// measured apart. Addresses, and so the trace, do not change. Under `madvise` (or `never`)
/// only regions the program asks for get huge pages, Valgrind's own none: they are left on,
/// so the program gets the huge pages it would natively and the event log can say which it
/// had (`huge_pages`, docs/tlb.md).
pub(super) fn without_huge_pages(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    if std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|s| s.contains("[always]"))
    {
        use std::os::unix::process::CommandExt;
        #[allow(unsafe_code)]
        // SAFETY: `prctl` is async-signal-safe and touches no memory of ours; its failure
        // (an old kernel) only leaves huge pages on.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Makes the named pipe `path` (mode 0600), without starting `mkfifo(1)` where the C library
/// can do it.
pub(super) fn make_fifo(path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))?;
        #[allow(unsafe_code)]
        // SAFETY: a valid NUL-terminated path and a mode; the result is checked.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        if made == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let status = std::process::Command::new("mkfifo").arg(path).status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("mkfifo(1) failed ({status})")))
        }
    }
}

/// The command line, for messages and the trace's metadata.
pub(super) fn describe(program: &OsStr, args: &[OsString]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error of a Valgrind that could not be started.
pub(super) fn spawn_error(valgrind: &OsStr, source: &Source, e: io::Error) -> Error {
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
pub(super) fn private_dir() -> io::Result<PathBuf> {
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

/// The user and system CPU time of process `pid` (fields 14 and 15 of `/proc/PID/stat`, in
/// clock ticks), or `None` where it cannot be read.
pub(super) fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, field 2, is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn cpu_time_counts_this_process_work() {
        let before = super::cpu_time(std::process::id()).expect("/proc");
        // Spin until the clock's tick (10 ms at most here) has moved.
        let start = std::time::Instant::now();
        while super::cpu_time(std::process::id()).unwrap() == before {
            assert!(start.elapsed().as_secs() < 10, "no CPU time counted");
        }
        assert!(super::cpu_time(u32::MAX).is_none());
    }
}
