//! `cachescope attribute` end to end: hand-made traces with event logs (heap sites, reuse
//! after free, a corrupt log), traces without events or symbols, and the resid example
//! recorded under Valgrind (skipped with a message where Valgrind or cc is missing).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cachescope::Source;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventKind, EventWriter, Header};
use serde_json::Value;

mod common;
use common::{bucket, cs, tools_or_skip};

/// A lackey trace: `I` fetches and data loads (`L`), one per address.
fn lackey(addrs: &[u64]) -> String {
    let mut s = String::new();
    for &a in addrs {
        s.push_str("I  00401000,4\n");
        s.push_str(&format!(" L {a:08x},8\n"));
    }
    s
}

fn write_events(path: &Path, events: &[Event]) {
    let header = Header {
        cachescope_events: EVENTS_VERSION,
        program: "test".into(),
        run: String::new(),
    };
    let file = std::fs::File::create(path).unwrap();
    let mut w = EventWriter::new(file, Source::File(path.into()), &header).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap();
}

fn json(cmd: &mut Command) -> Value {
    let out = cmd.arg("--json").arg("-q").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn heap_sites_from_the_sidecar_event_log_and_reuse_after_free() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    // A direct-mapped cache of one 32-byte line: every new line misses and evicts the last.
    // Records (fetch + load each): block A at 0x10000 (site 1), other, A freed, block B at
    // the same address (site 2), then the stack.
    std::fs::write(
        &trace,
        lackey(&[0x10000, 0x900000, 0x10000, 0x1f_ff00_0000]),
    )
    .unwrap();
    let site = |k: u64| vec![0x1000 + k, 0x2000 + k];
    write_events(
        &dir.path().join("t.txt.events"),
        &[
            Event {
                position: 0,
                kind: EventKind::Alloc {
                    addr: 0x10000,
                    size: 64,
                    stack: site(1),
                },
            },
            Event {
                position: 4,
                kind: EventKind::Free { addr: 0x10000 },
            },
            Event {
                position: 4,
                kind: EventKind::Alloc {
                    addr: 0x10000,
                    size: 64,
                    stack: site(2),
                },
            },
        ],
    );
    let r = json(
        cs().arg("attribute")
            .arg(&trace)
            .args(["--cache", "32,1,32", "--sample", "1"]),
    );
    assert_eq!(r["misses"], 4);
    assert_eq!(r["samples"], 4);
    let a = bucket(&r, "0x1000-0x2000");
    let b = bucket(&r, "0x1001-0x2001");
    assert_eq!(
        (a["kind"].as_str(), a["misses"].as_u64()),
        (Some("heap"), Some(1))
    );
    assert_eq!(
        (b["kind"].as_str(), b["misses"].as_u64()),
        (Some("heap"), Some(1))
    );
    assert_eq!(bucket(&r, "stack")["kind"], "stack");
    assert_eq!(bucket(&r, "other")["actual_pct"], 25.0);
    let ev = r["evictions"].as_array().unwrap();
    let pair = |v: &str, e: &str| {
        ev.iter()
            .find(|x| x["victim"] == v && x["evictor"] == e)
            .map(|x| {
                (
                    x["evictions"].as_u64().unwrap(),
                    x["actual_pct"].as_f64().unwrap(),
                    x["sampled_pct"].as_f64().unwrap(),
                )
            })
    };
    assert_eq!(pair("0x1000-0x2000", "other"), Some((1, 100.0, 100.0)));
    assert_eq!(pair("other", "0x1001-0x2001"), Some((1, 100.0, 100.0)));
    assert_eq!(pair("0x1001-0x2001", "stack"), Some((1, 100.0, 100.0)));
    for key in ["lines", "monitor_cost", "mrc", "notes"] {
        assert!(r[key].is_array(), "{key}");
    }
    assert_eq!(r["monitor_cost"].as_array().unwrap().len(), 4);
}

#[test]
fn a_corrupt_event_log_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, lackey(&[0x10000, 0x10040])).unwrap();
    let events = dir.path().join("bad.events");
    let text = b"{\"cachescope_events\":1}\n{\"position\":0,\"free\":{\"addr\":1}}\n{\"position\":1,\"alloc\":oops}\n";
    std::fs::write(&events, zstd::encode_all(&text[..], 1).unwrap()).unwrap();
    let out = cs()
        .arg("attribute")
        .arg(&trace)
        .arg("--events")
        .arg(&events)
        .arg("-q")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.events:3:"), "{err}");
}

#[test]
fn without_events_or_symbols_the_stack_and_other_remain_with_notes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, lackey(&[0x1f_ff00_0000, 0x900000, 0x1f_ff00_0000])).unwrap();
    // A system binary as --exe: position-independent and usually stripped.
    let r = json(
        cs().arg("attribute")
            .arg(&trace)
            .args(["--exe", "/bin/true"]),
    );
    assert_eq!(bucket(&r, "stack")["misses"], 1);
    assert_eq!(bucket(&r, "other")["misses"], 1);
    let notes = r["notes"].to_string();
    assert!(notes.contains("no event log"), "{notes}");
    assert!(
        notes.contains("position-independent") || notes.contains("no symbol table"),
        "{notes}"
    );
    // A file that is not an executable at all is a note too, not a crash.
    let r = json(cs().arg("attribute").arg(&trace).arg("--exe").arg(&trace));
    assert!(r["notes"].to_string().contains("not an object file"));
}

fn example(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/attribution")
        .join(format!("{name}.c"));
    let exe = dir.join(name);
    common::compile_c_file(&src, &exe, &["-g", "-O1", "-no-pie"]);
    exe
}

/// The paper's story on the resid example, recorded under Valgrind: U, V and R are global
/// buckets, U takes the most misses and is evicted mostly by U, tiling cuts U's misses, and
/// the exact miss count equals `cachescope simulate`'s.
#[test]
fn resid_example_under_valgrind() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = example(dir.path(), "resid");
    let mut u_misses = Vec::new();
    for tile in ["0", "4"] {
        let trace = dir.path().join(format!("resid{tile}.cst"));
        cs().args(["record", "-q", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(&exe)
            .args(["24", "1", tile])
            .assert()
            .success();
        let r = json(
            cs().arg("attribute")
                .arg(&trace)
                .arg("--exe")
                .arg(&exe)
                .args(["--cache", "8K,4,32"]),
        );
        for v in ["U", "V", "R"] {
            assert_eq!(bucket(&r, v)["kind"], "global");
        }
        let sim: Value = serde_json::from_slice(
            &cs()
                .arg("simulate")
                .arg(&trace)
                .args(["--cache", "8K,4,32", "--json", "-q"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        assert_eq!(r["misses"], sim["simulations"][0]["levels"][0]["misses"]);
        u_misses.push(bucket(&r, "U")["misses"].as_u64().unwrap());
        if tile == "0" {
            assert_eq!(r["buckets"][0]["name"], "U", "{}", r["buckets"]);
            let top = r["evictions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["victim"] == "U" && e["actual_rank"] == 1)
                .unwrap();
            assert_eq!(top["evictor"], "U");
            // Code lines resolve through DWARF to resid.c.
            assert!(
                r["lines"].to_string().contains("resid.c:"),
                "{}",
                r["lines"]
            );
        }
    }
    assert!(
        u_misses[1] < u_misses[0],
        "tiling should cut U's misses: {u_misses:?}"
    );
}

#[test]
fn per_structure_with_every_line_in_budget_equals_the_exact_attribution() {
    // A heap block of 4 KiB walked three times with other lines between, in a 1 KiB 2-way
    // cache: at rate 0.01 with a budget that holds every line, the estimate is exact.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    let mut addrs = Vec::new();
    for round in 0..3u64 {
        for i in 0..128u64 {
            addrs.push(0x10000 + i * 32);
            addrs.push(0x900000 + ((i * 7 + round) % 40) * 32);
        }
    }
    std::fs::write(&trace, lackey(&addrs)).unwrap();
    write_events(
        &dir.path().join("t.txt.events"),
        &[Event {
            position: 0,
            kind: EventKind::Alloc {
                addr: 0x10000,
                size: 4096,
                stack: vec![0x1001, 0x2001],
            },
        }],
    );
    let exact = json(cs().arg("attribute").arg(&trace).args([
        "--cache",
        "1K,2,32",
        "--no-cost",
        "--no-mrc",
    ]));
    let est = json(cs().arg("attribute").arg(&trace).args([
        "--cache",
        "1K,2,32",
        "--per-structure",
        "0.01",
        "--per-structure-lines",
        "1000,1000",
    ]));
    assert!(exact["misses"].as_u64().unwrap() > 300);
    assert_eq!(est["misses"], exact["misses"]);
    assert_eq!(est["data_refs"], exact["data_refs"]);
    for name in ["0x1000-0x2000", "other"] {
        assert_eq!(
            bucket(&est, name)["misses"],
            bucket(&exact, name)["misses"],
            "{name}"
        );
    }
    let notes = est["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("168 lines at rate 1")),
        "{notes:?}"
    );
    // With --sampled it is refused: it samples the full stream itself.
    let out = cs()
        .arg("attribute")
        .arg(&trace)
        .args(["--per-structure", "0.01", "--sampled", "-q"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--per-structure"));
}
