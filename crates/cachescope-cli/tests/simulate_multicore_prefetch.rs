//! `cachescope simulate --cores N --prefetch …`: one core against the single-core
//! simulation (a cache and a hierarchy, every prefetch and write-back count), the two-core
//! case of a prefetch taking a line the other core wrote (JSON and table), and the levels a
//! prefetcher may name.

use cachescope::{Access, AccessKind};
use serde_json::Value;

mod common;
use common::{cs, json, threaded_trace};

const COUNTS: [&str; 7] = [
    "refs",
    "misses",
    "writebacks",
    "writebacks_received",
    "prefetches",
    "useful_prefetches",
    "useless_prefetches",
];

fn picked(v: &Value) -> Vec<Value> {
    COUNTS.iter().map(|k| v[*k].clone()).collect()
}

#[test]
fn one_core_prefetches_what_the_single_core_simulation_prefetches() {
    let wl = ["--workload", "phases", "--refs", "200000", "--instructions"];
    for kind in [
        &["--prefetch", "next-line"][..],
        &["--prefetch", "stride", "--prefetch-degree", "2"],
    ] {
        let flags = [
            &["--cache", "16K,4,64", "--writebacks", "--json"][..],
            kind,
            &wl,
        ]
        .concat();
        let single = json(&[&["simulate"][..], &flags].concat());
        let multi = json(&[&["simulate", "--cores", "1"][..], &flags].concat());
        let s = &single["simulations"][0]["levels"][0];
        assert!(s["prefetches"].as_u64().unwrap() > 100, "{kind:?}: {s}");
        assert_eq!(picked(s), picked(&multi["caches"][0]), "{kind:?}");
        assert_eq!(picked(s), picked(&multi["totals"][0]), "{kind:?}");
    }
    // A split L1 over an L2 and a shared last level, a prefetcher at each.
    let h = [
        "--I1",
        "8K,2,64",
        "--D1",
        "16K,4,64",
        "--L2",
        "128K,8,64",
        "--LL",
        "1M,16,64",
        "--prefetch",
        "L1I=next-line",
        "--prefetch",
        "next-line",
        "--prefetch",
        "L2=stride",
        "--prefetch",
        "LL=next-line",
        "--writebacks",
        "--json",
    ];
    let single = json(&[&["simulate"][..], &h, &wl].concat());
    let multi = json(&[&["simulate", "--cores", "1", "--shared", "LL"][..], &h, &wl].concat());
    let levels = single["simulations"][0]["levels"].as_array().unwrap();
    let caches = multi["caches"].as_array().unwrap();
    assert_eq!((levels.len(), caches.len()), (4, 4));
    for (s, m) in levels.iter().zip(caches) {
        assert_eq!(s["name"], m["level"]);
        assert!(s["prefetches"].as_u64().unwrap() > 0, "{}", s["name"]);
        assert_eq!(picked(s), picked(m), "{}", s["name"]);
    }
}

/// Thread 2 writes line 0x41; thread 1 misses line 0x40 and its next-line prefetch takes
/// 0x41 from thread 2's core, then hits it.
fn taken(dir: &std::path::Path) -> std::path::PathBuf {
    let refs = [
        (2, AccessKind::Store, 0x1040),
        (1, AccessKind::Load, 0x1000),
        (1, AccessKind::Load, 0x1040),
    ]
    .map(|(t, kind, addr)| {
        (
            t,
            Access {
                addr,
                size: 8,
                kind,
                pc: None,
            },
        )
    });
    threaded_trace(dir, "taken.cst", &refs)
}

#[test]
fn a_prefetch_takes_the_line_another_core_wrote_as_a_read_does() {
    let dir = tempfile::tempdir().unwrap();
    let t = taken(dir.path());
    let flags = [
        "simulate",
        t.to_str().unwrap(),
        "--cores",
        "2",
        "--cache",
        "32K,8,64",
        "--quantum",
        "0",
        "--writebacks",
        "--prefetch",
        "next-line",
    ];
    let v = json(&[&flags[..], &["--json"]].concat());
    let core = |k: usize| &v["caches"][k];
    // Thread 2 came first: core 0. Its modified copy supplied core 1's prefetch (a write-back,
    // no transfer), and core 1's load hit the prefetched line.
    assert_eq!(
        [
            &core(0)["writebacks"],
            &core(0)["prefetches"],
            &core(0)["useful_prefetches"]
        ],
        [1, 1, 0]
    );
    assert_eq!(
        [
            &core(1)["hits"],
            &core(1)["transfers"],
            &core(1)["prefetches"],
            &core(1)["useful_prefetches"],
            &core(1)["useless_prefetches"]
        ],
        [1, 0, 2, 1, 0]
    );
    assert_eq!(v["totals"][0]["prefetches"], 3);
    // Without the prefetcher the load is a transfer, and no prefetch field appears.
    let plain = json(&[&flags[..9], &["--json"]].concat());
    assert_eq!(plain["caches"][1]["transfers"], 1);
    assert!(plain["caches"][1].get("prefetches").is_none());
    // The table has the prefetch columns.
    let out = cs()
        .args(flags)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("prefetches") && out.contains("useless"),
        "{out}"
    );
}

#[test]
fn a_prefetcher_names_a_level_the_machine_has() {
    let wl = ["--workload", "phases", "--refs", "1000"];
    for (flags, message) in [
        (
            &["--cache", "16K,4,64", "--prefetch", "L2=stride"][..],
            "no level L2",
        ),
        (
            &["--L1", "16K,4,64", "--prefetch", "L1I=next-line"],
            "no L1I",
        ),
        (
            &["--cache", "16K,4,64", "--prefetch", "L9=stride"],
            "LEVEL is",
        ),
    ] {
        let out = cs()
            .args([&["simulate", "--cores", "2"][..], flags, &wl].concat())
            .assert()
            .failure()
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert!(err.contains(message), "{flags:?}: {err}");
    }
    // L1= and cache= name the first level with --cores.
    for (first, name) in [("--L1", "L1"), ("--cache", "cache")] {
        let v = json(
            &[
                &["simulate", "--cores", "2", first, "16K,4,64", "--json"][..],
                &["--prefetch", &format!("{name}=next-line")],
                &wl,
            ]
            .concat(),
        );
        assert!(v["caches"][0]["prefetches"].as_u64().is_some(), "{name}");
    }
}
