//! Line utilization and write-backs by data structure in `attribute`: a hand-computed trace
//! with a heap block, the per-bucket write-backs adding up to `simulate --writebacks` of the
//! same cache, and examples/utilization/structs.c recorded under Valgrind (an array of 64-byte
//! structs of which one 8-byte field is read: utilization 1/8; skipped with a message where
//! Valgrind or cc is missing).

use std::path::{Path, PathBuf};

use cachescope::Source;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventKind, EventWriter, Header};
use serde_json::Value;

mod common;
use common::{bucket, cs, json, tools_or_skip};

/// A lackey trace of data references `(kind, address, size)`.
fn lackey(dir: &Path, refs: &[(char, u64, u32)]) -> PathBuf {
    let path = dir.join("t.txt");
    let text: String = refs
        .iter()
        .map(|&(k, a, n)| format!(" {k} {a:08x},{n}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A heap block of 64 bytes at 0x10000, allocated before the first reference.
fn heap_block(trace: &Path) {
    let path = PathBuf::from(format!("{}.events", trace.display()));
    let header = Header {
        cachescope_events: EVENTS_VERSION,
        program: "test".into(),
        run: String::new(),
    };
    let file = std::fs::File::create(&path).unwrap();
    let mut w = EventWriter::new(file, Source::File(path.clone()), &header).unwrap();
    let alloc = EventKind::Alloc {
        addr: 0x10000,
        size: 64,
        stack: vec![0x1000, 0x2000],
    };
    w.write(&Event {
        position: 0,
        kind: alloc,
    })
    .unwrap();
    w.finish().unwrap();
}

fn simulated(trace: &Path, cache: &str) -> Value {
    let v = json(&[
        "simulate",
        trace.to_str().unwrap(),
        "--cache",
        cache,
        "--writebacks",
        "--utilization",
        "--json",
    ]);
    v["simulations"][0]["levels"][0].clone()
}

#[test]
fn writebacks_and_utilization_by_bucket_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    // One direct-mapped 32-byte line. Store to the heap block (miss, dirty); load other
    // (evicts the block: its write-back); store other (hit, dirty); load the block (evicts
    // other: its write-back); load the stack (evicts the block, clean).
    let t = lackey(
        dir.path(),
        &[
            ('S', 0x10000, 8),
            ('L', 0x900000, 4),
            ('S', 0x900010, 4),
            ('L', 0x10008, 8),
            ('L', 0x1f_ff00_0000, 8),
        ],
    );
    heap_block(&t);
    let r = json(&[
        "attribute",
        t.to_str().unwrap(),
        "--cache",
        "32,1,32",
        "--writebacks",
        "--utilization",
        "--json",
        "-q",
    ]);
    // Named by its call sites (the return addresses less one).
    let heap = bucket(&r, "0xfff-0x1fff");
    let other = bucket(&r, "other");
    let stack = bucket(&r, "stack");
    assert_eq!(heap["writebacks"], 1);
    assert_eq!(other["writebacks"], 1);
    assert_eq!(stack["writebacks"], 0);
    assert_eq!(r["writebacks"], 2);
    // The block: two fills of 32 bytes, 8 bytes used in each.
    assert_eq!(
        (&heap["used_bytes"], &heap["fetched_bytes"]),
        (&16.into(), &64.into())
    );
    assert_eq!(heap["utilization"], 0.25);
    // Other: one fill, bytes 0..4 and 16..20 used.
    assert_eq!(other["utilization"], 0.25);
    // The same cache simulated alone counts the same write-backs and bytes.
    let level = simulated(&t, "32,1,32");
    assert_eq!(level["writebacks"], r["writebacks"]);
    assert_eq!(level["used_bytes"], r["used_bytes"]);
    assert_eq!(level["fetched_bytes"], r["fetched_bytes"]);
    // Without the flags neither field is there.
    let plain = json(&[
        "attribute",
        t.to_str().unwrap(),
        "--cache",
        "32,1,32",
        "--json",
        "-q",
    ]);
    assert!(plain.get("writebacks").is_none() && plain.get("utilization").is_none());
    assert!(bucket(&plain, "other").get("writebacks").is_none());
    assert!(bucket(&plain, "other").get("utilization").is_none());
    // CSV rows carry the new fields.
    let csv = cs()
        .args([
            "attribute",
            t.to_str().unwrap(),
            "--cache",
            "32,1,32",
            "--writebacks",
        ])
        .args(["--utilization", "--csv"])
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&csv.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        head.contains("utilization") && head.contains("writebacks"),
        "{head}"
    );
}

#[test]
fn per_bucket_writebacks_add_up_to_the_simulated_total() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("matmul.cst");
    cs().args(["generate", "matmul", "-o"])
        .arg(&t)
        .args(["--n", "40"])
        .assert()
        .success();
    let r = json(&[
        "attribute",
        t.to_str().unwrap(),
        "--cache",
        "8K,2,64",
        "--writebacks",
        "--utilization",
        "--no-cost",
        "--no-mrc",
        "--json",
    ]);
    let sum: u64 = r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["writebacks"].as_u64().unwrap())
        .sum();
    let level = simulated(&t, "8K,2,64");
    assert!(sum > 0);
    assert_eq!(Some(sum), level["writebacks"].as_u64());
    assert_eq!(r["writebacks"], level["writebacks"]);
    assert_eq!(r["used_bytes"], level["used_bytes"]);
    assert_eq!(r["utilization"], level["utilization"]);
}

/// The must-show: one 8-byte field of each 64-byte struct read gives the array's
/// bucket a utilization of exactly 1/8; the same field kept in an array of its own, 1; its
/// load strides by 64 bytes every time.
#[test]
fn one_field_of_64_byte_structs_is_an_eighth() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/utilization/structs.c");
    let (exe, t) = common::record_c_program(dir.path(), &src, &[], &[]);
    let attribute = |trace: &Path| {
        json(&[
            "attribute",
            trace.to_str().unwrap(),
            "--cache",
            "32K,8,64",
            "--utilization",
            "--no-cost",
            "--no-mrc",
            "--json",
            "-q",
        ])
    };
    let r = attribute(&t);
    let p = bucket(&r, "particles");
    assert_eq!(p["kind"], "global");
    assert_eq!(p["fetched_bytes"], 32768 * 64, "{p}");
    assert_eq!(p["utilization"], 0.125, "{p}");
    let load = r["loads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["code"]
                .as_str()
                .is_some_and(|c| c.starts_with("structs.c:"))
        })
        .unwrap_or_else(|| panic!("{}", r["loads"]));
    assert_eq!(
        (&load["stride"], &load["regularity"]),
        (&64.into(), &1.0.into())
    );
    assert_eq!(load["misses"], 32768);
    // The report ranks the array first among the worst-utilized structures (its cache has
    // 32-byte lines: 8 of 32 bytes used) and lists the load.
    let out = dir.path().join("report");
    cs().args(["report", "-q", "-o"])
        .arg(&out)
        .arg(&t)
        .assert()
        .success();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let worst = &report["attribution"]["worst_utilized"][0];
    assert_eq!(
        (&worst["name"], &worst["utilization"]),
        (&"particles".into(), &0.25.into())
    );
    assert_eq!(report["attribution"]["loads"][0]["stride"], 64);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Line utilization") && html.contains("structs.c:"));
    // A structure of arrays: every byte fetched is used.
    let split = dir.path().join("split.cst");
    cs().args(["record", "-q", "-o"])
        .arg(&split)
        .arg("--")
        .arg(&exe)
        .arg("split")
        .assert()
        .success();
    let r = attribute(&split);
    assert_eq!(bucket(&r, "masses")["utilization"], 1.0);
    assert_eq!(bucket(&r, "masses")["fetched_bytes"], 32768 * 8);
}
