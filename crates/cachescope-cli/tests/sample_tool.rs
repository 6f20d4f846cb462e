//! Sampled capture: `sample -- PROG` and `mrc --method statstack|statcache -- PROG` sample
//! inside cachescope's Valgrind tool. The profile must equal sampling the full trace of the
//! same run with the same options. The kernel is linked statically so that two runs make the
//! same references and a recorded run stands for the sampled one: a dynamically linked program
//! is not deterministic under Valgrind, because ld.so's word-at-a-time `strcspn` reads past the
//! end of the last string on the stack into bytes that change per run and indexes a table
//! with them (a handful of loads whose lines differ, enough to change a curve's last digits).
//! Skips with a printed reason where Valgrind, a C compiler or the tool are missing.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::Value;

mod common;
use common::{compile_c, cs, tool_or_skip};

/// A kernel with reuse at several distances, a forked child whose references are not the
/// parent's, a guarded-free amd64 build, and an exit status of 3.
const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static long a[40000];
int main(void) {
    pid_t p = fork();
    if (p == 0) { for (int r = 0; r < 5; r++) for (int i = 0; i < 40000; i++) a[i] += i; _exit(0); }
    waitpid(p, 0, 0);
    long s = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 40000; i += 1 + r) { a[(i * 7) % 40000] += i; s += a[i]; }
    printf("program output %ld\n", s);
    return 3;
}"#;

/// Runs cachescope with `args`; its stdout as JSON (or text), and its stderr. Status 3 is a
/// success whose program failed: the kernel exits with 3.
fn run(args: &[&OsStr]) -> (String, String) {
    let out = cs().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(matches!(out.status.code(), Some(0 | 3)), "{err}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn sampling_inside_the_tool_equals_sampling_the_full_trace() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "kernel", PROGRAM, &["-O1", "-static"]);
    let trace = dir.path().join("full.cst");
    // record says the program exited with 3 and ends with status 3 (results written, the
    // program failed), the trace complete up to the exit.
    let out = cs()
        .args(["record", "-q", "--backend", "tool", "--no-events", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(trace.exists());
    let configs: [&[&str]; 4] = [
        &["--rate", "0.01", "--seed", "7"],
        &["--rate", "1"],
        &[
            "--rate",
            "0.05",
            "--line-size",
            "32",
            "--include-instructions",
        ],
        &["--rate", "0.001", "--slot", "5000"],
    ];
    for config in configs {
        let live = dir.path().join("live.prof");
        let offline = dir.path().join("offline.prof");
        let cfg: Vec<&OsStr> = config.iter().map(|s| os(s)).collect();
        let mut args = vec![os("sample"), os("--json"), os("-o"), live.as_os_str()];
        args.extend(&cfg);
        args.extend([os("--"), exe.as_os_str()]);
        let (live_json, err) = run(&args);
        // The program's output went to stderr, and its exit status is noted.
        assert!(err.contains("program output"), "{err}");
        assert!(err.contains("exited with"), "{err}");
        let mut args = vec![os("sample"), os("--json"), os("-o"), offline.as_os_str()];
        args.extend(&cfg);
        args.push(trace.as_os_str());
        let (offline_json, _) = run(&args);
        let (a, b): (Value, Value) = (
            serde_json::from_str(&live_json).unwrap(),
            serde_json::from_str(&offline_json).unwrap(),
        );
        for k in [
            "refs",
            "samples",
            "reuses",
            "dangling",
            "slots",
            "line_size",
        ] {
            assert_eq!(a[k], b[k], "{k} with {config:?}");
        }
        assert!(a["samples"].as_u64().unwrap() > 20, "{config:?}: {a}");
        // Every sample and its distance: the models' curves from both profiles are identical.
        for method in ["statstack", "statcache"] {
            let curve = |p: &Path| {
                let mut args = vec![os("mrc"), os("--method"), os(method), os("--csv")];
                if config.contains(&"32") {
                    args.extend([os("--line-size"), os("32")]);
                }
                args.push(p.as_os_str());
                run(&args).0
            };
            assert_eq!(curve(&live), curve(&offline), "{method} with {config:?}");
        }
    }
}

#[test]
fn mrc_from_a_running_program_samples_inside_the_tool() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "kernel", PROGRAM, &["-O1", "-static"]);
    let trace = dir.path().join("full.cst");
    let (live, _) = run(&[
        os("mrc"),
        os("--method"),
        os("statstack"),
        os("--rate"),
        os("0.01"),
        os("--csv"),
        os("--save"),
        trace.as_os_str(),
        os("--"),
        exe.as_os_str(),
    ]);
    // --save needs the full stream: sampled from it as it passes. Without --save the tool
    // samples: the same curve.
    let (in_tool, _) = run(&[
        os("mrc"),
        os("--backend"),
        os("tool"),
        os("--method"),
        os("statstack"),
        os("--rate"),
        os("0.01"),
        os("--csv"),
        os("--"),
        exe.as_os_str(),
    ]);
    assert_eq!(live, in_tool);
    assert!(live.lines().count() > 3, "{live}");
}

#[test]
fn a_program_that_cannot_run_is_named() {
    if !tool_or_skip() {
        return;
    }
    let out = cs()
        .args(["sample", "-o", "/dev/null", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/program"), "{err}");
}

#[test]
fn valgrind_killed_while_sampling_leaves_no_profile() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Under Valgrind the program is the Valgrind process: a forked child's SIGKILL stops the
    // tool before its end record.
    let exe = compile_c(
        dir.path(),
        "killed",
        "#include <signal.h>\n#include <unistd.h>\nint main(void){ pid_t p = getpid(); \
         if (fork() == 0) { kill(p, SIGKILL); _exit(0); } for (;;) sleep(1); }",
        &[],
    );
    let prof = dir.path().join("k.prof");
    let out = cs()
        .args(["sample", "--backend", "tool", "--rate", "0.5", "-o"])
        .arg(&prof)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without its end record"), "{err}");
    assert!(!prof.exists(), "a profile of a cut run was written");
}
