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
    // True sharing gets its advice: pass less data (issue 58).
    assert!(tr["fix"].as_str().unwrap().contains("accumulate"), "{tr}");
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
    // The recorded order, as `simulate` takes it (issue 58: refused before).
    let out = cs()
        .args(["sharing", "--workload", "loop", "--quantum", "0"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("1 thread on 1 core, in the recorded order"),
        "{text}"
    );
}

#[test]
fn lines_without_coherence_misses_are_listed_with_all() {
    let dir = tempfile::tempdir().unwrap();
    let t = synthetic(dir.path());
    // Recorded order: the threads' slices are 50 iterations long, so the lines still move.
    let v = json(&["sharing", "--json", "--quantum", "0", s(&t)]);
    assert_eq!(v["shared_lines"], 2);
    // A trace where one shared line never moves in the model: thread 1 writes it, then thread
    // 2 reads it once, long after (as a join would have it), in the recorded order.
    let path = dir.path().join("once.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::new()).unwrap();
    let mut b = Batch::new();
    b.set_thread(1);
    b.push(Access::store(0x3000, 8));
    b.set_thread(2);
    b.push(Access::load(0x3000, 8));
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    let quiet = json(&["sharing", "--json", "--quantum", "0", s(&path)]);
    assert_eq!(quiet["shared_lines"], 1);
    assert_eq!(quiet["lines"].as_array().unwrap().len(), 0);
    let all = json(&["sharing", "--json", "--quantum", "0", "--all", s(&path)]);
    assert_eq!(all["lines"][0]["coherence_misses"], 0);
    let out = cs()
        .args(["sharing", "--quantum", "0", s(&path)])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("1 shared line without coherence misses: --all lists them"),
        "{text}"
    );
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

#[test]
fn a_running_program_is_named_as_a_recorded_one_field_by_field() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = common::threads_example("false_sharing");
    let exe = dir.path().join("false_sharing");
    common::compile_c_file(&src, &exe, &["-O1", "-g", "-pthread"]);
    // Live (issue 58: every name was lost, structure `other`, code an address).
    let live = json(&["sharing", "--json", "--", exe.to_str().unwrap()]);
    let top = &live["lines"][0];
    assert_eq!(top["structure"], "counters", "{top}");
    assert!(
        top["code"][0]
            .as_str()
            .unwrap()
            .starts_with("false_sharing.c:"),
        "{top}"
    );
    // Each thread's counter named as the field it is.
    let fields: Vec<(&str, &Value)> = top["structures"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), &f["writers"]))
        .collect();
    assert_eq!(
        fields,
        [
            ("counters.a", &serde_json::json!([2])),
            ("counters.b", &serde_json::json!([3]))
        ]
    );
    assert!(
        top["fix"]
            .as_str()
            .unwrap()
            .starts_with("counters.a (thread 2) and counters.b (thread 3)")
    );
    // --save keeps the trace and its event log, which name the same.
    let saved = dir.path().join("fs.cst");
    json(&[
        "sharing",
        "--json",
        "--save",
        s(&saved),
        "--",
        exe.to_str().unwrap(),
    ]);
    assert!(dir.path().join("fs.cst.events").exists());
    let again = json(&["sharing", "--json", s(&saved)]);
    assert_eq!(again["lines"][0]["structures"], top["structures"]);
}

#[test]
fn a_line_holding_two_structures_names_each_with_its_own_kind() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mixed = record(dir.path(), "mixed_line");
    let v = json(&["sharing", "--json", s(&mixed)]);
    // The line of `slots`: each worker's slot (false sharing) beside the total they both
    // add to (true sharing); the two used to be one line called after the first.
    let line = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["structures"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["structure"] == "slots")
        })
        .unwrap_or_else(|| panic!("no line of slots in {v}"));
    // (Which global the linker puts after `slots` may vary: `total` with GCC and GNU ld.)
    let parts = line["structures"].as_array().unwrap();
    let slots = parts.iter().find(|p| p["structure"] == "slots").unwrap();
    assert_eq!(slots["kind"], "false", "{line}");
    assert!(
        parts.iter().any(|p| p["structure"] != "slots"
            && p["kind"] == "true"
            && [2, 3]
                .iter()
                .all(|t| p["threads"].as_array().unwrap().contains(&(*t).into()))),
        "{line}"
    );
    assert!(line["coherence_misses"].as_u64().unwrap() > 1000);
    let fix = line["fix"].as_str().unwrap();
    assert!(
        fix.starts_with("slots[0] (thread 2) and slots[1] (thread 3)"),
        "{fix}"
    );
    // The mutex: true sharing, its own line here, named by its fields.
    let lock = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["structure"] == "lock")
        .unwrap_or_else(|| panic!("no line of lock in {v}"));
    assert_eq!(lock["kind"], "true");
    assert!(
        lock["structures"][0]["fields"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("lock.")
    );
}
