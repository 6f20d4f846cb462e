//! Ctrl-C, SIGTERM and SIGHUP: stop promptly, leave no file that looks finished, exit 130.
//!
//! The first signal asks the library to stop ([`cachescope::interrupt::request`]): every pass
//! over a trace fails with `Error::Interrupted` at its next batch (milliseconds), unwinds, and
//! the temporary output files are removed by their owners (`output::Pending`). Should a
//! command be busy somewhere that does not read batches (building a model after the pass, a
//! program being recorded that ignores the signal), a second signal, or [`GRACE`] after the
//! first, removes the temporary files and exits at once.

use std::process::ExitCode;
use std::time::Duration;

/// Exit status after an interruption: 128 + SIGINT, as shells report Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long the work gets to stop on its own before the process exits anyway.
const GRACE: Duration = Duration::from_secs(3);

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
    std::thread::spawn(move || {
        let mut signalled = false;
        for _ in signals.forever() {
            cachescope::interrupt::request();
            if std::mem::replace(&mut signalled, true) {
                force_exit();
            }
            std::thread::spawn(|| {
                std::thread::sleep(GRACE);
                force_exit();
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

fn force_exit() -> ! {
    crate::output::remove_pending_files();
    eprintln!("cachescope: interrupted");
    std::process::exit(i32::from(EXIT_INTERRUPTED));
}

/// The exit code for a failed run: 130 when it was interrupted.
pub fn exit_code(err: &anyhow::Error) -> Option<ExitCode> {
    let interrupted = cachescope::interrupt::requested()
        || err.chain().any(|c| {
            matches!(
                c.downcast_ref::<cachescope::Error>(),
                Some(cachescope::Error::Interrupted)
            )
        });
    interrupted.then_some(ExitCode::from(EXIT_INTERRUPTED))
}
