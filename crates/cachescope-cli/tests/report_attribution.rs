//! `cachescope report` on a trace with an event log beside it: the attribution section (its
//! table and the evicted-by heatmap) appears, with the numbers `attribute` gives; without the
//! log it is left out.

use std::path::Path;

use assert_cmd::Command;
use cachescope::Source;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventKind, EventWriter, Header};
use serde_json::Value;

mod common;

/// (Return addresses name the call site, one byte before: 0x1000 → 0xfff.)
/// Two sweeps over a 256 KiB heap block, 32 bytes apart (one load per line of the paper's
/// 64 KiB, 4-way, 32-byte cache): every load misses, and every eviction is by the block itself.
fn trace(dir: &Path) -> std::path::PathBuf {
    let mut s = String::new();
    for _ in 0..2 {
        for i in 0..(256 << 10) / 32u64 {
            s.push_str(&format!(" L {:08x},8\n", 0x100_0000 + 32 * i));
        }
    }
    let path = dir.join("t.txt");
    std::fs::write(&path, s).unwrap();
    path
}

fn report(trace: &Path, out: &Path) -> Value {
    report_on(trace, out, 2)
}

fn report_on(trace: &Path, out: &Path, threads: usize) -> Value {
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg(trace)
        .arg("-o")
        .arg(out)
        .arg("-q")
        .arg("--threads")
        .arg(threads.to_string())
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// Writes an event log beside `trace`: one heap block over the sweeps' 256 KiB.
fn event_log(trace: &Path) {
    let log = trace.with_extension("txt.events");
    let header = Header {
        cachescope_events: EVENTS_VERSION,
        program: "test".into(),
        run: String::new(),
    };
    let mut w = EventWriter::new(
        std::fs::File::create(&log).unwrap(),
        Source::File(log.clone()),
        &header,
    )
    .unwrap();
    w.write(&Event {
        position: 0,
        kind: EventKind::Alloc {
            addr: 0x100_0000,
            size: 256 << 10,
            stack: vec![0x1000, 0x2000],
        },
    })
    .unwrap();
    w.finish().unwrap();
}

#[test]
fn the_event_log_adds_attribution_and_its_heatmap() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());

    let without = report(&t, &dir.path().join("plain"));
    assert!(without.get("attribution").is_none(), "no log, no section");

    event_log(&t);

    let out = dir.path().join("with");
    let r = report(&t, &out);
    let a = &r["attribution"];
    assert_eq!(a["cache"], "64 KiB, 4-way, 32 B lines");
    let first = &a["structures"][0];
    assert_eq!(first["name"], "0xfff-0x1fff");
    assert_eq!(first["refs"], 16384);
    assert_eq!(first["misses"], 16384, "every load misses");
    let m = &a["evicted_by"];
    let i = m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n == "0xfff-0x1fff")
        .unwrap();
    assert_eq!(m["rows"], m["cols"]);
    assert_eq!(m["values"][i][i], 100.0, "the block evicts only itself");
    assert!(out.join("figures/evicted-by.svg").is_file());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("evicted-by"));
}

/// The attribution reads its event log on the thread of the group it runs in: one thread
/// and two give the same report (the analysis time aside).
#[test]
fn attribution_on_two_threads_equals_one() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    event_log(&t);
    let mut one = report_on(&t, &dir.path().join("one"), 1);
    let mut two = report_on(&t, &dir.path().join("two"), 2);
    assert!(one.get("attribution").is_some());
    for r in [&mut one, &mut two] {
        r.as_object_mut().unwrap().remove("elapsed_seconds");
    }
    assert_eq!(one, two);
}

/// `report -- PROGRAM` reads the program's events from the tool's stream as it runs, and so has
/// the attribution section: mgrid's `resid` stencil, whose global grids U, V and R take the
/// misses. The trace is kept only with `--save`, and the live report equals the report of the
/// trace and event log it saved. Skips, saying why, without gcc, Valgrind or the interposer.
#[test]
fn report_of_a_program_records_its_events_and_attributes() {
    if !common::tools_or_skip(&["gcc", "valgrind"]) {
        return;
    }
    if let Err(searched) = cachescope::record::preload::locate() {
        common::skip(
            "preload",
            &format!("the interposer is not built ({searched})"),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/attribution/resid.c");
    let exe = dir.path().join("resid");
    common::compile_c_file(&src, &exe, &["-g", "-O1", "-no-pie"]);
    // Without --save the trace the pass wrote as the program ran is not kept.
    let bare = dir.path().join("bare");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg("-o")
        .arg(&bare)
        .args(["--interval", "20K", "-q", "--"])
        .arg(&exe)
        .args(["16", "1"])
        .assert()
        .success();
    let mut kept: Vec<_> = std::fs::read_dir(&bare)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["figures", "report.html", "report.json"]);
    let out = dir.path().join("r");
    let trace = dir.path().join("resid.cst");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg("-o")
        .arg(&out)
        .arg("--save")
        .arg(&trace)
        .args(["--interval", "20K", "-q", "--"])
        .arg(&exe)
        .args(["16", "1"])
        .assert()
        .success();
    assert!(trace.is_file(), "--save keeps the recorded trace");
    assert!(
        dir.path().join("resid.cst.events").is_file(),
        "with its event log"
    );
    let r: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(
        r["source"].as_str().unwrap().contains("resid 16 1"),
        "{}",
        r["source"]
    );
    // The report made as the program ran (events from the tool's stream) is the report of
    // the trace and event log it saved.
    let again = dir.path().join("again");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg(&trace)
        .arg("-o")
        .arg(&again)
        .args(["--interval", "20K", "-q"])
        .assert()
        .success();
    let mut from_file: Value =
        serde_json::from_slice(&std::fs::read(again.join("report.json")).unwrap()).unwrap();
    let mut live = r.clone();
    for field in ["elapsed_seconds", "source", "format"] {
        live.as_object_mut().unwrap().remove(field);
        from_file.as_object_mut().unwrap().remove(field);
    }
    assert_eq!(live, from_file);
    let names: Vec<&str> = r["attribution"]["structures"]
        .as_array()
        .expect("an attribution section")
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for grid in ["U", "V", "R"] {
        assert!(names.contains(&grid), "{grid} in {names:?}");
    }
    assert!(out.join("figures/evicted-by.svg").is_file());
    // The same numbers as `attribute` on the kept trace (the report's cache is the paper's).
    let attributed: Value = serde_json::from_slice(
        &Command::cargo_bin("cachescope")
            .unwrap()
            .arg("attribute")
            .arg(&trace)
            .args(["--json", "-q"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let misses = |name: &str, rows: &Value| -> u64 {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .map_or(0, |b| b["misses"].as_u64().unwrap())
    };
    for grid in ["U", "V", "R"] {
        assert_eq!(
            misses(grid, &r["attribution"]["structures"]),
            misses(grid, &attributed["buckets"]),
            "{grid}"
        );
    }
}

#[test]
fn sampled_report_attributes_by_the_per_structure_sample_of_the_trace() {
    // The block's 8,192 lines fit the default budget: at rate 0.01 the sampled report's
    // attribution is `attribute --per-structure`'s, and both are the exact report's.
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    event_log(&t);
    let out = dir.path().join("sampled");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg(&t)
        .args([
            "--sampled",
            "--per-structure",
            "--rate",
            "0.01",
            "--seed",
            "3",
            "-q",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    // The flag reads the trace file again with its log: not without --sampled.
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg(&t)
        .args(["--per-structure", "-q", "-o"])
        .arg(dir.path().join("refused"))
        .assert()
        .failure()
        .stderr(predicates::str::contains("--per-structure needs --sampled"));
    // Without it, the uniform line sample's, as its note says.
    let uniform = dir.path().join("uniform");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg(&t)
        .args(["--sampled", "--rate", "0.01", "--seed", "3", "-q", "-o"])
        .arg(&uniform)
        .assert()
        .success();
    let u: Value =
        serde_json::from_slice(&std::fs::read(uniform.join("report.json")).unwrap()).unwrap();
    assert!(
        u["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("the attribution: the uniform line sample at rate")),
        "{:?}",
        u["notes"]
    );
    let sampled: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let est: Value = serde_json::from_slice(
        &Command::cargo_bin("cachescope")
            .unwrap()
            .arg("attribute")
            .arg(&t)
            .args(["--per-structure", "0.01", "--seed", "3", "--json", "-q"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let exact = report(&t, &dir.path().join("exact"));
    let rows = sampled["attribution"]["structures"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let b = est["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in attribute's buckets"));
        assert_eq!(row["misses"], b["misses"], "{name}");
        assert_eq!(row["refs"], b["refs"], "{name}");
    }
    assert_eq!(
        sampled["attribution"]["structures"],
        exact["attribution"]["structures"]
    );
    // 16,384 misses, every load: the sweeps' two passes over 8,192 lines.
    assert_eq!(rows[0]["misses"], 16_384);
    let notes = sampled["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("per-structure line sample of the full trace, 8192 lines at rate 1")),
        "{notes:?}"
    );
}

/// `report --sampled -- PROGRAM` keeps the uniform line sample for its attribution and its
/// note says so (the tool's filter knows no structures). Skips as the test above.
#[test]
fn a_live_sampled_report_names_its_uniform_attribution() {
    if !common::tools_or_skip(&["gcc", "valgrind"]) {
        return;
    }
    if let Err(searched) = cachescope::record::preload::locate() {
        common::skip(
            "preload",
            &format!("the interposer is not built ({searched})"),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/attribution/resid.c");
    let exe = dir.path().join("resid");
    common::compile_c_file(&src, &exe, &["-g", "-O1", "-no-pie"]);
    let out = dir.path().join("r");
    Command::cargo_bin("cachescope")
        .unwrap()
        .arg("report")
        .arg("-o")
        .arg(&out)
        .args(["--sampled", "--rate", "0.5", "-q", "--"])
        .arg(&exe)
        .args(["16", "1"])
        .assert()
        .success();
    let r: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(r["attribution"]["structures"].as_array().is_some());
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("the attribution: the uniform line sample at rate")),
        "{notes:?}"
    );
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("per-structure line sample of")),
        "{notes:?}"
    );
}
