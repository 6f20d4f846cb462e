//! `attribute` by thread: `--thread ID` and `--per-thread` keep the event log's positions in
//! the whole trace's records, so an allocation made while another thread ran is applied before
//! the next thread's references to it; `--per-thread`'s entries equal `--thread ID`'s.

mod common;

use std::path::{Path, PathBuf};

use cachescope::Source;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventKind, EventWriter, Header};
use cachescope::trace::native::{Header as TraceHeader, Writer};
use cachescope::{Access, Batch};
use common::{cs, json};
use serde_json::Value;

/// Thread 1 loads its own lines for 1000 records; the block at 0x50000 is allocated at record
/// 1000 (by thread 1, say); then thread 2 loads that block for 1000 records, in a trace whose
/// event log sits beside it.
fn trace_with_log(dir: &Path) -> PathBuf {
    let path = dir.join("t.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), TraceHeader::new()).unwrap();
    let mut b = Batch::new();
    for i in 0..2000u64 {
        if i < 1000 {
            b.set_thread(1);
            b.push(Access::load(0x10_0000 + 64 * (i % 100), 8));
        } else {
            b.set_thread(2);
            b.push(Access::load(0x50000 + 8 * (i % 512), 8));
        }
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    let log = dir.join("t.cst.events");
    let header = Header {
        cachescope_events: EVENTS_VERSION,
        program: "test".into(),
        run: String::new(),
    };
    let mut e = EventWriter::new(
        std::fs::File::create(&log).unwrap(),
        Source::File(log.clone()),
        &header,
    )
    .unwrap();
    e.write(&Event {
        position: 1000,
        kind: EventKind::Alloc {
            addr: 0x50000,
            size: 4096,
            stack: vec![0x1000, 0x2000],
        },
    })
    .unwrap();
    e.finish().unwrap();
    path
}

fn kinds(r: &Value) -> Vec<String> {
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn one_thread_sees_allocations_made_while_another_ran() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace_with_log(dir.path());
    let t = t.to_str().unwrap();
    let two = json(&["attribute", "--json", "--thread", "2", t]);
    // Every reference of thread 2 is in the heap block (a filter on the trace would have
    // counted thread 2's records from 0 and applied the allocation after them: all "other").
    assert_eq!(kinds(&two), ["heap"], "{two}");
    assert_eq!(two["data_refs"], 1000);
    let one = json(&["attribute", "--json", "--thread", "1", t]);
    assert_eq!(one["data_refs"], 1000);
    assert!(!kinds(&one).contains(&"heap".to_string()), "{one}");
    // --per-thread: each entry is --thread ID's.
    let per = json(&["attribute", "--json", "--per-thread", t]);
    let threads = per["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for (entry, alone) in threads.iter().zip([&one, &two]) {
        let mut entry = entry.clone();
        entry.as_object_mut().unwrap().remove("thread");
        assert_eq!(&entry, alone);
    }
}

#[test]
fn an_unknown_thread_is_an_error_naming_those_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace_with_log(dir.path());
    cs().args(["attribute", "--thread", "5"])
        .arg(&t)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "thread 5 does not appear in the trace, whose references are by threads 1, 2",
        ));
}
