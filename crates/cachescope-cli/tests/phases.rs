//! `cachescope phases`: the JSON contract, the planted phases of the `phases` workload and of
//! a recorded C program found, and bad parameters rejected.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::{json, tools_or_skip};

const PLANTED: [&str; 12] = [
    "phases",
    "--workload",
    "phases",
    "--lines",
    "384",
    "--interval",
    "2048",
    "--k",
    "3",
    "--l2",
    "8K,4,64",
    "--method",
];

#[test]
fn json_contract_and_planted_phases() {
    let out = cargo_bin_cmd!("cachescope")
        .args(PLANTED)
        .args(["setvector,reuse-distance,activity", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let methods = v["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 3);
    for m in methods {
        for field in ["name", "poec", "cov", "sigma_weighted"] {
            assert!(m.get(field).is_some(), "{field} missing in {m}");
        }
    }
    // Six segments of 6·64·384/6 = 24 576 references: 72 intervals of 2048.
    let intervals = v["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 72);
    for (i, iv) in intervals.iter().enumerate() {
        assert_eq!(iv["index"], i as u64);
        let h = iv["l2_hit_rate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&h));
        assert!(iv["phases"]["setvector"].is_u64());
    }
    // Setvectors recover the planted loop / stream / random segments exactly.
    assert_eq!(methods[0]["name"], "setvector");
    assert_eq!(methods[0]["poec"], 1.0);
    // Representative-interval simulation ran: its extrapolated miss ratio is close.
    let sp = &methods[0]["simpoint"];
    assert!(sp["error"].as_f64().unwrap().abs() < 0.01, "{sp}");
}

#[test]
fn table_has_scores_summary_and_timeline() {
    cargo_bin_cmd!("cachescope")
        .args(PLANTED)
        .arg("setvector")
        .assert()
        .success()
        .stdout(predicate::str::contains("PoEC"))
        .stdout(predicate::str::contains("phases found by setvector"))
        .stdout(predicate::str::contains("L2 hit rate"));
}

#[test]
fn bad_parameters_say_what_is_valid() {
    for (flag, value, says) in [
        ("--k", "0", "number of phases"),
        ("--method", "fourier", "fourier"),
        ("--interval", "3", "shorter than 16"),
        ("--l2", "1M,3,64", "invalid cache geometry"),
        ("--bits", "9", "bits"),
    ] {
        cargo_bin_cmd!("cachescope")
            .args(["phases", "--workload", "loop", flag, value])
            .assert()
            .failure()
            .stderr(predicate::str::contains(says));
    }
}

/// examples/phases/planted.c, compiled and recorded at a 64 KiB scale (1/16 of its default):
/// setvectors find its stream, sweep and random phases despite the stream's far larger
/// footprint (issue 20: PoEC about 0.4, at this scale and at full scale, when magnitudes were
/// clustered raw).
#[test]
fn recorded_program_with_planted_phases() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = include_str!("../../../examples/phases/planted.c");
    let exe = common::compile_c(dir.path(), "planted", src, &["-O2"]);
    let trace = dir.path().join("planted.cst");
    common::record_ok(
        &["-q", "--no-events"],
        &trace,
        &[exe.as_os_str(), "64".as_ref()],
    );
    let trace = trace.to_str().unwrap();
    // 1 M instructions and a 1 MiB L2, scaled by 1/16.
    let v = json(&[
        "phases",
        trace,
        "--k",
        "3",
        "--l2",
        "64K,16,64",
        "--interval",
        "62500",
        "--method",
        "setvector,setvector-vector,reuse-distance",
        "--no-simpoint",
        "--json",
    ]);
    let poec: Vec<f64> = (0..3)
        .map(|i| v["methods"][i]["poec"].as_f64().unwrap())
        .collect();
    // Both setvector methods; reuse distances, between 0.8 and 0.96 here as the program's
    // addresses move, for comparison in the message.
    assert!(poec[0] >= 0.9 && poec[1] >= 0.9, "{poec:?}");
}

/// `phases` and the report share their defaults (k, interval, L2, methods), so one trace gives
/// one set of scores: the report's phase section equals `phases --json` with no flags, and
/// states its k and interval in report.json and on the page.
#[test]
fn report_phase_section_agrees_with_phases_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cst");
    let t = trace.to_str().unwrap();
    cargo_bin_cmd!("cachescope")
        .args(["generate", "phases", "--lines", "2048", "-q", "-o", t])
        .assert()
        .success();
    let phases = json(&["phases", t, "--json", "-q"]);
    let out = dir.path().join("r");
    cargo_bin_cmd!("cachescope")
        .args(["report", t, "-q", "-o", out.to_str().unwrap()])
        .assert()
        .success();
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let section = &report["phases"];
    assert_eq!(section["interval"], phases["settings"]["interval"]);
    assert_eq!(section["k"], phases["settings"]["k"]["fixed"]);
    let intervals = section["intervals"].as_array().unwrap();
    assert_eq!(
        intervals.len(),
        phases["intervals"].as_array().unwrap().len()
    );
    assert!(intervals.len() >= 4, "{}", intervals.len());
    let methods = phases["methods"].as_array().unwrap();
    assert_eq!(section["methods"].as_array().unwrap().len(), methods.len());
    for (r, p) in section["methods"].as_array().unwrap().iter().zip(methods) {
        assert_eq!(r["name"], p["name"]);
        assert_eq!(r["poec"], p["poec"], "{}", p["name"]);
        assert_eq!(r["cov"], p["cov"], "{}", p["name"]);
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let k = &phases["settings"]["k"]["fixed"];
    let stated = format!(
        "k = {k} phases (setvector) over {} intervals of 100000",
        intervals.len()
    );
    assert!(html.contains(&stated), "the page does not say `{stated}`");
}
