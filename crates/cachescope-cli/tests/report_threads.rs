//! The report's threads section: present exactly when the trace has more than one thread, its
//! per-thread curves equal `mrc --thread ID`'s and its sharing table `sharing --json`'s; a
//! trace from standard input keeps the ids and says why there is no more; a recorded
//! false-sharing program shows its falsely shared line, named.

mod common;

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, Batch};
use common::{cs, json, tool_or_skip};
use serde_json::Value;

/// Two threads in runs of 100 references over lines of their own, and both writing their own
/// half of one line (false sharing), thread 3 only reading a line of its own.
fn shared_trace(dir: &Path) -> PathBuf {
    let path = dir.join("shared.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::new()).unwrap();
    let mut b = Batch::new();
    for i in 0..40_000u64 {
        let t = [1, 2, 3][((i / 100) % 3) as usize];
        b.set_thread(t);
        let a = match (t, i % 4) {
            (1 | 2, 0) => Access::store(0x9000 + 32 * u64::from(t - 1), 8),
            (3, _) => Access::load(0x7000_0000 + 64 * (i % 50), 8),
            _ => Access::load((u64::from(t) << 24) + 64 * (i * 7 % 300), 8),
        };
        b.push(a);
        if b.is_full() {
            w.write_batch(&b).unwrap();
            b.clear();
        }
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn report(dir: &Path, args: &[&str]) -> Value {
    let out = dir.join("rep");
    cs().args(["report", "-q", "-o", s(&out)])
        .args(args)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

#[test]
fn a_threaded_trace_gets_per_thread_curves_and_the_sharing_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared_trace(dir.path());
    let r = report(dir.path(), &[s(&t)]);
    let section = &r["threads"];
    assert_eq!(section["ids"], serde_json::json!([1, 2, 3]));
    // Each thread's curve is `mrc --thread ID`'s at the report's sizes.
    let sizes: Vec<String> = r["mrc"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["size_bytes"].to_string())
        .collect();
    let curves = section["curves"]["threads"].as_array().unwrap();
    assert_eq!(curves.len(), 3);
    for c in curves {
        let id = c["thread"].to_string();
        let alone = json(&[
            "mrc",
            "--json",
            "--thread",
            &id,
            "--sizes",
            &sizes.join(","),
            s(&t),
        ]);
        assert_eq!(c["points"], alone["points"], "thread {id}");
    }
    // The sharing is `sharing --json`'s, and finds the one falsely shared line.
    assert_eq!(section["sharing"], json(&["sharing", "--json", s(&t)]));
    let lines = section["sharing"]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        (lines[0]["line"].as_str(), lines[0]["kind"].as_str()),
        (Some("0x9000"), Some("false"))
    );
    assert!(lines[0]["coherence_misses"].as_u64().unwrap() > 0);
    let figures: Vec<&str> = r["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    // The pages section follows, one TLB curve per thread.
    assert!(figures.ends_with(&["threads", "pages"]), "{figures:?}");
    // Each thread's TLB curve is `mrc --page 4K --thread ID`'s at the same entry counts.
    let pages = r["pages"]["threads"].as_array().unwrap();
    assert_eq!(pages.len(), 3);
    for p in pages {
        let points = p["points"].as_array().unwrap();
        let sizes: Vec<String> = points
            .iter()
            .map(|q| q["covered_bytes"].to_string())
            .collect();
        let alone = json(&[
            "mrc",
            "--json",
            "--page",
            "4K",
            "--thread",
            &p["thread"].to_string(),
            "--sizes",
            &sizes.join(","),
            s(&t),
        ]);
        let want: Vec<&Value> = alone["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| &q["miss_ratio"])
            .collect();
        let got: Vec<&Value> = points.iter().map(|q| &q["miss_ratio"]).collect();
        assert_eq!(got, want, "thread {}", p["thread"]);
    }
    let html = std::fs::read_to_string(dir.path().join("rep/report.html")).unwrap();
    assert!(html.contains("id=\"threads\"") && html.contains("fix: thread 1 uses bytes 0-7"));
    assert!(dir.path().join("rep/figures/threads.svg").is_file());
    // One worker thread gives the same report.
    let one = dir.path().join("one");
    std::fs::create_dir(&one).unwrap();
    let mut serial = report(&one, &["--threads", "1", s(&t)]);
    let mut r = r;
    for v in [&mut serial, &mut r] {
        v["elapsed_seconds"] = Value::Null;
    }
    assert_eq!(serial, r);
}

#[test]
fn one_thread_has_no_threads_section() {
    let dir = tempfile::tempdir().unwrap();
    let r = report(dir.path(), &["--workload", "zipf", "--refs", "20000"]);
    assert!(r.get("threads").is_none());
    assert!(!r["figures"].to_string().contains("\"threads\""));
}

#[test]
fn standard_input_keeps_the_ids_and_says_why_there_is_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared_trace(dir.path());
    let out = dir.path().join("rep");
    cs().args(["report", "-q", "-o", s(&out), "-"])
        .pipe_stdin(&t)
        .unwrap()
        .assert()
        .success();
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["threads"]["ids"], serde_json::json!([1, 2, 3]));
    assert!(r["threads"].get("curves").is_none());
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("3 threads") && notes.contains("second read"),
        "{notes}"
    );
}

/// examples/threads/false_sharing.c reported live: its two counters share a line, falsely,
/// named after their variable from the event log.
#[test]
fn a_recorded_false_sharing_program_shows_its_line_in_the_report() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace =
        common::record_threads_program(dir.path(), &common::threads_example("false_sharing"));
    let r = report(dir.path(), &[s(&trace)]);
    let worst = &r["threads"]["sharing"]["lines"][0];
    assert_eq!(worst["kind"], "false", "{worst}");
    assert_ne!(
        worst["structure"], "other",
        "named from the event log: {worst}"
    );
    assert!(
        worst["coherence_misses"].as_u64().unwrap() > 1000,
        "{worst}"
    );
}
