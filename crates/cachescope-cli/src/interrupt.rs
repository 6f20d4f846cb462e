//! Ctrl-C, SIGTERM and SIGHUP: stop promptly, leave no file that looks finished, exit 130.
//!
//! The first signal asks the library to stop ([`cachescope::interrupt::request`]): every pass
//! over a trace fails with `Error::Interrupted` at its next batch (milliseconds), unwinds, and
//! the temporary output files are removed by their owners (`output::Pending`). Should a
//! command be busy somewhere that does not read batches (building a model after the pass, a
//! program being recorded that ignores the signal), a second signal, or [`GRACE`] after the
//! first, removes the temporary files and exits at once.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Exit status after an interruption: 128 + SIGINT, as shells report Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long the work gets to stop on its own before the process exits anyway.
const GRACE: Duration = Duration::from_secs(3);

/// Installs the handler (once, at start-up).
pub fn install() {
    static SIGNALLED: AtomicBool = AtomicBool::new(false);
    let installed = ctrlc::set_handler(|| {
        cachescope::interrupt::request();
        if SIGNALLED.swap(true, Ordering::SeqCst) {
            force_exit();
        }
        std::thread::spawn(|| {
            std::thread::sleep(GRACE);
            force_exit();
        });
    });
    if let Err(e) = installed {
        eprintln!(
            "cachescope: warning: cannot handle Ctrl-C ({e}); an interrupted run may leave temporary files"
        );
    }
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
