//! One owner for the lives of the programs this process records: however it stops (an error,
//! a signal to its pid alone, its own death), Valgrind and every process the program forked
//! stop with it.
//!
//! Valgrind stays in this process's process group, so that a terminal's Ctrl-C and Ctrl-Z reach
//! it as they reach cachescope, and a program reading the terminal is not stopped as a
//! background job would be. A recording is therefore stopped as a tree found through `/proc`
//! (each process's parent): every process in it stopped first (a stopped process cannot fork
//! a child the walk would miss), then all killed. Every running recording is listed here
//! ([`register`]), so that a process that is stopping (the CLI's signal handler) kills them all
//! at once ([`kill_all`]) and, when it cannot wait for their owners to unwind, removes their
//! directories ([`remove_all_dirs`]). `PR_SET_PDEATHSIG` kills Valgrind itself should this
//! process die without running any of this (SIGKILL); the program's forked children and the
//! temporary directory then stay.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A running recording: its Valgrind and its temporary directory.
struct Live {
    child: Weak<Mutex<Child>>,
    dir: PathBuf,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lock(child: &Mutex<Child>) -> MutexGuard<'_, Child> {
    child
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Lists a started recording (`dir` is its own: it identifies it).
pub(super) fn register(child: &Arc<Mutex<Child>>, dir: &Path) {
    live().push(Live {
        child: Arc::downgrade(child),
        dir: dir.to_owned(),
    });
}

/// Forgets a recording whose Valgrind has been reaped.
pub(super) fn unregister(dir: &Path) {
    live().retain(|l| l.dir != dir);
}

/// Kills every program this process is recording, with the processes they forked: for a
/// process that is stopping (a signal). Their readers then see their streams end; their owners
/// still reap them and remove their directories as they unwind.
pub fn kill_all() {
    for l in live().iter() {
        // Gone: its owner dropped it, and reaped it.
        if let Some(child) = l.child.upgrade() {
            kill_running(&child);
        }
    }
}

/// Removes the temporary directory of every recording not yet cleaned up by its owner: what a
/// process exiting without unwinding does after [`kill_all`].
pub fn remove_all_dirs() {
    for l in live().drain(..) {
        let _ = std::fs::remove_dir_all(&l.dir);
    }
}

/// Kills `child`'s tree if it still runs. Under its lock nobody reaps it, so its pid cannot
/// be another process's while the signals are sent (the lock is only ever held briefly: see
/// [`wait`]).
pub(super) fn kill_running(child: &Mutex<Child>) {
    let mut child = lock(child);
    if matches!(child.try_wait(), Ok(None)) {
        #[cfg(target_os = "linux")]
        kill_tree(child.id());
        #[cfg(not(target_os = "linux"))]
        let _ = child.kill();
    }
}

/// Waits for `child` to exit without holding its lock meanwhile, so that [`kill_all`] can
/// still kill it: blocks in `waitid(WNOWAIT)`, which leaves it unreaped (its pid stays its
/// own), then reaps it under the lock.
pub(super) fn wait(child: &Mutex<Child>) -> io::Result<ExitStatus> {
    #[cfg(target_os = "linux")]
    {
        let pid = lock(child).id();
        loop {
            #[allow(unsafe_code)]
            // SAFETY: `siginfo_t` is plain data, zero is a valid value; waitid only writes it.
            let done = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            // ECHILD: already reaped (by the FIFO watcher's `try_wait`): `wait` has its status.
            if done == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
    }
    lock(child).wait()
}

/// Makes the process `command` starts die when the thread that starts it ends (the kernel's
/// `PR_SET_PDEATHSIG`, which is per thread: the CLI starts recordings on its main thread, so
/// this is its death). Kept across Valgrind's own execs; not inherited by forked children.
pub(super) fn die_with_parent(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        #[allow(unsafe_code)]
        // SAFETY: prctl and getppid are async-signal-safe, allocate nothing and touch no
        // memory of ours.
        unsafe {
            command.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // The parent died before the prctl: nothing would kill this process later.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Stops `root` and every process descended from it, then kills them all.
#[cfg(target_os = "linux")]
fn kill_tree(root: u32) {
    let mut tree = vec![root];
    signal(root, libc::SIGSTOP);
    // Each round stops the children of the processes stopped so far; a few suffice (the
    // bound only guards against a /proc that keeps changing).
    for _ in 0..64 {
        let new = children(&tree);
        if new.is_empty() {
            break;
        }
        for &pid in &new {
            signal(pid, libc::SIGSTOP);
        }
        tree.extend(new);
    }
    for &pid in &tree {
        signal(pid, libc::SIGKILL);
    }
}

#[cfg(target_os = "linux")]
fn signal(pid: u32, sig: libc::c_int) {
    #[allow(unsafe_code)]
    // SAFETY: kill(2) on a pid; an error (the process is gone) is ignored.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// The processes whose parent is in `of` and which are not in it themselves.
#[cfg(target_os = "linux")]
fn children(of: &[u32]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !of.contains(pid))
        .filter(|&pid| parent(pid).is_some_and(|p| of.contains(&p)))
        .collect()
}

/// The parent of `pid`, from `/proc/PID/stat` (`pid (comm) state ppid …`; the command name
/// may hold spaces and parentheses, so the fields are counted from its last `)`).
#[cfg(target_os = "linux")]
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_tree_dies_whole() {
        // A shell whose child loops: both gone after kill_tree, though only the shell is ours.
        let mut sh = Command::new("sh")
            .args(["-c", "sh -c 'while :; do sleep 1; done' & wait"])
            .spawn()
            .unwrap();
        let root = sh.id();
        let start = std::time::Instant::now();
        let child = loop {
            if let Some(&c) = children(&[root]).first() {
                break c;
            }
            assert!(start.elapsed().as_secs() < 10, "the shell never forked");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        kill_tree(root);
        assert!(sh.wait().unwrap().code().is_none(), "killed by a signal");
        // The orphan was killed too: gone, or a zombie until init reaps it.
        let start = std::time::Instant::now();
        while running(child) {
            assert!(start.elapsed().as_secs() < 10, "the child {child} lives on");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn running(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
    }

    #[test]
    fn parents_are_read_past_odd_command_names() {
        assert_eq!(
            parent(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }
}
