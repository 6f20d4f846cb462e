//! The report's pass fans out over worker threads (`cachescope::pass::Independent`): with 1, 2
//! and 4 of them the report is the same, report.json equal but for `elapsed_seconds` and
//! `source`, every figure byte for byte. On a terminal the stages after the pass are shown.

mod common;

use std::path::Path;

use common::cs;
use serde_json::Value;

/// The report of `args` with `threads` workers, in `dir/rep-N`: report.json, with the two
/// fields that may differ blanked, and every figure's SVG.
fn report(dir: &Path, threads: u32, args: &[&str]) -> (Value, Vec<(String, Vec<u8>)>) {
    let out = dir.join(format!("rep-{threads}"));
    cs().args(["report", "-q", "--threads", &threads.to_string(), "-o"])
        .arg(&out)
        .args(args)
        .assert()
        .success();
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    json["elapsed_seconds"] = Value::Null;
    json["source"] = Value::Null;
    let mut figures: Vec<(String, Vec<u8>)> = std::fs::read_dir(out.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    figures.sort();
    (json, figures)
}

#[test]
fn the_report_is_the_same_with_one_two_and_four_workers() {
    let dir = tempfile::tempdir().unwrap();
    // A trace with instructions and phases, long enough for every lane to see many batches.
    let args = ["--workload", "phases", "--refs", "300000", "--seed", "3"];
    let (one, figures) = report(dir.path(), 1, &args);
    assert!(figures.len() >= 5, "{figures:?}");
    assert!(one["figures"].as_array().is_some_and(|f| f.len() >= 5));
    for threads in [2, 4] {
        let (json, svgs) = report(dir.path(), threads, &args);
        assert_eq!(json, one, "report.json with {threads} workers");
        assert_eq!(svgs.len(), figures.len());
        for ((name, a), (_, b)) in figures.iter().zip(&svgs) {
            assert!(a == b, "{name} differs with {threads} workers");
        }
    }
}

#[test]
fn the_stages_after_the_pass_show_on_a_terminal() {
    // `script` gives the command a terminal for stderr (the bars stay off otherwise).
    if !common::tools_or_skip(&["script"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} report --workload phases --refs 1000000 -o {}",
        env!("CARGO_BIN_EXE_cachescope"),
        dir.path().join("rep").display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8_lossy(&out.stdout);
    // The work after the pass counts its five stages (OPT's next uses and stack, the
    // time-local footprint, random replacement, the models).
    assert!(shown.contains("after the pass ("), "{shown}");
    assert!(shown.contains("/5 done"), "{shown}");
    // Without a terminal: nothing of it.
    let quiet = cs()
        .args(["report", "--workload", "phases", "--refs", "100000", "-o"])
        .arg(dir.path().join("rep2"))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&quiet.get_output().stderr).into_owned();
    assert!(!err.contains("after the pass"), "{err}");
}
