//! Regions of interest: examples/roi/roi.c brackets a 64 KiB loop with CACHESCOPE_START() and
//! CACHESCOPE_STOP() (include/cachescope.h) after a 4 MiB set-up; `--collect-atstart=no`
//! records the loop alone, on `record` and on an analysing command's `-- PROGRAM`; without
//! the flag the whole run is recorded, and without Valgrind the program runs as usual.
//! examples/roi/toggle.c calls one helper from a recursive `hot` over 64 KiB and from set-ups
//! over 4 MiB: `--toggle-collect=hot` records the helper's references under `hot` alone.

mod common;

use std::path::Path;

use common::{cs, json, tool_or_skip};

fn distinct(v: &serde_json::Value) -> u64 {
    v["distinct_lines"].as_u64().unwrap()
}

#[test]
fn only_the_region_is_recorded_with_collect_atstart_no() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let include = format!("-I{}", root.join("include").display());
    let (exe, t) = common::record_c_program(
        dir.path(),
        &root.join("examples/roi/roi.c"),
        &[&include],
        &["--backend", "tool", "--collect-atstart=no"],
    );
    // Without Valgrind the requests are no-ops.
    let native = std::process::Command::new(&exe).output().unwrap();
    assert!(native.status.success());
    let roi = json(&["stats", "--json", t.to_str().unwrap()]);
    // The loop: 8 rounds of a load and a store on each of 1,024 lines, and the requests' few.
    assert!((1024..1100).contains(&distinct(&roi)), "{roi}");
    assert!(
        (16_384..16_600).contains(&roi["refs"].as_u64().unwrap()),
        "{roi}"
    );
    // An analysing command's live program takes the flag too.
    let live = json(&[
        "stats",
        "--json",
        "--collect-atstart=no",
        "--",
        exe.to_str().unwrap(),
    ]);
    // The same references; the requests' stack slots may fall on one line more or less (the
    // stack starts elsewhere when the environment differs).
    assert_eq!(live["refs"], roi["refs"]);
    assert!(distinct(&live).abs_diff(distinct(&roi)) <= 2, "{live}");
    // By default the set-up's 4 MiB is there too.
    let all = json(&["stats", "--json", "--", exe.to_str().unwrap()]);
    assert!(distinct(&all) > 65_536, "{all}");
}

#[test]
fn collect_atstart_no_needs_the_tool() {
    cs().args([
        "stats",
        "--collect-atstart=no",
        "--backend",
        "lackey",
        "--",
        "/bin/true",
    ])
    .assert()
    .failure()
    .stderr(predicates::str::contains(
        "--collect-atstart=no needs the tool backend",
    ));
}

#[test]
fn only_calls_under_the_function_are_recorded_with_toggle_collect() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (exe, t) = common::record_c_program(
        dir.path(),
        &root.join("examples/roi/toggle.c"),
        &[],
        &["--backend", "tool", "--toggle-collect=hot"],
    );
    let hot = json(&["stats", "--json", t.to_str().unwrap()]);
    // 8 calls of `hot`, each recursing 3 levels then calling `touch` on 1,024 lines: the
    // call's store, touch's load and store, the return's load. Some 300 more for `hot`'s own
    // frames; nothing of the set-ups, which call the same `touch` on 65,536 other lines.
    assert!((1024..1040).contains(&distinct(&hot)), "{hot}");
    let refs = hot["refs"].as_u64().unwrap();
    assert!((32_768..33_400).contains(&refs), "{hot}");
    // Valgrind's wildcards, on an analysing command's program: the same references.
    let live = json(&[
        "stats",
        "--json",
        "--toggle-collect=h?t",
        "--",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(live["refs"], hot["refs"]);
    // A function that never runs: nothing recorded.
    let none = json(&[
        "stats",
        "--json",
        "--toggle-collect=no_such_function",
        "--",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(none["refs"], 0, "{none}");
    // With the region flag too: both must hold, and toggle.c has no region, so nothing.
    let both = json(&[
        "stats",
        "--json",
        "--toggle-collect=hot",
        "--collect-atstart=no",
        "--",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(both["refs"], 0, "{both}");
}

#[test]
fn toggle_collect_needs_the_tool() {
    cs().args([
        "stats",
        "--toggle-collect=main",
        "--backend",
        "lackey",
        "--",
        "/bin/true",
    ])
    .assert()
    .failure()
    .stderr(predicates::str::contains(
        "--toggle-collect needs the tool backend",
    ));
}

/// A region that never opens records nothing, and the recording says why rather than writing
/// an empty trace (or printing a curve of zeros) without a word.
#[test]
fn a_region_that_never_opens_is_noted() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.cst");
    let out = cs()
        .args(["record", "--toggle-collect=no_such_function", "-o"])
        .arg(&t)
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "nothing was recorded: no function named by --toggle-collect (no_such_function) ran"
        ),
        "{err}"
    );
    let out = cs()
        .args(["mrc", "--collect-atstart=no", "--", "/bin/true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing was recorded: --collect-atstart=no"),
        "{err}"
    );
    // Said once: the curve's own note (nothing to count) is not added to it.
    assert!(!err.contains("by convention"), "{err}");
    // A run that records is not noted.
    let out = cs().args(["mrc", "--", "/bin/true"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("nothing was recorded"));
}
