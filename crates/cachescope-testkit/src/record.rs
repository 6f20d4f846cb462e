//! Recording a program for a test: under Valgrind's lackey, or with `cachescope record`. The
//! caller has checked that the tools exist; a recording that fails is then a failure.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::tools::tools_or_skip;

/// Records `program` (run in `dir`, or here) under Valgrind lackey into the text log `log`
/// (`--trace-mem=yes`, Valgrind's own `==pid==` lines included). The program writes into pipes,
/// read and dropped (as under `cachescope record`: programs make a few other references when
/// their output is /dev/null). False, after a skip, when Valgrind is not installed; panics
/// when the run fails.
pub fn lackey(log: &Path, program: &[&str], dir: Option<&Path>) -> bool {
    let log = format!("--log-file={}", log.display());
    valgrind(&["--tool=lackey", "--trace-mem=yes", &log], program, dir)
}

/// Runs `valgrind ARGS PROGRAM…` (in `dir`, or here), the program writing into pipes read and
/// dropped. False, after a skip, when Valgrind is not installed; panics when the run fails.
pub fn valgrind(args: &[&str], program: &[&str], dir: Option<&Path>) -> bool {
    if !tools_or_skip(&["valgrind"]) {
        return false;
    }
    let mut cmd = Command::new("valgrind");
    cmd.args(args)
        .args(program)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run valgrind: {e}"));
    assert!(
        out.status.success(),
        "valgrind {args:?} {program:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Runs `CACHESCOPE record ARGS… -o TRACE -- COMMAND…` (the binary under test at
/// `cachescope`), whatever it exits with.
pub fn record(
    cachescope: &Path,
    args: &[&str],
    trace: &Path,
    command: &[impl AsRef<OsStr>],
) -> Output {
    Command::new(cachescope)
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(trace)
        .arg("--")
        .args(command)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cachescope.display()))
}

/// [`record`], which must succeed (a failure panics with cachescope's message): the
/// program's standard output and cachescope's standard error.
pub fn record_ok(
    cachescope: &Path,
    args: &[&str],
    trace: &Path,
    command: &[impl AsRef<OsStr>],
) -> (String, String) {
    let out = record(cachescope, args, trace, command);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown: Vec<_> = command
        .iter()
        .map(|c| c.as_ref().to_string_lossy())
        .collect();
    assert!(
        out.status.success(),
        "cachescope record {args:?} -- {shown:?} failed ({}): {stderr}",
        out.status
    );
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}
