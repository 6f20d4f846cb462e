//! How a recorded program ended, in words: its exit status, and the fatal signal Valgrind
//! reported with the faulting access and the program's stack.

use std::process::ExitStatus;

/// `exited with status 3`, `was killed by signal 11 (SIGSEGV)`.
pub fn describe_status(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => match signal_name(sig) {
            Some(name) => format!("was killed by signal {sig} ({name})"),
            None => format!("was killed by signal {sig}"),
        },
        (None, None) => format!("ended ({status})"),
    }
}

/// The usual name of signal `sig` on Linux.
fn signal_name(sig: i32) -> Option<&'static str> {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    NAMES
        .get(usize::try_from(sig).ok()?.checked_sub(1)?)
        .copied()
}

/// Valgrind's report of a fatal signal in its log: `Process terminating with default action of
/// signal 11 (SIGSEGV)`, the faulting access and the program's stack, without the `==PID==`
/// prefixes nor the stack-size advice Valgrind adds; `None` when the log has no such report.
pub fn crash_report(log: &str) -> Option<String> {
    let mut lines = log
        .lines()
        .map(strip_pid)
        .skip_while(|l| !l.starts_with("Process terminating with default action of signal"));
    let mut report = vec![lines.next()?.trim_end()];
    for line in lines {
        let text = line.trim();
        if text.is_empty() || text.starts_with("If you believe this happened") {
            break;
        }
        report.push(line.trim_end());
    }
    Some(report.join("\n"))
}

/// A log line without Valgrind's `==PID== ` prefix.
fn strip_pid(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("==") else {
        return line;
    };
    match rest.find("==") {
        Some(end) if rest[..end].bytes().all(|b| b.is_ascii_digit()) => {
            let rest = &rest[end + 2..];
            rest.strip_prefix(' ').unwrap_or(rest)
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
==25796== Nulgrind, the minimal Valgrind tool
==25796== Command: ./segv
==25796== 
==25796== Process terminating with default action of signal 11 (SIGSEGV)
==25796==  Access not within mapped region at address 0x0
==25796==    at 0x10917B: main (segv.c:6)
==25796==  If you believe this happened as a result of a stack
==25796==  overflow in your program's main thread (unlikely but
==25796== 
";

    #[test]
    fn the_fault_and_the_stack_are_kept_without_prefixes_or_advice() {
        assert_eq!(
            crash_report(LOG).unwrap(),
            "Process terminating with default action of signal 11 (SIGSEGV)\n \
             Access not within mapped region at address 0x0\n   at 0x10917B: main (segv.c:6)"
        );
        assert_eq!(crash_report("==1== Command: ./ok\n==1== \n"), None);
    }

    #[test]
    fn statuses_read_as_words() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            describe_status(&ExitStatus::from_raw(3 << 8)),
            "exited with status 3"
        );
        assert_eq!(
            describe_status(&ExitStatus::from_raw(11)),
            "was killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(
            describe_status(&ExitStatus::from_raw(64)),
            "was killed by signal 64"
        );
    }
}
