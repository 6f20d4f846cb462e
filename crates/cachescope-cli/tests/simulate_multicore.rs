//! `cachescope simulate --cores`: the JSON contract on a hand-worked threaded trace, one core
//! against the single-core simulation, `--quantum`, `--threads` not changing a number, bad
//! flags as clear errors, and false sharing in a recorded C program (examples/threads/)
//! against its padded twin. Skips the recording with a printed reason without Valgrind or cc.

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, AccessKind, Batch, ThreadId};
use serde_json::Value;

mod common;
use common::{cs, json, tool_or_skip};

/// Writes `accesses` (thread, kind, address) as a native trace `dir/name`.
fn threaded(dir: &Path, name: &str, accesses: &[(ThreadId, AccessKind, u64)]) -> PathBuf {
    let mut b = Batch::new();
    for &(t, kind, addr) in accesses {
        b.set_thread(t);
        b.push(Access {
            addr,
            size: 8,
            kind,
            pc: None,
        });
    }
    let path = dir.join(name);
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::default()).unwrap();
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

/// Threads 1 and 2 store to one line in turn, ten times, each also loading a line of its own.
fn ping_pong(dir: &Path) -> PathBuf {
    let mut a = Vec::new();
    for k in 0..10u32 {
        let t = 1 + k % 2;
        a.push((t, AccessKind::Store, 0x1000 + 8 * u64::from(t)));
        a.push((t, AccessKind::Load, 0x10_000 * u64::from(t)));
    }
    threaded(dir, "ping-pong.cst", &a)
}

fn cache<'a>(v: &'a Value, level: &str, core: Option<u64>) -> &'a Value {
    v["caches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["level"] == level && c["core"].as_u64() == core)
        .unwrap_or_else(|| panic!("no {level} of core {core:?} in {v}"))
}

#[test]
fn json_has_every_cache_and_level_with_the_hand_worked_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = ping_pong(dir.path());
    let t = t.to_str().unwrap();
    let v = json(&[
        "simulate",
        t,
        "--cores",
        "2",
        "--L1",
        "32K,8,64",
        "--LL",
        "1M,16,64",
        "--shared",
        "LL",
        "--quantum",
        "0",
        "--json",
    ]);
    assert_eq!(v["cores"], 2);
    assert_eq!(v["quantum"], 0);
    assert_eq!(v["quantum_unit"], Value::Null);
    assert_eq!(v["levels"][0]["name"], "L1");
    // The level --LL gives is called LL (issue 58: it was printed as L2).
    assert_eq!(v["levels"][1]["name"], "LL");
    assert_eq!(v["levels"][1]["shared"], true);
    assert_eq!(v["placement"][1]["thread"], 2);
    assert_eq!(v["placement"][1]["core"], 1);
    for c in v["caches"].as_array().unwrap() {
        for k in [
            "level",
            "core",
            "refs",
            "hits",
            "misses",
            "miss_ratio",
            "cold",
            "capacity",
            "conflict",
            "coherence",
            "invalidations",
            "transfers",
        ] {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
    }
    // The stored line ping-pongs: after the two cold misses, each store is a coherence miss
    // served by the other core; the private loads miss once each.
    let l1 = &v["totals"][0];
    assert_eq!(
        [
            &l1["refs"],
            &l1["misses"],
            &l1["cold"],
            &l1["coherence"],
            &l1["invalidations"]
        ],
        [20, 12, 4, 8, 9]
    );
    assert_eq!(cache(&v, "L1", Some(0))["coherence"], 4);
    assert_eq!(cache(&v, "L1", Some(1))["transfers"], 5);
    // Only memory fetches reach the shared level: the three lines' first misses (core 1's
    // first store is served by core 0).
    let ll = cache(&v, "LL", None);
    assert_eq!([&ll["refs"], &ll["misses"], &ll["coherence"]], [3, 3, 0]);
    assert_eq!(v["totals"][1]["refs"], 3);
}

#[test]
fn csv_has_one_row_per_core_and_level_and_the_table_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = ping_pong(dir.path());
    let args = [
        "--cores", "2", "--L1", "32K,8,64", "--LL", "1M,16,64", "--shared", "LL",
    ];
    let out = cs()
        .arg("simulate")
        .arg(&t)
        .args(args)
        .arg("--csv")
        .assert()
        .success();
    let csv = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[0].starts_with("level,core,refs,hits,misses,cold,capacity,conflict,coherence"));
    assert!(lines[1].starts_with("L1,0,") && lines[2].starts_with("L1,1,"));
    assert!(lines[3].starts_with("LL,,"), "{csv}");
    let out = cs().arg("simulate").arg(&t).args(args).assert().success();
    let table = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(table.contains("thread→core: 1→0 2→1"), "{table}");
    assert!(
        table.contains("coherence") && table.contains("shared"),
        "{table}"
    );
}

#[test]
fn the_quantum_brings_out_the_sharing_the_recorded_slices_hide() {
    // As Valgrind records it: thread 1 stores 1 000 times, then thread 2 (born after 10).
    let mut a: Vec<_> = (0..10).map(|_| (1, AccessKind::Store, 0x1000)).collect();
    a.extend((0..1000).map(|_| (2, AccessKind::Store, 0x1008)));
    a.extend((0..990).map(|_| (1, AccessKind::Store, 0x1000)));
    let dir = tempfile::tempdir().unwrap();
    let t = threaded(dir.path(), "slices.cst", &a);
    let t = t.to_str().unwrap();
    let run = |extra: &[&str]| {
        json(
            &[
                &[
                    "simulate", t, "--cores", "2", "--cache", "32K,8,64", "--json",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let recorded = run(&["--quantum", "0"]);
    assert_eq!(recorded["totals"][0]["coherence"], 1);
    assert_eq!(recorded["interleave"], Value::Null);
    // Round-robin, ten references each in turn (the trace has no fetches): a coherence miss
    // every turn but the first two, while both threads run.
    let dealt = run(&["--interleave", "instructions", "--quantum", "10"]);
    assert_eq!(dealt["interleave"], "instructions");
    assert_eq!(dealt["quantum_unit"], "references");
    assert_eq!(dealt["totals"][0]["coherence"], 198);
    // Round-robin's default quantum is 100.
    let default = run(&["--interleave", "instructions"]);
    assert_eq!(default["quantum"], 100);
    assert_eq!(default["totals"][0]["coherence"], 18);
    // By default the threads run in modelled time, slices of 100 cycles: the line changes
    // hands at the pace of the latencies, so the count hardly depends on the slice (issue 58:
    // round-robin's scaled as 1/quantum).
    let timed = run(&[]);
    assert_eq!(timed["interleave"], "time");
    assert_eq!(timed["quantum_unit"], "cycles");
    assert_eq!(timed["quantum"], 100);
    let coherence = |q: &str| {
        run(&["--quantum", q])["totals"][0]["coherence"]
            .as_u64()
            .unwrap()
    };
    let counts = [coherence("10"), coherence("100"), coherence("1000")];
    let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert!(*hi <= 2 * lo && *lo >= 20, "{counts:?}");
    // Each core's clock: its references' latencies (no instruction fetches here).
    for c in timed["clocks"].as_array().unwrap() {
        assert_eq!(c["instructions"], 0);
        assert_eq!(
            c["cycles"].as_u64().unwrap(),
            c["stall_cycles"].as_u64().unwrap() + c["idle_cycles"].as_u64().unwrap()
        );
    }
}

#[test]
fn one_core_counts_what_the_single_core_simulation_counts() {
    let wl = ["--workload", "phases", "--refs", "300000", "--instructions"];
    let single = json(
        &[
            &["simulate", "--cache", "16K,4,64", "--3c", "--json"][..],
            &wl,
        ]
        .concat(),
    );
    let multi = json(
        &[
            &["simulate", "--cores", "1", "--cache", "16K,4,64", "--json"][..],
            &wl,
        ]
        .concat(),
    );
    let s = &single["simulations"][0]["levels"][0];
    let m = &multi["caches"][0];
    assert_eq!([&s["refs"], &s["misses"]], [&m["refs"], &m["misses"]]);
    for k in ["cold", "capacity", "conflict"] {
        assert_eq!(s["three_c"][k], m[k], "{k}");
    }
    assert_eq!(m["coherence"], 0);
    // A split L1 over an L2 and the last level, with --LL as the third level.
    let h = [
        "--I1",
        "8K,2,64",
        "--D1",
        "16K,4,64",
        "--L2",
        "128K,8,64",
        "--LL",
        "1M,16,64",
    ];
    let single = json(&[&["simulate", "--3c", "--json"][..], &h, &wl].concat());
    let multi = json(
        &[
            &["simulate", "--cores", "1", "--shared", "LL", "--json"][..],
            &h,
            &wl,
        ]
        .concat(),
    );
    let levels = single["simulations"][0]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 4);
    for (s, m) in levels.iter().zip(multi["caches"].as_array().unwrap()) {
        assert_eq!(s["name"], m["level"]);
        assert_eq!(
            [&s["refs"], &s["misses"]],
            [&m["refs"], &m["misses"]],
            "{}",
            s["name"]
        );
        assert_eq!(s["three_c"]["capacity"], m["capacity"]);
    }
}

#[test]
fn utilization_with_cores_is_the_single_core_one_on_one_thread() {
    let wl = ["--workload", "phases", "--refs", "100000", "--instructions"];
    let h = ["--I1", "8K,2,64", "--D1", "16K,4,64", "--L2", "128K,8,64"];
    let single = json(&[&["simulate", "--utilization", "--json"][..], &h, &wl].concat());
    let multi = json(
        &[
            &["simulate", "--cores", "1", "--utilization", "--json"][..],
            &h,
            &wl,
        ]
        .concat(),
    );
    let levels = single["simulations"][0]["levels"].as_array().unwrap();
    for (s, m) in levels.iter().zip(multi["caches"].as_array().unwrap()) {
        assert!(s["fetched_bytes"].as_u64().unwrap() > 0);
        for k in ["used_bytes", "fetched_bytes", "utilization"] {
            assert_eq!(s[k], m[k], "{} {k}", s["name"]);
        }
    }
    // Two cores: each core's copy and the level's total, in the JSON and in the table.
    let dir = tempfile::tempdir().unwrap();
    let t = ping_pong(dir.path());
    let t = t.to_str().unwrap();
    let args = [
        "simulate",
        t,
        "--cores",
        "2",
        "--cache",
        "4K,2,64",
        "--utilization",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    let used = |c: &Value| c["used_bytes"].as_u64().unwrap();
    let caches = v["caches"].as_array().unwrap();
    assert_eq!(used(&v["totals"][0]), caches.iter().map(used).sum::<u64>());
    let out = cs()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("util"));
}

#[test]
fn the_threads_flag_changes_no_number() {
    let dir = tempfile::tempdir().unwrap();
    let t = ping_pong(dir.path());
    for extra in [&["--json"][..], &["--csv"], &[]] {
        let run = |threads: Option<&str>| {
            let mut c = cs();
            c.arg("simulate")
                .arg(&t)
                .args(["--cores", "2", "--cache", "4K,2,64", "-q"]);
            c.args(extra);
            if let Some(n) = threads {
                c.args(["--threads", n]);
            }
            c.assert().success().get_output().stdout.clone()
        };
        assert_eq!(run(Some("1")), run(None));
    }
}

#[test]
fn bad_flags_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let t = ping_pong(dir.path());
    for (args, says) in [
        (
            &["--cores", "0", "--cache", "32K,8,64"][..],
            "0 cores: a machine has at least 1",
        ),
        (
            &["--cores", "2", "--cache", "32K,8,64", "--pin", "2:2"],
            "there is no core 2",
        ),
        (
            &["--cores", "2", "--cache", "32K,8,64", "--pin", "2=1"],
            "is not THREAD:CORE",
        ),
        (
            &["--cores", "2", "--cache", "32K,8,64", "--pin", "2"],
            "is not THREAD:CORE",
        ),
        (
            &["--cores", "2", "--L1", "32K,8,64", "--shared", "L3"],
            "--shared L3: there is no such level",
        ),
        (
            &["--cache", "32K,8,64", "--shared", "LL"],
            "--shared applies to the multi-core model",
        ),
        (
            &[
                "--cores", "2", "--L1", "32K,8,64", "--L2", "1M,16,64", "--shared", "L1",
            ],
            "share L2 too",
        ),
        (
            &[
                "--cores", "2", "--I1", "32K,8,64", "--D1", "32K,8,64", "--shared", "L1",
            ],
            "private to each core",
        ),
        (&["--L1", "32K,8,64"], "add --cores N"),
        (&["--cores", "2"], "--cores needs levels"),
        (
            &[
                "--I1", "32K,8,64", "--D1", "32K,8,64", "--L2", "1M,16,64", "--LL", "8M,16,64",
                "--L3", "8M,16,64",
            ],
            "both name the third level",
        ),
        (
            &["--cores", "2", "--cache", "32K,8,64", "--policy", "opt"],
            "online policies",
        ),
    ] {
        let out = cs().arg("simulate").arg(&t).args(args).assert().failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Compiles `examples/threads/NAME.c` and records it under the tool.
fn record(dir: &Path, name: &str) -> PathBuf {
    let src = common::threads_example(name);
    let args = ["--backend", "tool", "--no-events"];
    common::record_c_program(dir, &src, &["-pthread"], &args).1
}

#[test]
fn padding_removes_the_coherence_misses_of_false_sharing() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let coherence = |name: &str| {
        let t = record(dir.path(), name);
        let v = json(&[
            "simulate",
            t.to_str().unwrap(),
            "--cores",
            "2",
            "--L1",
            "32K,8,64",
            "--LL",
            "8M,16,64",
            "--shared",
            "LL",
            "--json",
        ]);
        v["totals"][0]["coherence"].as_u64().unwrap()
    };
    let shared = coherence("false_sharing");
    let padded = coherence("padded");
    // 2 × 100 000 increments dealt 100 instructions at a time: thousands of ping-pongs.
    assert!(shared > 5_000, "false sharing: {shared} coherence misses");
    assert!(
        padded * 100 < shared,
        "padded: {padded}, false sharing: {shared}"
    );
}

#[test]
fn writebacks_with_cores_count_the_flush_of_a_modified_line_another_core_reads() {
    let dir = tempfile::tempdir().unwrap();
    // Thread 1 writes a line, thread 2 reads it, five times over.
    let a: Vec<_> = (0..5)
        .flat_map(|_| {
            [
                (1, AccessKind::Store, 0x1000),
                (2, AccessKind::Load, 0x1008),
            ]
        })
        .collect();
    let t = threaded(dir.path(), "flush.cst", &a);
    let v = json(&[
        "simulate",
        t.to_str().unwrap(),
        "--cores",
        "2",
        "--L1",
        "32K,8,64",
        "--LL",
        "1M,16,64",
        "--shared",
        "LL",
        "--quantum",
        "0",
        "--writebacks",
        "--json",
    ]);
    // Each read finds the line modified on core 0, which supplies it and writes it back.
    let core0 = cache(&v, "L1", Some(0));
    assert_eq!(
        (core0["refs"].as_u64(), core0["hits"].as_u64()),
        (Some(5), Some(4))
    );
    assert_eq!(core0["writebacks"], 5, "{v}");
    let core1 = cache(&v, "L1", Some(1));
    assert_eq!(
        (
            &core1["transfers"],
            &core1["invalidations"],
            &core1["writebacks"]
        ),
        (&5.into(), &4.into(), &0.into()),
        "{v}"
    );
    let shared = v["caches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["core"].is_null())
        .unwrap();
    assert_eq!(shared["writebacks_received"], 5, "{v}");
    // Without the flag the fields are absent; the prefetchers are single-core only.
    let plain = json(&[
        "simulate",
        t.to_str().unwrap(),
        "--cores",
        "2",
        "--cache",
        "32K,8,64",
        "--json",
    ]);
    assert!(cache(&plain, "cache", Some(0)).get("writebacks").is_none());
    cs().args([
        "simulate",
        t.to_str().unwrap(),
        "--cores",
        "2",
        "--cache",
        "32K,8,64",
    ])
    .args(["--prefetch", "next-line"])
    .assert()
    .success()
    .stdout(predicates::str::contains("prefetches"));
}
