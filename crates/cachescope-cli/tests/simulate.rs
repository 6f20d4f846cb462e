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
        ("48K,7,64", "ways that work"),
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

/// A lackey trace of loads: 13 lines 40,960 lines apart, twice over.
fn crowded_set_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("crowded.txt");
    let mut text = String::new();
    for _ in 0..2 {
        for k in 0..13u64 {
            text.push_str(&format!(" L {:x},8\n", 40_960 * k * 64));
        }
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_30_mib_12_way_cache_has_40960_sets_indexed_by_remainder() {
    let dir = tempfile::tempdir().unwrap();
    let t = crowded_set_trace(dir.path());
    let t = t.to_str().unwrap();
    let v = json(&[
        "simulate",
        t,
        "--cache",
        "30M,12,64",
        "--cache",
        "30M,15,64",
    ]);
    let level = |i: usize| &v["simulations"][i]["levels"][0];
    assert_eq!(level(0)["geometry"]["sets"], 40_960);
    // All 13 lines share set 0 of 12 ways: LRU misses every time.
    assert_eq!(level(0)["misses"], 26);
    // 32,768 sets (a power of two, the low bits): the lines spread over 4 sets and stay.
    assert_eq!(level(1)["geometry"]["sets"], 32_768);
    assert_eq!(level(1)["misses"], 13);
    // The same through a hierarchy's L2 and the 3C classes: 13 cold, 13 conflict.
    let h = json(&[
        "simulate",
        t,
        "--I1",
        "32K,8,64",
        "--D1",
        "32K,8,64",
        "--L2",
        "30M,12,64",
        "--3c",
    ]);
    let l2 = &h["simulations"][0]["levels"][2];
    assert_eq!(l2["misses"], 26);
    assert_eq!(l2["three_c"]["cold"], 13);
    assert_eq!(l2["three_c"]["conflict"], 13);
}

#[test]
fn cachegrind_mode_reshapes_a_non_power_of_two_ll_as_cachegrind_does() {
    let dir = tempfile::tempdir().unwrap();
    let t = crowded_set_trace(dir.path());
    let t = t.to_str().unwrap();
    let run = |ll: &str| {
        cargo_bin_cmd!("cachescope")
            .args([
                "simulate",
                t,
                "--cachegrind",
                "--I1",
                "32K,8,64",
                "--D1",
                "1K,1,64",
            ])
            .args(["--LL", ll, "--json"])
            .assert()
            .success()
    };
    // 40,960 sets become 32,768 sets of 15 ways (the ratio 1.25 times 12), as Valgrind's
    // maybe_tweak_LLc does: the same counts as giving that LL directly.
    let tweaked = run("30M,12,64");
    let note = String::from_utf8_lossy(&tweaked.get_output().stderr).to_string();
    assert!(note.contains("32768 sets"), "{note}");
    let direct = run("30M,15,64");
    assert!(direct.get_output().stderr.is_empty());
    assert_eq!(tweaked.get_output().stdout, direct.get_output().stdout);
    cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            t,
            "--cachegrind",
            "--I1",
            "48K,8,64",
            "--D1",
            "32K,8,64",
        ])
        .args(["--LL", "8M,16,64"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a power of two"));
}

/// A lackey trace of `(kind, line)` records with 64-byte lines.
fn lackey(dir: &std::path::Path, name: &str, records: &[(char, u64)]) -> std::path::PathBuf {
    let path = dir.join(name);
    let text: String = records
        .iter()
        .map(|&(k, line)| format!(" {k} {:x},8\n", line * 64))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn writebacks_are_counted_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // One direct-mapped line: store 0, load 1 (0 was dirty: written back), load 0 (1 clean).
    let t = lackey(
        dir.path(),
        "wb.txt",
        &[('S', 0), ('L', 1), ('L', 0), ('M', 1), ('L', 0)],
    );
    let t = t.to_str().unwrap();
    let plain = json(&["simulate", t, "--cache", "64,1,64"]);
    let level = &plain["simulations"][0]["levels"][0];
    assert_eq!(level["misses"], 5);
    assert!(level.get("writebacks").is_none(), "{level}");
    let v = json(&["simulate", t, "--cache", "64,1,64", "--writebacks"]);
    let level = &v["simulations"][0]["levels"][0];
    assert_eq!(
        (&level["misses"], &level["writebacks"]),
        (&5.into(), &2.into())
    );
    // No-write-allocate: the store fills nothing, so nothing is dirty until the modify.
    let no = json(&[
        "simulate",
        t,
        "--cache",
        "64,1,64",
        "--write-allocate",
        "no",
    ]);
    assert_eq!(no["simulations"][0]["levels"][0]["writebacks"], 1);
    // In a hierarchy the L1D's write-backs arrive in the L2.
    let h = json(&[
        "simulate",
        t,
        "--I1",
        "64,1,64",
        "--D1",
        "64,1,64",
        "--L2",
        "1K,2,64",
        "--writebacks",
    ]);
    let levels = &h["simulations"][0]["levels"];
    assert_eq!(levels[1]["writebacks"], 2);
    assert_eq!(levels[2]["writebacks_received"], 2);
    let table = cargo_bin_cmd!("cachescope")
        .args(["simulate", t, "--cache", "64,1,64"])
        .assert()
        .success();
    assert!(!String::from_utf8_lossy(&table.get_output().stdout).contains("writebacks"));
    cargo_bin_cmd!("cachescope")
        .args(["simulate", t, "--cache", "64,1,64", "--writebacks"])
        .assert()
        .success()
        .stdout(predicate::str::contains("writebacks"));
}

#[test]
fn next_line_prefetching_turns_a_stream_into_hits() {
    let dir = tempfile::tempdir().unwrap();
    let stream: Vec<(char, u64)> = (0..64).map(|l| ('L', l)).collect();
    let t = lackey(dir.path(), "stream.txt", &stream);
    let t = t.to_str().unwrap();
    let v = json(&[
        "simulate",
        t,
        "--cache",
        "256,full,64",
        "--prefetch",
        "next-line",
    ]);
    let level = &v["simulations"][0]["levels"][0];
    assert_eq!(level["misses"], 1);
    assert_eq!(level["prefetches"], 64);
    assert_eq!(level["useful_prefetches"], 63);
    assert_eq!(level["useless_prefetches"], 0);
    let plain = json(&["simulate", t, "--cache", "256,full,64"]);
    assert!(
        plain["simulations"][0]["levels"][0]
            .get("prefetches")
            .is_none()
    );
    // Per level in a hierarchy: only the L2 prefetches.
    let h = json(&[
        "simulate",
        t,
        "--I1",
        "256,full,64",
        "--D1",
        "256,full,64",
        "--L2",
        "4K,4,64",
        "--prefetch",
        "L2=next-line",
    ]);
    let levels = &h["simulations"][0]["levels"];
    assert!(levels[1].get("prefetches").is_none());
    assert_eq!(levels[2]["misses"], 1);
    for (args, needle) in [
        (
            vec!["--cache", "1K,2,64", "--prefetch", "L2=stride"],
            "level of a hierarchy",
        ),
        (
            vec!["--cache", "1K,2,64", "--prefetch", "sometimes"],
            "next-line or stride",
        ),
        (
            vec![
                "--cache",
                "1K,2,64",
                "--prefetch",
                "next-line",
                "--prefetch-degree",
                "0",
            ],
            "0",
        ),
        (
            vec![
                "--cachegrind",
                "--I1",
                "1K,2,64",
                "--D1",
                "1K,2,64",
                "--LL",
                "8K,2,64",
                "--prefetch",
                "stride",
            ],
            "Cachegrind models neither",
        ),
        (
            vec![
                "--I1",
                "1K,2,64",
                "--D1",
                "1K,2,64",
                "--L2",
                "8K,2,64",
                "--inclusion",
                "exclusive",
                "--writebacks",
            ],
            "non-inclusive",
        ),
    ] {
        cargo_bin_cmd!("cachescope")
            .args(["simulate", t])
            .args(&args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(needle));
    }
}

#[test]
fn utilization_is_reported_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // Loads of 8 bytes at the start of lines 0, 1, 0, 2 in a direct-mapped 2-line cache:
    // lines 0 and 2 share set 0, so 4 fills of 64 bytes, 8 bytes used in each.
    let t = lackey(
        dir.path(),
        "util.txt",
        &[('L', 0), ('L', 1), ('L', 0), ('L', 2), ('L', 0)],
    );
    let t = t.to_str().unwrap();
    let plain = json(&["simulate", t, "--cache", "128,1,64"]);
    assert!(
        plain["simulations"][0]["levels"][0]
            .get("utilization")
            .is_none()
    );
    let v = json(&["simulate", t, "--cache", "128,1,64", "--utilization"]);
    let level = &v["simulations"][0]["levels"][0];
    assert_eq!(level["misses"], 4);
    assert_eq!(
        (&level["used_bytes"], &level["fetched_bytes"]),
        (&32.into(), &256.into())
    );
    assert_eq!(level["utilization"], 0.125);
    let csv = cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            t,
            "--cache",
            "128,1,64",
            "--utilization",
            "--csv",
        ])
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&csv.get_output().stdout).to_string();
    assert!(csv.lines().next().unwrap().contains("utilization"), "{csv}");
    cargo_bin_cmd!("cachescope")
        .args(["simulate", t, "--cache", "128,1,64", "--utilization"])
        .assert()
        .success()
        .stdout(predicate::str::contains("util").and(predicate::str::contains("0.125")));
    cargo_bin_cmd!("cachescope")
        .args([
            "simulate",
            t,
            "--cache",
            "128,1,64",
            "--utilization",
            "--policy",
            "opt",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--utilization applies"));
}
