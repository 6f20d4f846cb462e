//! `footprint`, `hotl`, `mrc --method hotl|hotl-rt` and `corun`: the JSON contracts, exact
//! footprints against brute force, HOTL against the exact curve, and co-run from saved profiles.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::json;

/// Brute force: the average number of distinct lines over every window of `w` references.
fn brute_fp(lines: &[u64], w: usize) -> f64 {
    let windows = lines.len() - w + 1;
    let total: usize = (0..windows)
        .map(|i| {
            let mut v = lines[i..i + w].to_vec();
            v.sort_unstable();
            v.dedup();
            v.len()
        })
        .sum();
    total as f64 / windows as f64
}

#[test]
fn footprint_json_is_exact_at_listed_windows() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    // A small irregular trace in plain hex: lines i*i mod 37 for 600 references.
    let lines: Vec<u64> = (0..600u64).map(|i| (i * i + 3 * i) % 37).collect();
    let text: String = lines.iter().map(|l| format!("{:#x}\n", l * 64)).collect();
    std::fs::write(&trace, text).unwrap();
    let v = json(&[
        "footprint",
        "--json",
        "--windows",
        "1,2,7,100,599,600",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(v["refs"], 600);
    assert_eq!(
        v["distinct_lines"],
        lines.iter().collect::<std::collections::HashSet<_>>().len()
    );
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    for p in points {
        let w = p["window"].as_u64().unwrap() as usize;
        let got = p["footprint"].as_f64().unwrap();
        assert!((got - brute_fp(&lines, w)).abs() < 1e-9, "fp({w}) = {got}");
    }
    // The default grid: 256 windows per octave, non-decreasing.
    let v = json(&["footprint", "--json", trace.to_str().unwrap()]);
    let fps: Vec<f64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["footprint"].as_f64().unwrap())
        .collect();
    assert!(fps.len() > 256);
    assert!(fps.windows(2).all(|w| w[0] <= w[1] + 1e-12));
}

#[test]
fn hotl_curve_matches_exact_lru_on_a_loop_and_a_zipf_stream() {
    // A loop: fp(w) = min(w, K), a step miss-ratio curve, which HOTL reproduces.
    let sizes = ["--sizes", "4K,6336,6400,8K"];
    let args = ["--workload", "loop", "--lines", "100", "--refs", "50000"];
    let exact = json(&[&["mrc", "--json"][..], &sizes, &args].concat());
    let hotl = json(&[&["mrc", "--json", "--method", "hotl"][..], &sizes, &args].concat());
    assert_eq!(hotl["method"], "hotl");
    for (e, h) in exact["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(hotl["points"].as_array().unwrap())
    {
        for f in ["miss_ratio", "miss_ratio_warm"] {
            let d = (e[f].as_f64().unwrap() - h[f].as_f64().unwrap()).abs();
            assert!(d < 0.003, "{f}: exact {e} hotl {h}");
        }
    }
    // Zipf: within a percentage point on average.
    let args = ["--workload", "zipf", "--lines", "4096", "--refs", "400000"];
    let sizes = ["--range", "1K..512K"];
    let exact = json(&[&["mrc", "--json"][..], &sizes, &args].concat());
    for method in ["hotl", "hotl-rt"] {
        let model = json(&[&["mrc", "--json", "--method", method][..], &sizes, &args].concat());
        let (e, m) = (
            exact["points"].as_array().unwrap(),
            model["points"].as_array().unwrap(),
        );
        let mean = e
            .iter()
            .zip(m)
            .map(|(a, b)| {
                (a["miss_ratio_warm"].as_f64().unwrap() - b["miss_ratio_warm"].as_f64().unwrap())
                    .abs()
            })
            .sum::<f64>()
            / e.len() as f64;
        assert!(mean < 0.01, "{method}: mean abs error {mean}");
    }
}

#[test]
fn smith_ways_are_close_to_set_associative_simulation() {
    // Uniform random lines spread over sets at random: Smith's assumption holds.
    let args = [
        "--workload",
        "random",
        "--lines",
        "2048",
        "--refs",
        "300000",
    ];
    let smith = json(
        &[
            &["mrc", "--json", "--ways", "4", "--sizes", "32K"][..],
            &args,
        ]
        .concat(),
    );
    let sim = json(&[&["simulate", "--json", "--cache", "32K,4,64"][..], &args].concat());
    let s = smith["points"][0]["miss_ratio"].as_f64().unwrap();
    let level = &sim["simulations"][0]["levels"][0];
    let simulated = level["misses"].as_f64().unwrap() / level["refs"].as_f64().unwrap();
    assert!(
        (s - simulated).abs() < 0.01,
        "smith {s} simulated {simulated}"
    );
}

#[test]
fn hotl_metrics_and_diagnostics() {
    let v = json(&[
        "hotl",
        "--json",
        "--workload",
        "phases",
        "--lines",
        "256",
        "--sizes",
        "8K,16K,32K",
        "--reuse-windows",
        "--direct-fill-time",
        "4",
        "--sample",
        "20000",
    ]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let mut last_fill = 0.0;
    for p in points {
        let fill = p["fill_time"].as_f64().unwrap();
        assert!(fill >= last_fill);
        last_fill = fill;
        let mr = p["miss_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&mr));
    }
    assert!(
        v["reuse_windows"]["weighted_relative_divergence"]
            .as_f64()
            .unwrap()
            >= 0.0
    );
    assert_eq!(v["direct_fill_time"].as_array().unwrap().len(), 4);
    let cov = v["sampling"]["coverage"].as_f64().unwrap();
    assert!(cov > 0.0 && cov <= 1.0);
}

#[test]
fn corun_from_saved_footprints_and_traces() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.cst");
    let b = dir.path().join("b.cst");
    for (out, w) in [(&a, "loop"), (&b, "zipf")] {
        cargo_bin_cmd!("cachescope")
            .args([
                "generate", w, "--lines", "512", "--refs", "100000", "-q", "-o",
            ])
            .arg(out)
            .assert()
            .success();
    }
    let fp = dir.path().join("a.fp.json");
    let out = cargo_bin_cmd!("cachescope")
        .args(["footprint", "--json", "-q"])
        .arg(&a)
        .assert()
        .success();
    std::fs::write(&fp, &out.get_output().stdout).unwrap();
    let corun = |first: &std::path::Path| {
        let (first, b) = (first.to_str().unwrap(), b.to_str().unwrap());
        json(&["corun", "--json", "-q", first, b, "--cache", "32K"])
    };
    let (from_profile, from_trace) = (corun(&fp), corun(&a));
    let share = |v: &Value, i: usize| v["programs"][i]["share_lines"].as_f64().unwrap();
    // A saved footprint (256 windows per octave) gives the same shares as the trace, closely.
    for i in 0..2 {
        assert!((share(&from_profile, i) - share(&from_trace, i)).abs() < 1.0);
    }
    assert!((share(&from_trace, 0) + share(&from_trace, 1) - 512.0).abs() < 1.0);
    // The interleaved simulation: the prediction for the simulated prefixes is close.
    let sim = json(&[
        "corun",
        "--json",
        "-q",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--cache",
        "32K",
        "--simulate",
    ]);
    for p in sim["programs"].as_array().unwrap() {
        let s = &p["simulated"];
        let actual = s["miss_ratio"].as_f64().unwrap();
        let predicted = s["predicted_for_prefix"]["miss_ratio"].as_f64().unwrap();
        assert!((actual - predicted).abs() < 0.05, "{p}");
    }
    cargo_bin_cmd!("cachescope")
        .args(["corun", "--cache", "32K", "--rates", "1"])
        .arg(&a)
        .arg(&b)
        .assert()
        .failure()
        .stderr(predicate::str::contains("one rate per program"));
}

/// Mean absolute difference of `miss_ratio_warm` between two curves at the same sizes, in pp.
fn mean_error_pp(a: &Value, b: &Value) -> f64 {
    let (a, b) = (
        a["points"].as_array().unwrap(),
        b["points"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    100.0
        * a.iter()
            .zip(b)
            .map(|(x, y)| {
                (x["miss_ratio_warm"].as_f64().unwrap() - y["miss_ratio_warm"].as_f64().unwrap())
                    .abs()
            })
            .sum::<f64>()
        / a.len() as f64
}

#[test]
fn hotl_is_time_local_by_default_and_the_paper_on_request() {
    // Phases: a loop's reuses hold all its lines, the average window far fewer (the stream
    // phase's), which the paper's whole-trace conversion misplaces and the stretches do not.
    let args = [
        "--workload",
        "phases",
        "--lines",
        "8192",
        "--range",
        "1K..1M",
    ];
    let exact = json(&[&["mrc", "--json"][..], &args].concat());
    let local = json(&[&["mrc", "--json", "--method", "hotl"][..], &args].concat());
    let paper = json(
        &[
            &[
                "mrc",
                "--json",
                "--method",
                "hotl",
                "--hotl-variant",
                "paper",
            ][..],
            &args,
        ]
        .concat(),
    );
    assert_eq!(local["method"], "hotl");
    assert_eq!(paper["method"], "hotl");
    let (l, p) = (mean_error_pp(&local, &exact), mean_error_pp(&paper, &exact));
    assert!(l < 0.5 && p > 2.0, "local {l} pp, paper {p} pp");
    // Smith's formula (8 ways) on the time-local distances, against Smith on the exact ones.
    let smith =
        |extra: &[&str]| json(&[&["mrc", "--json", "--ways", "8"][..], extra, &args].concat());
    let exact = smith(&[]);
    let local = smith(&["--method", "hotl"]);
    let paper = smith(&["--method", "hotl", "--hotl-variant", "paper"]);
    assert_eq!(local["method"], "hotl+smith");
    let (l, p) = (mean_error_pp(&local, &exact), mean_error_pp(&paper, &exact));
    assert!(l < 0.5 && l < p, "8-way: local {l} pp, paper {p} pp");
}
