//! Skipping a test: loud always, a failure where the need is required.

use std::io::Write;

/// The variable listing the needs whose skips are failures (comma-separated).
pub const REQUIRE_VAR: &str = "CACHESCOPE_TEST_REQUIRE";
/// The variable naming the file every skip is appended to (one line each).
pub const SKIP_LOG_VAR: &str = "CACHESCOPE_TEST_SKIP_LOG";

/// Whether `need` is listed in `CACHESCOPE_TEST_REQUIRE` (or the list says `all`).
pub fn required(need: &str) -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|list| {
        list.split(',')
            .map(str::trim)
            .any(|n| n == need || n == "all")
    })
}

/// Skips (the caller returns) the running test, which needs `need` and cannot have it:
/// `why`. Panics instead when `need` is required. The line goes to the process's standard
/// output past the harness's capture, and to the skip log when one is named.
pub fn skip(need: &str, why: &str) {
    let test = test_name();
    if required(need) {
        panic!("{test} needs {need}, which {REQUIRE_VAR} requires, but {why}",);
    }
    let line = format!("SKIPPED {test}: {why} [{need}]\n");
    // The handle, not println!: the test harness captures the macros' output of passing tests.
    let _ = std::io::stdout().lock().write_all(line.as_bytes());
    if let Some(log) = std::env::var_os(SKIP_LOG_VAR).filter(|l| !l.is_empty()) {
        // One write of one short line in append mode: lines of parallel tests do not mix.
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = appended {
            panic!(
                "cannot append to {SKIP_LOG_VAR}={}: {e}",
                std::path::Path::new(&log).display()
            );
        }
    }
}

/// `BINARY::TEST`: the test binary's name without cargo's hash (`trust`, `cachescope`), and
/// the test's (the harness names each test's thread after it).
fn test_name() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let binary = match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_owned()
        }
        _ => stem,
    };
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The environment is the process's: these tests set variables only in a child process.
    #[test]
    fn a_required_need_fails_and_another_is_logged() {
        if let Some(which) = std::env::var_os("TESTKIT_CHILD") {
            skip(which.to_str().unwrap(), "it is missing on purpose");
            return;
        }
        let dir = std::env::temp_dir().join(format!("testkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips.log");
        let _ = std::fs::remove_file(&log);
        let run = |need: &str| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "skip::tests::a_required_need_fails_and_another_is_logged",
                ])
                .env("TESTKIT_CHILD", need)
                .env(REQUIRE_VAR, "valgrind, mpi")
                .env(SKIP_LOG_VAR, &log)
                .output()
                .unwrap()
        };
        let fails = run("mpi");
        assert!(!fails.status.success());
        let passes = run("chromium");
        assert!(passes.status.success());
        let out = String::from_utf8_lossy(&passes.stdout);
        assert!(
            out.contains(
                "SKIPPED cachescope_testkit::skip::tests::a_required_need_fails_and_another_is_logged: \
                 it is missing on purpose [chromium]"
            ),
            "{out}"
        );
        let logged = std::fs::read_to_string(&log).unwrap();
        assert_eq!(logged.lines().count(), 1, "{logged}");
        assert!(logged.ends_with("[chromium]\n"), "{logged}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
