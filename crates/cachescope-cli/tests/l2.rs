//! `cachescope l2`: the `points` contract with local ratios, the model against the exact
//! two-level simulation of the same pass, profiles as input, and bad sizes rejected.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

mod common;
use common::json;

const ZIPF: [&str; 6] = ["--workload", "zipf", "--lines", "8192", "--refs", "400000"];

/// The model beside the two-level simulation, a 16 KiB L1 and three L2 sizes.
const SIMULATE: [&str; 7] = [
    "l2",
    "--json",
    "--simulate",
    "--l1",
    "16K",
    "--l2",
    "64K,128K,256K",
];

#[test]
fn model_against_two_level_simulation() {
    for (policy, variant, tolerance) in [
        ("lru", "resident", 0.02),
        ("lru", "paper", 0.25),
        ("random", "footprint", 0.04),
        ("random", "fills", 0.03),
    ] {
        let v = json(
            &[
                &SIMULATE[..],
                &["--policy", policy, "--variant", variant],
                &ZIPF,
            ]
            .concat(),
        );
        assert_eq!(v["policy"], policy);
        assert_eq!(v["l1_lines"], 256);
        let (model, sim) = (
            v["points"].as_array().unwrap(),
            v["simulated"]["points"].as_array().unwrap(),
        );
        assert_eq!(model.len(), 3);
        for (m, s) in model.iter().zip(sim) {
            let (a, b) = (
                m["miss_ratio"].as_f64().unwrap(),
                s["miss_ratio"].as_f64().unwrap(),
            );
            assert!((0.0..=1.0).contains(&a));
            assert!(
                (a - b).abs() < tolerance,
                "{policy} {variant}: model {m} simulated {s}"
            );
        }
    }
}

/// The corrected reading beats the paper's on the same histogram (zipf, LRU).
#[test]
fn the_corrected_variant_beats_the_paper_reading() {
    let err = |variant: &str| -> f64 {
        let v = json(&[&SIMULATE[..], &["--variant", variant], &ZIPF].concat());
        let (m, s) = (
            v["points"].as_array().unwrap(),
            v["simulated"]["points"].as_array().unwrap(),
        );
        m.iter()
            .zip(s)
            .map(|(a, b)| {
                (a["miss_ratio"].as_f64().unwrap() - b["miss_ratio"].as_f64().unwrap()).abs()
            })
            .sum::<f64>()
            / 3.0
    };
    let (paper, resident) = (err("paper"), err("resident"));
    assert!(resident < paper / 5.0, "resident {resident} paper {paper}");
}

#[test]
fn a_sampling_profile_feeds_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("z.prof");
    let p = prof.to_str().unwrap();
    cargo_bin_cmd!("cachescope")
        .args([&["sample", "-q", "--rate", "0.05", "-o", p][..], &ZIPF].concat())
        .assert()
        .success();
    let model = [
        "l2",
        "--json",
        "--variant",
        "resident",
        "--l1",
        "16K",
        "--l2",
        "128K",
    ];
    let exact = json(&[&model[..], &ZIPF].concat());
    let sampled = json(&[&model[..], &[p]].concat());
    let (a, b) = (
        exact["points"][0]["miss_ratio"].as_f64().unwrap(),
        sampled["points"][0]["miss_ratio"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() < 0.05,
        "exact histogram {a}, StatStack histogram {b}"
    );
    cargo_bin_cmd!("cachescope")
        .args(["l2", "--simulate", p])
        .assert()
        .failure()
        .stderr(predicate::str::contains("needs the trace"));
}

/// `fills` is the default; a random L2 that holds the whole loop never evicts, and it knows.
#[test]
fn fills_is_the_default_and_counts_only_evicting_fills() {
    let args = [
        "l2",
        "--json",
        "--simulate",
        "--policy",
        "random",
        "--l1",
        "32K",
        "--l2",
        "128K",
        "--workload",
        "loop",
        "--lines",
        "1000",
        "--refs",
        "100000",
    ];
    let ratios = |v: &serde_json::Value| {
        let r = |p: &serde_json::Value| p[0]["miss_ratio"].as_f64().unwrap();
        (r(&v["points"]), r(&v["simulated"]["points"]))
    };
    let v = json(&args);
    assert_eq!(v["method"], "ji-l2-fills");
    let (model, sim) = ratios(&v);
    assert!(
        (sim - 0.01).abs() < 1e-12,
        "1000 cold misses in 100 000: {sim}"
    );
    assert!((model - sim).abs() < 1e-9, "fills {model} simulated {sim}");
    let (old, _) = ratios(&json(&[&args[..], &["--variant", "resident"]].concat()));
    assert!(old > sim + 0.005, "resident (StatCache) {old}");
}

#[test]
fn bad_sizes() {
    cargo_bin_cmd!("cachescope")
        .args(["l2", "--workload", "loop", "--l1", "32"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("smaller than one"));
    cargo_bin_cmd!("cachescope")
        .args(["l2", "--workload", "loop", "--l2", "0"])
        .assert()
        .failure();
}

/// The policies the model does not cover are not offered: `--help` lists two, and any other is
/// refused when the arguments are read, naming the two.
#[test]
fn only_the_modelled_policies_are_offered() {
    cargo_bin_cmd!("cachescope")
        .args(["l2", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("- random:").and(predicate::str::contains("- fifo:").not()),
        );
    cargo_bin_cmd!("cachescope")
        .args(["l2", "--policy", "opt"])
        .args(ZIPF)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("possible values: lru, random"));
}
