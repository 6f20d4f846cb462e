//! Ctrl-C, SIGTERM and SIGHUP: stop promptly, leave no file that looks finished and no program
//! running, exit with 128 + the signal's number (130, 143, 129), as shells report it.
//!
//! The first signal asks the library to stop ([`cachescope::interrupt::request`]): every pass
//! over a trace fails with `Error::Interrupted` at its next batch (milliseconds), unwinds, and
//! the temporary output files are removed by their owners (`output::Pending`). It also kills
//! every program being recorded, with what it forked ([`cachescope::record::kill_all`]): a
//! signal sent to cachescope's pid alone never reaches them, and a reader blocked on their pipe
//! then sees the stream end. Should a command be busy somewhere that does not read batches
//! (building a model after the pass, waiting on a silent stdin), a second signal, or [`GRACE`]
//! after the first, removes the temporary files and directories and exits at once.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// How long the work gets to stop on its own before the process exits anyway.
const GRACE: Duration = Duration::from_secs(3);

/// The first signal received (0: none), as the handling thread saw it.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The last signal received (0: none), set in the signal handler itself, so it is known before
/// the handling thread wakes.
static LATEST: LazyLock<Arc<AtomicUsize>> = LazyLock::new(|| Arc::new(AtomicUsize::new(0)));

/// Installs the handler (once, at start-up). A signal this process was started ignoring
/// (SIGHUP under `nohup`, SIGINT for a background job of a script) stays ignored: the
/// disposition passes to the programs cachescope records, which must behave as they would
/// without it (GNU sort, for one, takes another path when SIGHUP is ignored).
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let ignored = ignored_signals();
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| ignored & (1u64 << (s - 1)) == 0)
        .collect();
    let mut signals = match signal_hook::iterator::Signals::new(&wanted) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "cachescope: warning: cannot handle Ctrl-C ({e}); an interrupted run may leave temporary files"
            );
            return;
        }
    };
    // In the handler itself: the library's stop flag and the signal's number.
    for &signal in &wanted {
        let set =
            signal_hook::flag::register(signal, cachescope::interrupt::flag()).and_then(|_| {
                signal_hook::flag::register_usize(signal, Arc::clone(&LATEST), signal as usize)
            });
        if let Err(e) = set {
            eprintln!("cachescope: warning: cannot handle signal {signal} at once ({e})");
        }
    }
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let first = SIGNAL
                .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            cachescope::interrupt::request();
            cachescope::record::kill_all();
            if !first {
                force_exit("");
            }
            std::thread::spawn(|| {
                std::thread::sleep(GRACE);
                force_exit(GRACE_ENDED);
            });
        }
    });
}

/// The signals this process ignores, as the kernel's bit mask (bit `n − 1` for signal `n`),
/// read from `/proc/self/status`; none where it cannot be read.
fn ignored_signals() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .unwrap_or(0)
}

/// What the message adds when [`GRACE`] ran out: the work did not stop on its own (so the
/// tests can tell which way a command stopped without timing it).
pub const GRACE_ENDED: &str = ": still busy 3 s after the signal, stopped at once";

/// Exits without unwinding: the recorded programs killed, their directories, the uncommitted
/// temporary files and the directories this run created removed; `why` follows the message.
fn force_exit(why: &str) -> ! {
    cachescope::record::kill_all();
    cachescope::record::remove_all_dirs();
    crate::output::remove_pending_files();
    crate::output::remove_created_dirs();
    eprintln!("cachescope: {}{why}", message());
    std::process::exit(i32::from(exit_status()));
}

/// `interrupted (SIGTERM)`.
pub fn message() -> String {
    match received() {
        Some(signal_hook::consts::SIGINT) => "interrupted (SIGINT)".into(),
        Some(signal_hook::consts::SIGTERM) => "interrupted (SIGTERM)".into(),
        Some(signal_hook::consts::SIGHUP) => "interrupted (SIGHUP)".into(),
        _ => "interrupted".into(),
    }
}

/// The first signal the handling thread saw, else the one the handler noted, if any.
fn received() -> Option<i32> {
    match (SIGNAL.load(Ordering::SeqCst), LATEST.load(Ordering::SeqCst)) {
        (first, _) if first > 0 => Some(first),
        (_, latest) if latest > 0 => i32::try_from(latest).ok(),
        _ => None,
    }
}

/// 128 + the first signal's number; 130 (SIGINT's) when the library was asked to stop
/// otherwise.
fn exit_status() -> u8 {
    let signal = received().unwrap_or(signal_hook::consts::SIGINT);
    128 + u8::try_from(signal).unwrap_or(2)
}

/// The exit status of a failed run that was interrupted (see [`exit_status`]), `None` for any
/// other failure.
pub fn interrupted_status(err: &anyhow::Error) -> Option<u8> {
    let interrupted = cachescope::interrupt::requested()
        || err.chain().any(|c| {
            matches!(
                c.downcast_ref::<cachescope::Error>(),
                Some(cachescope::Error::Interrupted)
            )
        });
    interrupted.then(exit_status)
}
