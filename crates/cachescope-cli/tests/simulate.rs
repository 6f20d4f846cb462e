//! `cachescope simulate`: JSON contracts, agreement with `mrc --method exact`, and geometry
//! validation.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = cargo_bin_cmd!("cachescope")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn cachegrind_json_has_the_contract_fields() {
    let v = json(&[
        "simulate",
        "--cachegrind",
        "--I1",
        "32K,8,64",
        "--D1",
        "32K,8,64",
        "--LL",
        "1M,16,64",
        "--workload",
        "matmul",
        "--n",
        "24",
        "--instructions",
    ]);
    for k in [
        "i_refs",
        "i1_misses",
        "lli_misses",
        "d_refs",
        "d1_misses",
        "lld_misses",
    ] {
        assert!(v[k].is_u64(), "{k} missing in {v}");
    }
    // matmul n=24: 3·n³ data references, each preceded by one instruction fetch or more.
    assert_eq!(v["d_refs"], 3 * 24 * 24 * 24);
    assert!(v["i_refs"].as_u64().unwrap() >= 3 * 24 * 24 * 24);
}

#[test]
fn fully_associative_lru_simulation_equals_the_exact_curve() {
    let wl = [
        "--workload",
        "zipf",
        "--refs",
        "200000",
        "--lines",
        "20000",
        "--seed",
        "3",
    ];
    let sizes = [64u64, 1000, 4096, 15000];
    let list: Vec<String> = sizes.iter().map(|l| (l * 64).to_string()).collect();
    let mut args = vec!["mrc"];
    args.extend(wl);
    let joined = list.join(",");
    args.extend(["--sizes", &joined]);
    let mrc = json(&args);
    let mut sim_args = vec!["simulate"];
    sim_args.extend(wl);
    let specs: Vec<String> = sizes
        .iter()
        .map(|l| format!("{},full,64", l * 64))
        .collect();
    for s in &specs {
        sim_args.extend(["--cache", s]);
    }
    let sim = json(&sim_args);
    for (i, _) in sizes.iter().enumerate() {
        let level = &sim["simulations"][i]["levels"][0];
        let refs = level["refs"].as_f64().unwrap();
        let misses = level["misses"].as_f64().unwrap();
        let ratio = mrc["points"][i]["miss_ratio"].as_f64().unwrap();
        assert_eq!((ratio * refs).round(), misses, "size {}", sizes[i]);
    }
}

#[test]
fn a_one_set_cache_equals_the_fully_associative_one() {
    let wl = [
        "--workload",
        "random",
        "--refs",
        "100000",
        "--lines",
        "3000",
    ];
    let mut a = vec![
        "simulate",
        "--cache",
        "64K,1024,64",
        "--cache",
        "64K,full,64",
    ];
    a.extend(wl);
    let v = json(&a);
    let s = &v["simulations"];
    assert_eq!(s[0]["levels"][0]["misses"], s[1]["levels"][0]["misses"]);
}

#[test]
fn three_c_classes_add_up() {
    let v = json(&[
        "simulate",
        "--cache",
        "8K,2,64",
        "--3c",
        "--workload",
        "phases",
        "--lines",
        "512",
    ]);
    let l = &v["simulations"][0]["levels"][0];
    let c = &l["three_c"];
    let sum = c["cold"].as_u64().unwrap()
        + c["capacity"].as_u64().unwrap()
        + c["conflict"].as_u64().unwrap();
    assert_eq!(sum, l["line_misses"].as_u64().unwrap());
    assert!(
        c["conflict"].as_u64().unwrap() > 0,
        "a 2-way cache has conflict misses here: {c}"
    );
}

#[test]
fn impossible_geometries_are_rejected_before_any_work() {
    for (spec, needle) in [
        ("32K,6,64", "ways"),
        ("32K,0,64", "way"),
        ("48K,8,64", "power of two"),
        ("32K,8,48", "power of two"),
        ("32K,8", "SIZE,ASSOC,LINE"),
    ] {
        cargo_bin_cmd!("cachescope")
            .args(["simulate", "--cache", spec, "/nonexistent/trace"])
            .assert()
            .failure()
            .stderr(
                predicate::str::contains(needle).and(predicate::str::contains("nonexistent").not()),
            );
    }
    cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            "--cachegrind",
            "--I1",
            "32K,8,64",
            "--workload",
            "loop",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--LL"));
}

#[test]
fn rrip_policies_parse_and_report_their_name_and_seed() {
    let v = json(&[
        "simulate",
        "--workload",
        "matmul",
        "--n",
        "24",
        "--cache",
        "8K,8,64",
        "--policy",
        "drrip",
        "--seed",
        "9",
    ]);
    let level = &v["simulations"][0]["levels"][0];
    assert_eq!(
        level["policy"],
        serde_json::json!({"name": "drrip", "seed": 9})
    );
    let srrip = json(&[
        "simulate",
        "--workload",
        "matmul",
        "--n",
        "24",
        "--cache",
        "8K,8,64",
        "--policy",
        "srrip",
    ]);
    assert_eq!(
        srrip["simulations"][0]["levels"][0]["policy"]["name"],
        "srrip"
    );
    cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            "--workload",
            "matmul",
            "--cache",
            "8K,8,64",
            "--policy",
            "rrip",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("srrip, brrip, drrip"));
}

#[test]
fn opt_is_never_above_lru_and_its_fully_associative_cache_equals_the_opt_curve() {
    let run = |policy: &str| {
        json(&[
            "simulate",
            "--workload",
            "matmul",
            "--n",
            "24",
            "--cache",
            "2K,4,64",
            "--cache",
            "2K,full,64",
            "--policy",
            policy,
        ])
    };
    let misses = |v: &Value, i: usize| v["simulations"][i]["levels"][0]["misses"].as_u64().unwrap();
    let (opt, lru) = (run("opt"), run("lru"));
    assert_eq!(opt["simulations"][0]["levels"][0]["policy"]["name"], "opt");
    for i in 0..2 {
        assert!(misses(&opt, i) <= misses(&lru, i), "cache {i}");
    }
    assert!(misses(&opt, 1) < misses(&lru, 1));
    let curve = json(&[
        "mrc",
        "--workload",
        "matmul",
        "--n",
        "24",
        "--policy",
        "opt",
        "--sizes",
        "2K",
    ]);
    let refs = opt["simulations"][1]["levels"][0]["refs"].as_f64().unwrap();
    let ratio = curve["points"][0]["miss_ratio"].as_f64().unwrap();
    assert_eq!((ratio * refs).round() as u64, misses(&opt, 1));
    assert_eq!(curve["policy"], "opt");
    cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            "--workload",
            "matmul",
            "--L2",
            "1M,8,64",
            "--I1",
            "32K,8,64",
        ])
        .args(["--D1", "32K,8,64", "--policy", "opt"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--cache caches only"));
}
