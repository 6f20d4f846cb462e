//! `cachescope sample` and `mrc --method statcache|statstack`: profile once, model many; the
//! `points` contract; bad rates and bad profiles rejected with messages naming the file.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

mod common;
use common::json;

const ZIPF: [&str; 6] = ["--workload", "zipf", "--lines", "2048", "--refs", "300000"];

#[test]
fn a_stored_profile_models_exactly_like_sampling_on_the_fly() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("zipf.prof");
    let prof = prof.to_str().unwrap();
    let summary = json(
        &[
            &[
                "sample", "--json", "--rate", "0.01", "--seed", "3", "-o", prof,
            ][..],
            &ZIPF,
        ]
        .concat(),
    );
    assert_eq!(summary["refs"], 300_000);
    let samples = summary["samples"].as_u64().unwrap();
    assert!((2_500..3_500).contains(&samples), "{samples} samples at 1%");
    for method in ["statcache", "statstack"] {
        let from_profile = json(&[
            "mrc",
            "--json",
            "--method",
            method,
            prof,
            "--sizes",
            "4K,32K,64K",
        ]);
        let on_the_fly = json(
            &[
                &[
                    "mrc", "--json", "--method", method, "--rate", "0.01", "--seed", "3",
                ][..],
                &["--sizes", "4K,32K,64K"],
                &ZIPF,
            ]
            .concat(),
        );
        assert_eq!(from_profile, on_the_fly, "{method}");
        assert_eq!(from_profile["method"], method);
        let policy = if method == "statcache" {
            "random"
        } else {
            "lru"
        };
        assert_eq!(from_profile["policy"], policy);
        let points = from_profile["points"].as_array().unwrap();
        assert_eq!(points.len(), 3);
        // Cold misses not estimated: no miss_ratio, only miss_ratio_warm.
        assert!(points[0].get("miss_ratio").is_none());
        let warm: Vec<f64> = points
            .iter()
            .map(|p| p["miss_ratio_warm"].as_f64().unwrap())
            .collect();
        assert!(warm[0] > warm[1] && warm[1] >= warm[2], "{warm:?}");
        // 2048 lines fit in 128K: nothing but cold misses remain at 64K ≈ half of them.
        assert!(warm[0] > 0.2, "{warm:?}");
    }
    // --estimate-cold adds miss_ratio ≥ miss_ratio_warm.
    let est = json(&[
        "mrc",
        "--json",
        "--method",
        "statstack",
        "--estimate-cold",
        prof,
        "--sizes",
        "256K",
    ]);
    let p = &est["points"][0];
    assert!(p["miss_ratio"].as_f64().unwrap() >= p["miss_ratio_warm"].as_f64().unwrap());
}

#[test]
fn statstack_at_rate_one_equals_exact_lru_on_a_loop() {
    // A loop over 100 lines: every reuse has stack distance 99, so LRU of < 100 lines misses on
    // every reuse and of ≥ 100 lines on none; sampling every reference sees that exactly.
    let args = [
        "--workload",
        "loop",
        "--lines",
        "100",
        "--refs",
        "20000",
        "--sizes",
        "6336,6400",
    ];
    let exact = json(&[&["mrc", "--json"][..], &args].concat());
    let model = json(
        &[
            &["mrc", "--json", "--method", "statstack", "--rate", "1"][..],
            &args,
        ]
        .concat(),
    );
    for i in 0..2 {
        let (e, m) = (&exact["points"][i], &model["points"][i]);
        let diff =
            (e["miss_ratio_warm"].as_f64().unwrap() - m["miss_ratio_warm"].as_f64().unwrap()).abs();
        assert!(diff < 0.006, "point {i}: exact {e} model {m}");
    }
}

#[test]
fn bad_rates_policies_and_profiles_are_clear_errors() {
    for rate in ["0", "1.5", "-0.1", "nan"] {
        cargo_bin_cmd!("cachescope")
            .args(["mrc", "--method", "statcache", "--workload", "loop"])
            .arg(format!("--rate={rate}"))
            .assert()
            .failure()
            .stderr(predicate::str::contains("(0, 1]"));
    }
    cargo_bin_cmd!("cachescope")
        .args([
            "mrc",
            "--method",
            "statcache",
            "--policy",
            "lru",
            "--workload",
            "loop",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("models random replacement only"));

    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("loop.prof");
    let p = prof.to_str().unwrap();
    cargo_bin_cmd!("cachescope")
        .args([
            "sample",
            "-q",
            "--workload",
            "loop",
            "--rate",
            "0.01",
            "-o",
            p,
        ])
        .assert()
        .success();
    // Another line size than the profile's.
    cargo_bin_cmd!("cachescope")
        .args(["mrc", "--method", "statstack", "--line-size", "128", p])
        .assert()
        .failure()
        .stderr(predicate::str::contains("64-byte lines"));
    // The exact method cannot read a profile.
    cargo_bin_cmd!("cachescope")
        .args(["mrc", p])
        .assert()
        .failure()
        .stderr(predicate::str::contains("sampling profile"));
    // A truncated profile names the file.
    let bytes = std::fs::read(&prof).unwrap();
    let cut = dir.path().join("cut.prof");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    cargo_bin_cmd!("cachescope")
        .args(["mrc", "--method", "statcache"])
        .arg(&cut)
        .assert()
        .failure()
        .stderr(predicate::str::contains("cut.prof"));
    // No samples: a trace too short for the rate.
    cargo_bin_cmd!("cachescope")
        .args([
            "mrc",
            "--method",
            "statcache",
            "--workload",
            "loop",
            "--refs",
            "10",
            "--rate",
            "1e-9",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no samples"));
}
