//! How a run ends: the one place that turns its outcome into the last words on stderr and the
//! exit status (docs/reliability.md).
//!
//! | status | when |
//! | --- | --- |
//! | 0 | success, a closed stdout pipe included (`cachescope … \| head`) |
//! | 1 | an error: its message and causes, each said once |
//! | 2 | a flag clap rejects (clap prints the usage and exits itself) |
//! | 3 | the results were written, but the program run after `--` failed: exited non-zero or was killed by a signal; a note says how, with Valgrind's report of a crash |
//! | 128 + N | signal N stopped the run (130 SIGINT, 143 SIGTERM, 129 SIGHUP) |

use std::process::ExitCode;
use std::sync::Mutex;

use cachescope::record::{Finished, describe_status};

/// The exit status of a run whose results are written but whose program failed.
pub const EXIT_PROGRAM_FAILED: u8 = 3;

/// How the program run after `--` failed, once it has: the note printed at the end.
static PROGRAM_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Notes how the program `description` ended. A failure (a non-zero exit, a signal) makes
/// the run end with [`EXIT_PROGRAM_FAILED`] after its results, and a note saying how, with
/// Valgrind's report of a crash (the fault and the program's stack).
pub fn program_ended(description: &str, finished: &Finished) {
    if finished.status.success() {
        return;
    }
    let mut note = format!(
        "`{description}` {}; the results cover its references until then",
        describe_status(&finished.status)
    );
    if let Some(crash) = &finished.crash {
        note.push_str(". Valgrind reported:");
        for line in crash.lines() {
            note.push_str("\n    ");
            note.push_str(line);
        }
    }
    *PROGRAM_FAILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(note);
}

/// Prints the outcome of `result` and returns the exit status.
pub fn finish(result: anyhow::Result<()>) -> ExitCode {
    let failed = PROGRAM_FAILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    // A signal that also reached the program (a terminal's Ctrl-C reaches the group) can end
    // the run as if the program had merely failed: it is still an interruption.
    let result = match result {
        Ok(()) if cachescope::interrupt::requested() => Err(cachescope::Error::Interrupted.into()),
        other => other,
    };
    match result {
        Ok(()) => match failed {
            Some(note) => {
                eprintln!("cachescope: note: {note}");
                ExitCode::from(EXIT_PROGRAM_FAILED)
            }
            None => ExitCode::SUCCESS,
        },
        Err(err) if crate::output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            if let Some(status) = crate::interrupt::interrupted_status(&err) {
                eprintln!("cachescope: {}", crate::interrupt::message());
                return ExitCode::from(status);
            }
            // The program's end explains what followed (a trace cut short, say).
            if let Some(note) = failed {
                eprintln!("cachescope: note: {note}");
            }
            eprintln!("cachescope: error: {}", message(&err));
            ExitCode::FAILURE
        }
    }
}

/// Ends the run on a command line clap rejects (status 2) or answers itself (`--help`,
/// `--version`: status 0), its error under the same `cachescope: error:` prefix as every
/// other error.
pub fn clap_exit(e: clap::Error) -> ! {
    if !e.use_stderr() {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    eprint!("cachescope: error: {text}");
    std::process::exit(e.exit_code());
}

/// The error and its causes, joined with `: `, each said once: a cause whose text is already
/// in the message (the library's I/O errors name their cause in their own text, a context may
/// repeat its cause) is left out.
pub fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let lib = cachescope::Error::io(&cachescope::Source::File("missing.cst".into()), io);
        let err = anyhow::Error::from(lib).context("opening the trace");
        assert_eq!(
            message(&err),
            "opening the trace: missing.cst: entity not found"
        );
    }
}
