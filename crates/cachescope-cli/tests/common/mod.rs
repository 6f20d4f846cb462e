//! Helpers shared by the CLI tests: running the binary, reading its JSON, generating traces;
//! looking for system tools, compiling C and recording come from `cachescope-testkit`. Each
//! test file takes it with `mod common;` and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// Records `ls /` under Valgrind lackey (about 780 000 lines with instruction fetches: a dozen
/// native blocks) into `dir/ls.lackey`; `None`, after a skip, without Valgrind.
pub fn record_ls(dir: &Path) -> Option<PathBuf> {
    let log = dir.join("ls.lackey");
    cachescope_testkit::lackey(&log, &["ls", "/"], None).then_some(log)
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

// Finding tools, compiling C and skipping: one implementation for every crate's tests.
#[allow(unused_imports)]
pub use cachescope_testkit::{
    chromium_or_skip, compile_c, compile_c_file, have, skip, tool_or_skip, tools_or_skip,
};

/// The `cachescope` binary under test, by path (for the testkit's helpers).
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cachescope"))
}

/// `cachescope record ARGS… -o TRACE -- COMMAND…`, which must succeed: the program's
/// standard output and cachescope's standard error.
pub fn record_ok(
    args: &[&str],
    trace: &Path,
    command: &[impl AsRef<std::ffi::OsStr>],
) -> (String, String) {
    cachescope_testkit::record_ok(bin(), args, trace, command)
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
/// `cachescope record --backend tool` (lackey does not tell threads apart) into
/// `dir/NAME.cst`. The caller has checked that the tool runs ([`tool_or_skip`]); a failure
/// is a failure.
pub fn record_threads_program(dir: &Path, src: &Path) -> PathBuf {
    record_c_program(dir, src, &["-pthread"], &["--backend", "tool"]).1
}

/// Compiles the C program `src` (`cc -O1 -g CFLAGS…`) in `dir` and records it with
/// `cachescope record -q RECORD_ARGS…` into `dir/NAME.cst`: the executable and the trace. The
/// caller has checked that Valgrind and cc exist: a compilation or recording that fails
/// panics with the message.
pub fn record_c_program(
    dir: &Path,
    src: &Path,
    cflags: &[&str],
    record_args: &[&str],
) -> (PathBuf, PathBuf) {
    let name = src.file_stem().unwrap().to_str().unwrap();
    let exe = dir.join(name);
    let flags: Vec<&str> = ["-O1", "-g"].iter().chain(cflags).copied().collect();
    compile_c_file(src, &exe, &flags);
    let trace = dir.join(format!("{name}.cst"));
    let args: Vec<&str> = ["-q"].iter().chain(record_args).copied().collect();
    record_ok(&args, &trace, &[&exe]);
    (exe, trace)
}

/// Writes `refs` (thread, access), in this order, as the native trace `dir/NAME`.
pub fn threaded_trace(
    dir: &Path,
    name: &str,
    refs: &[(cachescope::ThreadId, cachescope::Access)],
) -> PathBuf {
    use cachescope::trace::native::{Header, Writer};
    let path = dir.join(name);
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::default()).unwrap();
    let mut b = cachescope::Batch::new();
    for &(t, a) in refs {
        b.set_thread(t);
        b.push(a);
        if b.is_full() {
            w.write_batch(&b).unwrap();
            b.clear();
        }
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

/// `examples/threads/NAME.c`.
pub fn threads_example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/threads/{name}.c"))
}

/// The nine totals of the `summary:` line of Cachegrind's output file at `path` (`Ir I1mr
/// ILmr Dr D1mr DLmr Dw D1mw DLmw`; only `Ir` under `--cache-sim=no`).
pub fn cachegrind_summary(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text.lines().find(|l| l.starts_with("summary:")).unwrap();
    line["summary:".len()..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

/// The entry of `report["structures"]` (attribute's or whatif's JSON) named `name`.
pub fn structure<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["structures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["structure"] == name)
        .unwrap_or_else(|| panic!("no structure {name}: {report:#}"))
}

/// `report ARGS -o dir/NAME -- exe`, which must succeed; its report.json without the one
/// field that differs from run to run (`elapsed_seconds`).
pub fn live_report_json(dir: &Path, name: &str, args: &[&str], exe: &Path) -> Value {
    let out = dir.join(name);
    cs().arg("report")
        .arg("-q")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(exe)
        .assert()
        .success();
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("elapsed_seconds");
    v
}

/// A C program looping over 2 MB (about a million data references), long enough to cross
/// several batches of a live run.
pub const LOOP_2MB: &str = r#"#include <stdio.h>
static long a[250000];
int main(void) {
    long s = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 250000; i += 1 + r) { a[(i * 7) % 250000] += i; s += a[i]; }
    printf("%ld\n", s);
    return 0;
}"#;
