//! Trusting the recording of threaded and multi-process programs (issue 58): an output path
//! that cannot be written fails before the program runs; no run leaves Valgrind's files in
//! the temporary directory, an interrupted one included; `--trace-children` follows the
//! command a shell forks and waits for, and a note names a child that was not recorded;
//! errors share one prefix; the level `--LL` gives is called LL; prefetch counts are in the
//! table. Tests that need Valgrind, a C compiler or cachescope's tool skip with a printed
//! reason.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;

mod common;
use common::{compile_c, cs, json, tool_or_skip, with_default_signals};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A program that writes `n` counters `rounds` times: a known, sizable number of stores.
const STORES: &str = "#include <stdio.h>\nstatic volatile long a[512];\n\
    int main(void) { for (int r = 0; r < 200; r++) for (int i = 0; i < 512; i++) a[i] += i; \
    printf(\"%ld\\n\", a[7]); return 0; }";

#[test]
fn an_output_path_that_cannot_be_written_fails_before_the_program_runs() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let script = format!("touch {}", marker.display());
    for args in [
        &["record", "-o", "/nonexistent/dir/x.cst"][..],
        &["stats", "--save", "/nonexistent/dir/x.cst"],
        &["sample", "-o", "/nonexistent/dir/x.prof"],
    ] {
        let out = cs()
            .args(args)
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("/nonexistent/dir/x."), "{args:?}: {err}");
        assert!(
            !err.contains("SIGPIPE") && !err.contains("signal"),
            "{args:?}: {err}"
        );
        assert!(
            !marker.exists(),
            "{args:?}: the program ran before the error"
        );
    }
}

/// The files in `dir` that Valgrind's gdbserver makes (`vgdb-pipe-*`).
fn vgdb_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vgdb"))
        .collect()
}

#[test]
fn no_run_leaves_valgrinds_files_behind_an_interrupted_one_included() {
    if !tool_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // A run to its end, under each backend.
    for backend in ["tool", "lackey"] {
        let out = cs()
            .env("TMPDIR", tmp.path())
            .current_dir(work.path())
            .args([
                "record",
                "-q",
                "--backend",
                backend,
                "-o",
                "t.cst",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{backend}: {}", stderr(&out));
    }
    // A run stopped by Ctrl-C while the program runs: Valgrind is killed, so it cannot tidy.
    let mut command = Command::new(cargo_bin("cachescope"));
    with_default_signals(&mut command)
        .env("TMPDIR", tmp.path())
        .current_dir(work.path())
        .args(["record", "-q", "-o", "s.cst", "--", "sleep", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(vgdb_files(tmp.path()), Vec::<String>::new());
}

#[test]
fn trace_children_follows_the_command_a_shell_forks_and_waits_for() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "stores", STORES, &["-O1"]);
    let script = format!("{} > /dev/null", exe.display());
    let trace = dir.path().join("sh.cst");
    let rec = |args: &[&str], script: &str| {
        cs().args(["record", "--program-output", "null", "-o"])
            .arg(&trace)
            .args(args)
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap()
    };
    // Not followed: the shell alone, and a note naming the program its child ran.
    let out = rec(&[], &script);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("ran {}", exe.display()))
            && stderr(&out).contains("give --trace-children"),
        "{}",
        stderr(&out)
    );
    let alone = json(&["stats", trace.to_str().unwrap(), "--json"]);
    assert_eq!(alone["threads"].as_array().unwrap().len(), 1);
    // Followed: the child's references come after the shell's, as a thread of their own.
    let out = rec(&["--trace-children"], &script);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not recorded"), "{}", stderr(&out));
    let both = json(&["stats", trace.to_str().unwrap(), "--json"]);
    let threads = both["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2, "{both}");
    // 200 × 512 read-modify-writes of the array, at least.
    assert!(threads[1]["refs"].as_u64().unwrap() >= 200 * 512, "{both}");
    // The shell's own references on either side of the fork are thread 1's.
    assert!(threads[0]["refs"].as_u64().unwrap() > 0);
    // A pipeline: the first child holds the recording, the other is named as not recorded.
    let out = rec(
        &["--trace-children"],
        &format!("{} | cat > /dev/null", exe.display()),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ran /usr/bin/cat") || stderr(&out).contains("ran /bin/cat"),
        "{}",
        stderr(&out)
    );
    let piped = json(&["stats", trace.to_str().unwrap(), "--json"]);
    assert_eq!(piped["threads"].as_array().unwrap().len(), 2, "{piped}");
}

#[test]
fn a_rejected_flag_says_the_same_prefix_as_every_other_error() {
    let out = cs().args(["mrc", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("cachescope: error: unexpected argument"),
        "{}",
        stderr(&out)
    );
    let out = cs().args(["stats", "/no/such/trace"]).output().unwrap();
    assert!(stderr(&out).starts_with("cachescope: error: "));
    // Help is not an error.
    let out = cs().args(["stats", "--help"]).output().unwrap();
    assert!(out.status.success());
}

#[test]
fn the_level_ll_gives_is_called_ll_and_prefetches_are_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::generate(dir.path(), "s.cst", &["sequential"]);
    let t = trace.to_str().unwrap();
    let r = json(&[
        "simulate", t, "--I1", "32K,8,64", "--D1", "32K,8,64", "--LL", "1M,16,64", "--json",
    ]);
    let names: Vec<&str> = r["simulations"][0]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["L1I", "L1D", "LL"]);
    let r = json(&[
        "simulate",
        t,
        "--cores",
        "1",
        "--L1",
        "32K,8,64",
        "--L2",
        "256K,8,64",
        "--LL",
        "1M,16,64",
        "--json",
    ]);
    let levels: Vec<&str> = r["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["L1", "L2", "LL"]);
    let out = cs()
        .args([
            "simulate",
            t,
            "--cache",
            "32K,8,64",
            "--prefetch",
            "next-line",
        ])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("prefetches") && table.contains("useful"),
        "{table}"
    );
}
