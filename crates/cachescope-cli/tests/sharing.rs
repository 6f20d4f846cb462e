//! `cachescope sharing` end to end: a synthetic trace with one falsely and one truly shared
//! line, and, where Valgrind and a C compiler exist, the examples/threads programs: false
//! sharing found with its structure, code line and fix, padding removing it, a locked counter
//! found as true sharing.

mod common;

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, Batch};
use common::{cs, json, tool_or_skip};
use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Threads 2 and 3 write bytes 0-7 and 8-15 of line 0x1000 (false sharing) and both write bytes
/// 0-7 of line 0x2000 (true sharing); each also reads a private line.
fn synthetic(dir: &Path) -> PathBuf {
    let path = dir.join("shared.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::new()).unwrap();
    let mut b = Batch::new();
    for i in 0..4000u64 {
        let t = 2 + (i / 50 % 2) as u32;
        b.set_thread(t);
        b.push(Access {
            pc: Some(0x400 + u64::from(t)),
            ..Access::store(0x1000 + 8 * u64::from(t - 2), 8)
        });
        b.push(Access {
            pc: Some(0x500),
            ..Access::store(0x2000, 8)
        });
        b.push(Access::load(0x10_0000 * u64::from(t), 8));
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

fn line<'a>(v: &'a Value, addr: &str) -> &'a Value {
    v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == addr)
        .unwrap_or_else(|| panic!("{addr} in {v}"))
}

#[test]
fn false_and_true_sharing_are_told_apart_and_ranked_by_coherence_misses() {
    let dir = tempfile::tempdir().unwrap();
    let t = synthetic(dir.path());
    let v = json(&["sharing", "--json", "--quantum", "10", s(&t)]);
    assert_eq!(
        v["lines"].as_array().unwrap().len(),
        2,
        "private lines are not shared"
    );
    let f = line(&v, "0x1000");
    assert_eq!(f["kind"], "false");
    assert_eq!(f["writes"], 4000);
    assert_eq!(f["threads"][0]["written_bytes"], "0-7");
    assert_eq!(f["threads"][1]["written_bytes"], "8-15");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("thread 2 uses bytes 0-7, thread 3 uses bytes 8-15")
    );
    assert_eq!(f["code"], serde_json::json!(["0x402", "0x403"]));
    let tr = line(&v, "0x2000");
    assert_eq!(tr["kind"], "true");
    assert!(tr.get("fix").is_none());
    for l in v["lines"].as_array().unwrap() {
        assert!(l["coherence_misses"].as_u64().unwrap() > 0, "{l}");
    }
    let misses: Vec<u64> = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["coherence_misses"].as_u64().unwrap())
        .collect();
    assert!(
        misses.windows(2).all(|w| w[0] >= w[1]),
        "ranked: {misses:?}"
    );
    // Worker threads change nothing; the text names the fix.
    let again = json(&[
        "sharing",
        "--json",
        "--quantum",
        "10",
        "--threads",
        "1",
        s(&t),
    ]);
    assert_eq!(again, v);
    let out = cs().args(["sharing", s(&t)]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("fix: thread 2 uses bytes 0-7"), "{text}");
}

#[test]
fn a_single_threaded_trace_shares_nothing() {
    let out = cs()
        .args(["sharing", "--workload", "loop"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("no line is written by one thread and used by another"),
        "{text}"
    );
    cs().args(["sharing", "--workload", "loop", "--quantum", "0"])
        .assert()
        .failure();
}

fn record(dir: &Path, name: &str) -> PathBuf {
    common::record_threads_program(dir, &common::threads_example(name))
}

#[test]
fn the_examples_false_sharing_is_found_and_padding_removes_it() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fs = record(dir.path(), "false_sharing");
    let v = json(&["sharing", "--json", s(&fs)]);
    let top = &v["lines"][0];
    assert_eq!(top["kind"], "false", "{top}");
    assert_eq!(top["structure"], "counters");
    assert!(
        top["code"][0]
            .as_str()
            .unwrap()
            .starts_with("false_sharing.c:"),
        "{top}"
    );
    assert!(top["coherence_misses"].as_u64().unwrap() > 1000);
    let padded = record(dir.path(), "padded");
    let p = json(&["sharing", "--json", s(&padded)]);
    let worst = p["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["coherence_misses"].as_u64().unwrap())
        .max()
        .unwrap_or(0);
    assert!(worst < 10, "padding leaves at most start-up sharing: {p}");
    assert!(
        p["lines"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["kind"] != "false" || l["coherence_misses"].as_u64().unwrap() < 10)
    );
    let locked = record(dir.path(), "locked_counter");
    let l = json(&["sharing", "--json", s(&locked)]);
    let counter = l["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["structure"] == "shared")
        .expect("the shared struct");
    assert_eq!(counter["kind"], "true");
}
