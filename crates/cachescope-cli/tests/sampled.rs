//! `--sampled` end to end: the sampled report keeps report.json's schema, names its method and
//! rate, is the same for the same seed, and at rate 1 its measured sections are the exact
//! report's; `--sampled` on mrc, simulate, sharing, phases and attribute; bad values refused.

mod common;

use common::{cs, json};
use serde_json::Value;

/// `report --sampled ARGS -o DIR --json`'s report.json.
fn report(dir: &std::path::Path, args: &[&str]) -> Value {
    let mut cmd = cs();
    cmd.arg("report").args(args).arg("-o").arg(dir).arg("-q");
    cmd.assert().success();
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// report.json without the one field that differs from run to run.
fn stable(mut v: Value) -> Value {
    v["elapsed_seconds"] = Value::Null;
    v
}

#[test]
fn sampled_report_keeps_the_schema_and_names_its_sampling() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--workload", "phases", "--sampled", "--rate", "0.05"];
    let v = report(&dir.path().join("a"), &args);
    let s = &v["sampled"];
    assert_eq!(s["rate"], 0.05);
    assert_eq!(s["seed"], 1);
    assert!(s["sampled_refs"].as_u64().unwrap() > 0);
    // The exact report's sections, each curve with its method and points.
    let methods: Vec<&str> = v["mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods[0], "combined");
    assert!(methods.contains(&"shards"));
    assert!(methods.contains(&"statstack") && methods.contains(&"statcache"));
    // HOTL's time-local reading from the reuse samples is StatStack's time-local curve
    // (docs/sampled.md, HOTL), at the report's sizes.
    let by = |m: &str| {
        let curves = v["mrc"].as_array().unwrap();
        curves.iter().find(|c| c["method"] == m).unwrap()["points"].clone()
    };
    assert_eq!(by("hotl"), by("statstack"));
    let sizes = |m: &str| -> Vec<Value> {
        let points = by(m);
        points
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["size_bytes"].clone())
            .collect()
    };
    assert_eq!(sizes("hotl"), sizes("combined"));
    for key in [
        "policies",
        "working_set",
        "fill_time",
        "three_c",
        "stack_distance",
    ] {
        assert!(!v[key].is_null(), "{key}");
    }
    assert_eq!(
        v["stats"]["refs"],
        json(&["stats", "--json", "--workload", "phases"])["refs"],
        "the spans count every reference"
    );
    // Every figure says how it was sampled.
    for f in v["figures"].as_array().unwrap() {
        assert!(
            f["caption"]
                .as_str()
                .unwrap()
                .contains("Sampled: SHARDS lines at rate 0.05")
        );
    }
    // The same seed, the same report; another seed, another sample.
    let again = report(&dir.path().join("b"), &args);
    assert_eq!(stable(v.clone()), stable(again));
    let other = report(
        &dir.path().join("c"),
        &[
            "--workload",
            "phases",
            "--sampled",
            "--rate",
            "0.05",
            "--seed",
            "2",
        ],
    );
    assert_ne!(v["mrc"][0], other["mrc"][0]);
}

#[test]
fn rate_one_measures_what_the_exact_report_measures() {
    let dir = tempfile::tempdir().unwrap();
    let w = ["--workload", "zipf", "--lines", "4096", "--refs", "200000"];
    let exact = report(&dir.path().join("e"), &w);
    let mut args = w.to_vec();
    args.extend(["--sampled", "--rate", "1"]);
    let sampled = report(&dir.path().join("s"), &args);
    assert_eq!(exact["stats"], sampled["stats"]);
    // SHARDS at rate 1 is the exact LRU curve.
    let (e, s) = (&exact["mrc"][0]["points"], &sampled["mrc"][0]["points"]);
    assert_eq!(e.as_array().unwrap().len(), s.as_array().unwrap().len());
    for (p, q) in e.as_array().unwrap().iter().zip(s.as_array().unwrap()) {
        let (a, b) = (
            p["miss_ratio"].as_f64().unwrap(),
            q["miss_ratio"].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-9, "{p} {q}");
    }
    // StatCache reads the full stream in both, the sampled report's sampler floored by the
    // decaying rule (docs/sampled.md): 200 000 references are at most 2^16 · 4, so every
    // fourth position on average where the rate 1e-3 keeps about 200.
    let (e, s) = (&exact["sampling"], &sampled["sampling"]);
    assert_eq!(
        (e["rate"].as_f64(), e["seed"].as_u64()),
        (Some(1e-3), Some(1))
    );
    assert_eq!(
        (s["rate"].as_f64(), s["seed"].as_u64()),
        (Some(0.25), Some(1))
    );
    let n = s["samples"].as_f64().unwrap();
    assert!((n - 50_000.0).abs() < 5.0 * 50_000f64.sqrt(), "{s}");
    assert!(e["samples"].as_u64().unwrap() < 300, "{e}");
}

#[test]
fn mrc_sampled_at_rate_one_is_exact() {
    let w = [
        "--workload",
        "loop",
        "--lines",
        "300",
        "--refs",
        "100000",
        "--json",
    ];
    let mut exact_args = vec!["mrc", "--range", "4K..64K"];
    exact_args.extend(w);
    let exact = json(&exact_args);
    let mut args = exact_args.clone();
    args.extend(["--sampled", "--rate", "1"]);
    let sampled = json(&args);
    assert_eq!(sampled["method"], "shards");
    for (p, q) in exact["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sampled["points"].as_array().unwrap())
    {
        assert_eq!(p["miss_ratio"], q["miss_ratio"]);
    }
}

#[test]
fn mrc_sampled_hotl_is_the_time_local_reading_of_the_reuse_samples() {
    let curve = |extra: &[&str]| {
        let mut args = vec![
            "mrc",
            "--workload",
            "phases",
            "--sampled",
            "--rate",
            "0.05",
            "--json",
        ];
        args.extend(extra);
        json(&args)
    };
    // The time-local reading (the default) is StatStack's time-local curve of the same reuse
    // samples (docs/sampled.md, HOTL), named `hotl`, as in `report --sampled`.
    let local = curve(&["--method", "hotl"]);
    let statstack = curve(&["--method", "statstack"]);
    assert_eq!(local["method"], "hotl");
    assert_eq!(statstack["method"], "statstack");
    assert_eq!(local["points"], statstack["points"]);
    // The paper's reading converts the sampled lines' footprint: another curve.
    let paper = curve(&["--method", "hotl", "--hotl-variant", "paper"]);
    assert_eq!(paper["method"], "hotl");
    assert_ne!(paper["points"], local["points"]);
}

#[test]
fn other_commands_take_sampled() {
    let w = ["--workload", "zipf", "--lines", "65536", "--refs", "400000"];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(w);
        all.extend(["--sampled", "--rate", "0.1"]);
        cs().args(&all).assert().success();
    };
    run(&["simulate", "--cache", "1M,8,64", "--json"]);
    run(&[
        "mrc", "--policy", "fifo", "--ways", "8", "--range", "256K..4M", "--json",
    ]);
    run(&["phases", "--json", "--interval", "20000"]);
    run(&["sharing", "--json"]);
    run(&["attribute", "--json"]);
    // Simulated at rate 1, a cache's misses are the exact simulation's.
    let misses = |args: &[&str]| {
        let mut all = vec![
            "simulate",
            "--workload",
            "zipf",
            "--cache",
            "64K,8,64",
            "--json",
        ];
        all.extend(args);
        json(&all)["simulations"][0]["levels"][0]["misses"].clone()
    };
    assert_eq!(misses(&[]), misses(&["--sampled", "--rate", "1"]));
}

#[test]
fn bad_sampling_values_are_refused() {
    for rate in ["0", "1.5", "-1"] {
        cs().args([
            "report",
            "--workload",
            "loop",
            "--sampled",
            &format!("--rate={rate}"),
            "-o",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .assert()
        .failure()
        .stderr(predicates::str::contains("rate"));
    }
    // Without --sampled, --sample-lines means nothing.
    cs().args(["mrc", "--workload", "loop", "--sample-lines", "100"])
        .assert()
        .failure();
    // A cache a sample cannot hold one set of.
    cs().args([
        "simulate",
        "--workload",
        "loop",
        "--cache",
        "4K,8,64",
        "--sampled",
        "--rate",
        "0.01",
    ])
    .assert()
    .failure()
    .stderr(predicates::str::contains("higher --rate"));
}

/// The terminal summary of a sampled report brackets SHARDS's points from under 256 sampled
/// lines (at rate 0.05: 4 KiB holds 3, 256 KiB 204, 2 MiB 1638), says so under the table, and
/// leaves the combined curve's alone; at rate 1 (every line sampled) and in the exact report,
/// nothing is bracketed.
#[test]
fn the_summary_brackets_shards_points_from_too_few_sampled_lines() {
    let dir = tempfile::tempdir().unwrap();
    let w = ["--workload", "zipf", "--lines", "40000", "--refs", "300000"];
    let summary = |name: &str, extra: &[&str]| {
        let out = cs()
            .arg("report")
            .args(w)
            .args(extra)
            .arg("-o")
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let s = summary("s", &["--sampled", "--rate", "0.05"]);
    let row = |name: &str| {
        let line = s
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{s}"));
        line.split_whitespace()
            .skip(2)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let shards = row("shards lru");
    let bracketed: Vec<bool> = shards.iter().map(|v| v.starts_with('(')).collect();
    assert_eq!(bracketed, [true, true, true, false, false], "{s}");
    assert!(row("combined lru").iter().all(|v| !v.contains('(')), "{s}");
    assert!(
        s.contains("in brackets: SHARDS from under 256 sampled lines"),
        "{s}"
    );
    for plain in [
        summary("r1", &["--sampled", "--rate", "1"]),
        summary("e", &[]),
    ] {
        let rows = plain
            .lines()
            .filter(|l| l.contains(" lru ") || l.contains(" random "));
        assert!(rows.clone().count() >= 2, "{plain}");
        assert!(rows.clone().all(|l| !l.contains('(')), "{plain}");
        assert!(!plain.contains("in brackets"), "{plain}");
    }
}
