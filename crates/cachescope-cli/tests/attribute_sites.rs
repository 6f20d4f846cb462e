//! `cachescope attribute` on a recorded program whose allocation sites share source lines:
//! two `malloc`s on one line and one function called twice on one line are four buckets,
//! numbered in their order on the line; the Cachegrind-format output names the recorded
//! program's command line and refuses a line size it would not simulate. Skips, saying why,
//! where Valgrind or a C compiler is missing.

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use serde_json::Value;

mod common;
use common::{compile_c, cs, names, tools_or_skip};

const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>
static double *make(size_t n) {
    double *p = malloc(n * sizeof *p);
    if (!p) abort();
    return p;
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2048;
    double *a = malloc(n * sizeof *a), *b = malloc(2 * n * sizeof *b); /* TWO_MALLOCS */
    double *c = make(n), *d = make(n); /* TWO_CALLS */
    double s = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < n; i++) {
            a[i] = i; b[2 * i] = i; c[i] = i; d[i] = i;
            s += a[i] + b[i] + c[i] + d[i];
        }
    printf("%f\n", s);
    free(a); free(b); free(c); free(d);
    return 0;
}
"#;

fn line_of(marker: &str) -> usize {
    PROGRAM.lines().position(|l| l.contains(marker)).unwrap() + 1
}

/// Compiles and records [`PROGRAM`] (`prog 2048`) into `dir/t.cst` with its event log.
fn recorded(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return None;
    }
    let exe = compile_c(dir, "prog", PROGRAM, &["-g", "-O0"]);
    let trace = dir.join("t.cst");
    cs().args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .arg("2048")
        .assert()
        .success();
    Some((exe, trace))
}

fn attribute(trace: &Path, extra: &[&str]) -> std::process::Output {
    cs().arg("attribute")
        .arg(trace)
        .args(["--json", "-q"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn sites_sharing_a_line_are_told_apart_and_cachegrind_out_names_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = recorded(dir.path()) else {
        return;
    };
    let cg = dir.path().join("t.cg");
    let out = attribute(
        &trace,
        &[
            "--cache",
            "1K,2,32",
            "--cachegrind-out",
            cg.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = names(&r);
    for marker in ["TWO_MALLOCS", "TWO_CALLS"] {
        let on_line = format!("prog.c:{})", line_of(marker));
        let mut sites: Vec<&String> = all.iter().filter(|n| n.contains(&on_line)).collect();
        sites.sort();
        assert_eq!(sites.len(), 2, "{marker}: {all:?}");
        assert!(
            sites[0].ends_with("#1") && sites[1].ends_with("#2"),
            "{sites:?}"
        );
        for s in &sites {
            let misses = common::bucket(&r, s)["misses"].as_u64().unwrap();
            assert!(misses > 0, "{s} has no misses");
        }
    }
    // The recorded program's command line, from the event log, not the trace's name.
    let text = std::fs::read_to_string(&cg).unwrap();
    let cmd = text.lines().find(|l| l.starts_with("cmd: ")).unwrap();
    assert_eq!(cmd, format!("cmd: {} 2048", exe.display()));
}

#[test]
fn cachegrind_out_refuses_a_line_size_it_would_not_simulate() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("z.cst");
    cs().args(["generate", "zipf", "--refs", "10000", "-q", "-o"])
        .arg(&trace)
        .assert()
        .success();
    let cg = dir.path().join("z.cg");
    let out = attribute(
        &trace,
        &[
            "--cache",
            "1K,2,32",
            "--line-size",
            "128",
            "--cachegrind-out",
            cg.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--line-size 128") && err.contains("--cache 1K,2,128"),
        "{err}"
    );
    assert!(!cg.exists());
    // 64, the default's value, given explicitly, is a request too.
    let out = attribute(&trace, &["--cache", "1K,2,32", "--line-size", "64"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--line-size 64"));
    // Without --line-size nothing is asked: --cache's 32-byte lines are simulated.
    assert!(attribute(&trace, &["--cache", "1K,2,32"]).status.success());
    // The line size of --cache is the one simulated and written.
    let out = attribute(
        &trace,
        &[
            "--cache",
            "1K,2,128",
            "--line-size",
            "128",
            "--cachegrind-out",
            cg.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&cg).unwrap();
    assert!(
        text.starts_with("desc: D1 cache:         1024 B, 128 B, 2-way"),
        "{text}"
    );
}

/// The source files of `fl=` lines of a Cachegrind-format file.
fn files_named(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("fl="))
        .filter(|f| *f != "???")
        .map(str::to_owned)
        .collect()
}

/// Real Cachegrind names the C library's code from its separate debug file
/// (`/usr/lib/debug/.build-id/…`, libc6-dbg); so does `--cachegrind-out`, found the same way.
/// Skips where Cachegrind names no C library source (no debug package installed).
#[test]
fn library_code_is_named_from_separate_debug_files_as_cachegrind_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = recorded(dir.path()) else {
        return;
    };
    let real = dir.path().join("cachegrind.out");
    let status = Std::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=yes", "-q"])
        .arg(format!("--cachegrind-out-file={}", real.display()))
        .arg(&exe)
        .arg("2048")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let want: Vec<String> = files_named(&std::fs::read_to_string(&real).unwrap())
        .into_iter()
        .filter(|f| !f.ends_with("prog.c"))
        .collect();
    if want.is_empty() {
        common::skip(
            "libc-debug",
            "Cachegrind names no library source (no separate debug files: libc6-dbg)",
        );
        return;
    }
    let cg = dir.path().join("t.cg");
    let out = attribute(
        &trace,
        &[
            "--cache",
            "1K,2,32",
            "--cachegrind-out",
            cg.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = files_named(&std::fs::read_to_string(&cg).unwrap());
    let shared = want.iter().filter(|f| ours.contains(*f)).count();
    // Cachegrind's run starts the program once more, outside the recording, so a few
    // files differ; most of its library sources must be ours too.
    assert!(
        2 * shared >= want.len(),
        "{shared} of Cachegrind's {} library source files named: {want:?} against {ours:?}",
        want.len()
    );
}
