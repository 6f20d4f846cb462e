//! `report --sampled --trace-children -- sh -c '…'`: a sampled run of a program follows the
//! exec of the process it started but no forked child (the tool's spatial reader takes one
//! process's stream), and says so; the reuse samplers stop at the exec (the new program counts
//! from 0), and say so, rather than hang or fail. Skips, saying so (see cachescope-testkit),
//! where Valgrind, a C compiler or the tool are missing.

mod common;

use std::time::Duration;

use common::{LOOP_2MB, compile_c, cs, tool_or_skip};
use serde_json::Value;

#[test]
fn a_sampled_run_follows_the_exec_and_names_the_forked_child_it_left_out() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "kernel", LOOP_2MB, &["-O1"]);
    let exe = exe.to_str().unwrap();
    let out_dir = dir.path().join("r");
    // The shell forks a child that runs the kernel once, then becomes the kernel itself.
    let script = format!("{exe} > /dev/null; exec {exe}");
    let out = cs()
        .args([
            "report",
            "--sampled",
            "--rate",
            "0.1",
            "--trace-children",
            "-o",
        ])
        .arg(&out_dir)
        .args(["--", "sh", "-c", &script])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("a child process that ran {exe}, not recorded"))
            && err.contains("a sampled run of a program follows no forked child"),
        "{err}"
    );
    assert!(err.contains("reuse samples stop at the exec"), "{err}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    // The exec'd kernel's references are there (the shell alone makes under 100,000).
    assert!(
        report["stats"]["refs"].as_u64().unwrap() > 900_000,
        "{}",
        report["stats"]
    );
    // No curve rests on the reuse samples, which could not be placed after the exec.
    let methods: Vec<&str> = report["mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert!(
        !methods.iter().any(|m| m.starts_with("stat")),
        "{methods:?}"
    );
    assert!(methods.contains(&"shards"), "{methods:?}");
}
