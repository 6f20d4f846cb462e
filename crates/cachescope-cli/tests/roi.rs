//! Regions of interest: examples/roi/roi.c brackets a 64 KiB loop with CACHESCOPE_START() and
//! CACHESCOPE_STOP() (include/cachescope.h) after a 4 MiB set-up; `--collect-atstart=no`
//! records the loop alone, on `record` and on an analysing command's `-- PROGRAM`; without
//! the flag the whole run is recorded, and without Valgrind the program runs as usual.

mod common;

use std::path::Path;

use common::{cs, json, tools_or_skip};

fn distinct(v: &serde_json::Value) -> u64 {
    v["distinct_lines"].as_u64().unwrap()
}

#[test]
fn only_the_region_is_recorded_with_collect_atstart_no() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let include = format!("-I{}", root.join("include").display());
    let Some((exe, t)) = common::record_c_program(
        dir.path(),
        &root.join("examples/roi/roi.c"),
        &[&include],
        &["--collect-atstart=no"],
    ) else {
        return;
    };
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
