//! Real programs traced by Valgrind lackey: `stats` must give exactly the counts an independent
//! count of the text gives, for every compression (made by the system's own gzip, zstd and xz)
//! and after conversion to the native format. Skips, saying why, where Valgrind is missing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;

mod common;
use common::{counts, stats_json, tools_or_skip};

/// Records `program args` with lackey, Valgrind's own `==pid==` lines mixed in (stderr log).
fn record(dir: &Path, name: &str, program: &[&str]) -> PathBuf {
    let log = dir.join(name);
    assert!(cachescope_testkit::lackey(&log, program, None));
    log
}

/// Counts by kind and distinct 64-B data lines, by a deliberately simple independent parser.
fn independent_count(path: &Path) -> [u64; 6] {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut l, mut s, mut m, mut i) = (0, 0, 0, 0);
    let mut lines = HashSet::new();
    for line in text.lines() {
        let kind = line.get(..3);
        let addr = || {
            let hex = line[3..].split(',').next().unwrap().trim();
            u64::from_str_radix(hex, 16).unwrap()
        };
        match kind {
            Some("I  ") => i += 1,
            Some(" L ") => {
                l += 1;
                lines.insert(addr() >> 6);
            }
            Some(" S ") => {
                s += 1;
                lines.insert(addr() >> 6);
            }
            Some(" M ") => {
                m += 1;
                lines.insert(addr() >> 6);
            }
            _ => assert!(
                line.starts_with("==") || line.is_empty(),
                "unexpected line {line:?}"
            ),
        }
    }
    [l + s + m, l, s, m, i, lines.len() as u64]
}

#[test]
fn stats_equal_an_independent_count_on_real_lackey_traces() {
    if !tools_or_skip(&["valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let programs: [(&str, &[&str]); 2] = [
        ("ls.txt", &["ls", "-la", "/etc"]),
        ("sort.txt", &["sort", "/etc/services"]),
    ];
    for (name, program) in programs {
        let trace = record(dir.path(), name, program);
        let want = independent_count(&trace);
        assert!(
            want[0] > 100_000,
            "{name}: suspiciously few references {want:?}"
        );
        let v = stats_json(&[trace.to_str().unwrap()]);
        assert_eq!(v["format"], "lackey");
        assert_eq!(counts(&v), want, "{name}");
        for (tool, args, ext) in [
            ("gzip", &["-k", "-f"][..], "gz"),
            ("zstd", &["-q", "-f"][..], "zst"),
            ("xz", &["-k", "-f", "-T1"][..], "xz"),
        ] {
            if !tools_or_skip(&[tool]) {
                continue;
            }
            let st = Command::new(tool).args(args).arg(&trace).status().unwrap();
            assert!(st.success());
            let compressed = PathBuf::from(format!("{}.{ext}", trace.display()));
            assert_eq!(
                counts(&stats_json(&[compressed.to_str().unwrap()])),
                want,
                "{name}.{ext}"
            );
        }
        let native = dir.path().join(format!("{name}.cst"));
        cargo_bin_cmd!("cachescope")
            .arg("convert")
            .arg(&trace)
            .arg(&native)
            .assert()
            .success();
        let nv = stats_json(&[native.to_str().unwrap()]);
        assert_eq!(nv["format"], "native");
        assert_eq!(counts(&nv), want, "{name} via native");
    }
}

/// `record` streams lackey into the native format: the same counts as a lackey file of the same
/// deterministic program, the program's stdout left alone, and its exit status reported.
#[test]
fn record_streams_a_program_into_the_native_format() {
    if !tools_or_skip(&["valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A fixed buffer and one thread: by default GNU sort sizes its buffer from the memory
    // free at the time, so two recordings on a busy machine differed by a few references.
    // (Sort also takes another path when SIGHUP or SIGINT is ignored, as under nohup or in a
    // script's background job: cachescope must pass such a disposition on, see
    // record_tool.rs's ignored_signals_stay_ignored_in_the_recorded_program.)
    let program = ["sort", "-S", "1M", "--parallel=1", "/etc/services"];
    // The reference recording writes its stdout into a pipe too: programs behave differently
    // (a few references) when stdout is /dev/null.
    let log = dir.path().join("sort.txt");
    assert!(cachescope_testkit::lackey(&log, &program, None));
    let want = independent_count(&log);
    let out = dir.path().join("sort.cst");
    // Without the allocation interposer: its loading by ld.so would add references plain
    // lackey does not see (tests/record_events.rs covers recording with it). The lackey
    // backend: the same tool as the reference run, in the same environment (the default
    // backend, cachescope's tool, is checked against lackey in the cachescope crate's
    // tests/tool_real.rs, with both run under one VALGRIND_LIB).
    let assert = cargo_bin_cmd!("cachescope")
        .args(["record", "--no-events", "--backend", "lackey"])
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(program)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let sorted = std::fs::read_to_string("/etc/services").unwrap();
    assert_eq!(
        stdout.lines().count(),
        sorted.lines().count(),
        "program stdout kept"
    );
    let v = stats_json(&[out.to_str().unwrap()]);
    assert_eq!(v["format"], "native");
    assert_eq!(counts(&v), want);

    // A failing program: its status is an error, the trace up to its exit is kept.
    let out = dir.path().join("false.cst");
    cargo_bin_cmd!("cachescope")
        .args(["record", "-q", "-o"])
        .arg(&out)
        .args(["--", "false"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("exited with"));
    assert!(out.exists());
}
