//! Helpers shared by the CLI tests: running the binary, reading its JSON, generating traces
//! and looking for system tools. Each test file takes it with `mod common;` and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// Records `ls /` under Valgrind lackey (about 780 000 lines with instruction fetches: a dozen
/// native blocks) into `dir/ls.lackey`; `None`, with a printed reason, without Valgrind.
pub fn record_ls(dir: &Path) -> Option<PathBuf> {
    if !tools_or_skip(&["valgrind"]) {
        return None;
    }
    let log = dir.join("ls.lackey");
    let status = std::process::Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .args(["ls", "/"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "valgrind failed");
    Some(log)
}

/// The `cachescope` binary under test.
pub fn cs() -> assert_cmd::Command {
    cargo_bin_cmd!("cachescope")
}

/// Runs `cachescope ARGS`, which must succeed, and parses its stdout as JSON.
pub fn json(args: &[&str]) -> Value {
    let out = cs().args(args).assert().success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// `cachescope stats --json ARGS`.
pub fn stats_json(args: &[&str]) -> Value {
    let out = cs()
        .arg("stats")
        .arg("--json")
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    serde_json::from_slice(&out.stdout).expect("stats --json prints JSON")
}

/// The counts of `stats --json` every reader must agree on.
pub fn counts(v: &Value) -> [u64; 6] {
    [
        "refs",
        "loads",
        "stores",
        "modifies",
        "instructions",
        "distinct_lines",
    ]
    .map(|k| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    })
}

/// `cachescope generate ARGS -o dir/name`; returns the path written.
pub fn generate(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    cs().arg("generate")
        .args(args)
        .arg("-o")
        .arg(&path)
        .assert()
        .success();
    path
}

/// Whether `tool` is installed (answers `--version`).
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether every one of `tools` is installed; if one is not, says which, for the test to skip.
pub fn tools_or_skip(tools: &[&str]) -> bool {
    for &tool in tools {
        if !have(tool) {
            eprintln!("skipping: {tool} is not installed");
            return false;
        }
    }
    true
}

/// Whether cachescope's own Valgrind tool can run here (Valgrind and cc installed, the tool
/// built and runnable); if not, says why, for the test to skip.
pub fn tool_or_skip() -> bool {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return false;
    }
    match cachescope::record::tool_status() {
        Ok(_) => true,
        Err(why) => {
            eprintln!("skipping: cachescope's Valgrind tool cannot run: {why}");
            false
        }
    }
}

/// Compiles the C `source` into `dir/NAME` with `cc FLAGS…`; panics with cc's message when it
/// fails.
pub fn compile_c(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let exe = dir.join(name);
    let out = std::process::Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The names of the buckets of an `attribute --json` report.
pub fn names(r: &Value) -> Vec<String> {
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The bucket called `name` of an `attribute --json` report.
pub fn bucket<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no bucket {name} in {:?}", names(r)))
}

/// Starts `command`'s process with SIGINT, SIGTERM and SIGHUP at their default dispositions
/// and unblocked, for a test that sends it one. A test suite run in the background (`nohup
/// bash scripts/test.sh &`) starts with SIGINT ignored, which every child inherits, and
/// cachescope leaves a signal it was started ignoring alone (src/interrupt.rs): the test's
/// signal would then never arrive.
pub fn with_default_signals(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    #[allow(unsafe_code)]
    // SAFETY: signal and sigprocmask are async-signal-safe, allocate nothing and touch only
    // the new process's dispositions and mask.
    unsafe {
        command.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        })
    }
}

/// Compiles the pthreads C program `src` (`cc -O1 -g -pthread`) in `dir` and records it with
/// `cachescope record` into `dir/NAME.cst`; `None`, with a printed reason, when recording
/// fails (the caller has checked that Valgrind and cc exist).
pub fn record_threads_program(dir: &Path, src: &Path) -> Option<PathBuf> {
    record_c_program(dir, src, &["-pthread"], &[]).map(|(_, trace)| trace)
}

/// Compiles the C program `src` (`cc -O1 -g CFLAGS…`) in `dir` and records it with
/// `cachescope record RECORD_ARGS…` into `dir/NAME.cst`: the executable and the trace, or
/// `None`, with a printed reason, when recording fails.
pub fn record_c_program(
    dir: &Path,
    src: &Path,
    cflags: &[&str],
    record_args: &[&str],
) -> Option<(PathBuf, PathBuf)> {
    let name = src.file_stem().unwrap().to_str().unwrap();
    let exe = dir.join(name);
    let cc = std::process::Command::new("cc")
        .args(["-O1", "-g"])
        .args(cflags)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .status()
        .unwrap();
    assert!(cc.success(), "cc {}", src.display());
    let trace = dir.join(format!("{name}.cst"));
    let rec = cs()
        .args(["record", "-q"])
        .args(record_args)
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    if !rec.status.success() {
        eprintln!(
            "skipping: record failed: {}",
            String::from_utf8_lossy(&rec.stderr)
        );
        return None;
    }
    Some((exe, trace))
}

/// `examples/threads/NAME.c`.
pub fn threads_example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/threads/{name}.c"))
}
