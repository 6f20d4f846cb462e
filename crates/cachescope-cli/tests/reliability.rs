//! Failure behaviour of the `cachescope` binary: an interrupted run exits 130, stopped by the
//! pass itself (or by the grace period where it is blocked), and leaves no output file
//! (finished-looking or temporary), a memory limit that would be passed is a clear error, and
//! absurd parameters are rejected with a message saying what is valid. No test times a
//! command: the waits are hang guards of two minutes.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;

mod common;
use common::{cs, with_default_signals};

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// How long a command may take to start writing or to stop before the test calls it a hang.
const HANG: Duration = Duration::from_secs(120);

/// What the message adds where the grace period, not the pass, stopped the command
/// (src/interrupt.rs's `GRACE_ENDED`).
const GRACE_ENDED: &str = "still busy 3 s after the signal, stopped at once";

/// Waits until `dir` holds a file (the temporary output) or `child` exits.
fn wait_for_output(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    while files_in(dir).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "ended before writing");
        assert!(start.elapsed() < HANG, "no output appeared in {HANG:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let it write for a moment, so the file has content.
    std::thread::sleep(Duration::from_millis(300));
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} failed");
}

/// Waits for `child` (a hang after [`HANG`]); its exit code.
fn wait_exit(child: &mut Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("still running {HANG:?} after the signal: a hang");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `child`, once it has started writing into `dir`, the signal `name`; it must exit with
/// 128 + its number and leave `dir` empty. Its standard error.
fn interrupt(dir: &Path, child: &mut Child, name: &str) -> String {
    wait_for_output(dir, child);
    signal(child, name);
    let code = wait_exit(child);
    let number = match name {
        "INT" => 2,
        "TERM" => 15,
        _ => unreachable!("a signal the tests send"),
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(code, Some(128 + number), "{stderr}");
    assert_eq!(files_in(dir), Vec::<String>::new());
    assert!(
        stderr.contains(&format!("interrupted (SIG{name})")),
        "{stderr}"
    );
    stderr
}

#[test]
fn ctrl_c_during_generate_stops_promptly_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.cst");
    // Billions of references: minutes of work, so the signal lands mid-run.
    let mut child = with_default_signals(&mut Command::new(assert_cmd::cargo::cargo_bin!(
        "cachescope"
    )))
    .args(["generate", "zipf", "--refs", "5000000000", "-q", "-o"])
    .arg(&out)
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stderr = interrupt(dir.path(), &mut child, "INT");
    // The pass checks the flag between batches: it stopped on its own, not by the grace
    // period's forced exit.
    assert!(!stderr.contains(GRACE_ENDED), "{stderr}");
}

#[test]
fn sigterm_while_blocked_on_input_still_exits_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.cst");
    let mut child = with_default_signals(&mut Command::new(assert_cmd::cargo::cargo_bin!(
        "cachescope"
    )))
    .args(["convert", "-q", "-"])
    .arg(&out)
    .stdin(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Enough hex addresses to get past format detection, then the input stays open and silent:
    // the reader blocks, so the handler's grace period has to end the process.
    let mut stdin = child.stdin.take().unwrap();
    let text: String = (0..20_000u64)
        .map(|i| format!("{:x}\n", 0x1000 + i * 8))
        .collect();
    stdin.write_all(text.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stderr = interrupt(dir.path(), &mut child, "TERM");
    // No batch comes to check the flag: the grace period ended it.
    assert!(stderr.contains(GRACE_ENDED), "{stderr}");
    drop(stdin);
}

#[test]
fn a_memory_limit_that_would_be_passed_is_a_clear_error() {
    for cmd in [
        &["stats"][..],
        &["mrc", "--sizes", "64K"][..],
        &["footprint", "--windows", "10"][..],
    ] {
        cs().args(cmd)
            .args([
                "--workload",
                "random",
                "--lines",
                "2000000",
                "--refs",
                "4000000",
            ])
            .args(["--max-memory", "4M", "-q"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("memory limit of 4.0 MiB exceeded"))
            .stderr(predicate::str::contains("--max-memory"));
    }
    // The same run fits in a larger limit.
    cs().args([
        "stats",
        "--workload",
        "random",
        "--lines",
        "2000000",
        "--refs",
        "4000000",
    ])
    .args(["--max-memory", "1G", "-q"])
    .assert()
    .success();
}

#[test]
fn the_3c_classifier_set_counts_against_the_memory_limit() {
    // 2 M distinct lines: the simulation alone fits in 8 MiB, its 3C classifier's set of lines
    // seen does not.
    let run = |three_c: bool| {
        let mut c = cs();
        c.args(["simulate", "--workload", "random", "--lines", "2000000"])
            .args(["--refs", "4000000", "--cache", "32K,8,64"])
            .args(["--max-memory", "8M", "-q"]);
        if three_c {
            c.arg("--3c");
        }
        c.assert()
    };
    run(false).success();
    run(true)
        .code(1)
        .stderr(predicate::str::contains("memory limit of 8.0 MiB exceeded"));
}

/// Every absurd parameter is refused before any work, naming what is valid.
#[test]
fn absurd_parameters_are_rejected_with_what_is_valid() {
    let cases: &[(&str, &str)] = &[
        ("stats --workload zipf --threads 0", "threads"),
        ("stats --workload zipf --line-size 48", "power of two"),
        ("stats --workload zipf --line-size 0", "power of two"),
        (
            "stats --workload zipf --line-size 12Q",
            "expected K, M or G",
        ),
        ("stats --workload zipf --max-memory 0", "above 0"),
        (
            "stats --workload zipf --max-memory 12Q",
            "expected K, M or G",
        ),
        ("simulate --workload zipf --cache 0,8,64", "size"),
        (
            "simulate --workload zipf --cache 32K,3,64",
            "ways that work",
        ),
        ("simulate --workload zipf --cache 32K,8,48", "power of two"),
        (
            "simulate --workload zipf --cache 32K,0,64",
            "at least one way",
        ),
        (
            "simulate --workload zipf --cache 32K,8,64 --policy lfu",
            "lru",
        ),
        (
            "mrc --workload zipf --method statcache --rate 1.5",
            "(0, 1]",
        ),
        ("mrc --workload zipf --method statcache --rate 0", "(0, 1]"),
        (
            "mrc --workload zipf --method statcache --rate=-0.5",
            "(0, 1]",
        ),
        (
            "mrc --workload zipf --method statcache --rate NaN",
            "(0, 1]",
        ),
        ("mrc --workload zipf --method statstack --slot 0", "slot"),
        ("mrc --workload zipf --sizes 0", "at least one line"),
        ("mrc --workload zipf --per-octave 3", "power of two"),
        ("mrc --workload zipf --per-octave 0", "power of two"),
        ("mrc --workload zipf --range 64M..4K", "LO <= HI"),
        ("mrc --workload zipf --ways 0", "ways"),
        ("sample --workload zipf --rate 2 -o x.prof", "(0, 1]"),
        ("footprint --workload zipf --windows 0", "window"),
        (
            "footprint --workload zipf --refs 1000 --windows 5000",
            "longer than the trace",
        ),
        ("footprint --workload zipf --per-octave 0", "power of two"),
        ("hotl --workload zipf --reuse-windows 2", "(0, 1]"),
        ("hotl --workload zipf --sample 0", "sample"),
        ("hotl --workload zipf --direct-fill-time 0", "fill"),
        ("l2 --workload zipf --l1 0", "l1"),
        ("l2 --workload zipf --l2 0", "l2"),
        ("phases --workload phases --interval 0", "interval"),
        ("phases --workload phases --k 0", "k"),
        ("phases --workload phases --k 5..2", "k"),
        ("phases --workload phases --bits 0", "bits"),
        ("phases --workload phases --bits 9", "bits"),
        ("phases --workload phases --l2 1M,3,64", "ways that work"),
        ("generate zipf --lines 0 -o x.cst", "lines"),
        ("generate stride --stride 0 -o x.cst", "stride"),
        ("generate matmul --n 0 -o x.cst", "n"),
        ("generate matmul-tiled --tile 0 -o x.cst", "tile"),
        ("generate zipf --zipf-s NaN -o x.cst", "zipf"),
        ("generate zipf --zipf-s=-1 -o x.cst", "zipf"),
        ("generate zipf --refs 0 -o x.cst", "refs"),
        (
            "corun a.cst a.cst --cache 0",
            "positive number of 64-B lines",
        ),
        ("corun a.cst a.cst --cache 1M --ways 3", "ways that work"),
        (
            "corun a.cst a.cst --cache 1M --rates 1",
            "one rate per program",
        ),
        ("corun a.cst a.cst --cache 1M --rates=0,1", "positive"),
        ("corun a.cst a.cst --cache 1M --rates=NaN,1", "positive"),
    ];
    let dir = tempfile::tempdir().unwrap();
    cs().current_dir(dir.path())
        .args(["generate", "zipf", "--refs", "20000", "-q", "-o", "a.cst"])
        .assert()
        .success();
    let mut failures = Vec::new();
    for (line, hint) in cases {
        let out = cs()
            .current_dir(dir.path())
            .args(line.split(' '))
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ok = out.status.code() == Some(1) || out.status.code() == Some(2);
        if !ok
            || !stderr.to_lowercase().contains(&hint.to_lowercase())
            || stderr.contains("panicked")
        {
            failures.push(format!("{line}: exit {:?}: {stderr}", out.status.code()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was written for the refused runs.
    assert_eq!(files_in(dir.path()), vec!["a.cst".to_string()]);
}
