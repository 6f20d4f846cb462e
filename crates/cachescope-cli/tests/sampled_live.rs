//! `--sampled` on the live commands other than `report` (mrc, phases, sharing, attribute):
//! a program runs under the tool's line filter, as `report --sampled -- PROGRAM` runs it, and
//! each result is the one of filtering the full stream in cachescope (`--save` keeps every
//! reference, so the tool does not filter then); `mrc --sampled --json` names its rate; and
//! `attribute --thread ID --sampled` counts the thread's references in the full stream, as
//! the unfiltered sampled attribution counts every thread's. The program tests skip, saying
//! so, where Valgrind, a C compiler or the tool are missing.

mod common;

use std::path::Path;

use cachescope::{Access, AccessKind, ThreadId};
use common::{compile_c, cs, json, threaded_trace, tool_or_skip};
use serde_json::Value;

/// Two working sets read in a scrambled order, linked statically so that two runs make the
/// same references (`tests/sample_tool.rs` says why).
const PROGRAM: &str = r#"#include <stdio.h>
#define N (1 << 17)
static long a[N];
int main(void) {
    unsigned x = 12345;
    long s = 0;
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 100000; i++) { x = x * 1103515245u + 12345u; s += a[(x >> 8) % 4096]; }
        for (int i = 0; i < 100000; i++) { x = x * 1103515245u + 12345u; a[(x >> 8) % N] += i; }
    }
    printf("%ld\n", s);
    return 0;
}"#;

/// `ARGS --json -q --sampled --rate 0.1 [EXTRA…] -- exe`, which must succeed, as JSON.
fn live(args: &[&str], extra: &[&str], exe: &Path) -> Value {
    let out = cs()
        .args(args)
        .args(["--json", "-q", "--sampled", "--rate", "0.1"])
        .args(extra)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    untimed(&mut v);
    v
}

/// `v` without its timings (`…_ms`, `…_ns_per_ref`), which differ from run to run, and
/// without the full stream's instruction and record counts: the sampling tool counts about a
/// thousand instructions more than the recording tool on this program (startup code either
/// side of where each starts counting; the data references agree).
fn untimed(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| {
                !(k.ends_with("_ms")
                    || k.ends_with("ns_per_ref")
                    || k == "instructions"
                    || k == "records")
            });
            map.values_mut().for_each(untimed);
        }
        Value::Array(items) => items.iter_mut().for_each(untimed),
        _ => {}
    }
}

/// Each command's result under the tool's filter equals the full stream filtered in
/// cachescope (`--save`), and names the rate it was sampled at.
#[test]
fn live_sampled_commands_filter_in_the_tool_as_the_full_stream_would() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "sets", PROGRAM, &["-O1", "-static"]);
    for (i, args) in [
        // StatStack's curve too: the tool measures the short reuses' windows as the stage
        // does on the full stream (docs/sampled.md, "Reuse windows measured").
        &["mrc"][..],
        &["mrc", "--method", "statstack"],
        // Intervals of data references: the full stream's, counted alike by both tools.
        &["phases", "--interval", "20000", "--unit", "data-refs"],
        &["sharing"],
        &["attribute"],
    ]
    .into_iter()
    .enumerate()
    {
        let tool = live(args, &[], &exe);
        let saved = dir.path().join(format!("full{i}.cst"));
        let full = live(args, &["--save", saved.to_str().unwrap()], &exe);
        assert_eq!(tool["sampled"]["rate"], 0.1, "{args:?}: {tool}");
        assert_eq!(tool["sampled"]["seed"], 1, "{args:?}");
        assert_eq!(
            tool, full,
            "{args:?}: the tool's filter against the full stream's"
        );
    }
}

/// Data references of `thread` and of every thread in `refs`.
fn data_refs(refs: &[(ThreadId, Access)], thread: ThreadId) -> (u64, u64) {
    let of = refs
        .iter()
        .filter(|(t, a)| *t == thread && a.kind.is_data());
    let all = refs.iter().filter(|(_, a)| a.kind.is_data());
    (of.count() as u64, all.count() as u64)
}

/// `--thread ID --sampled` counts the thread's references in the full stream (the sampled
/// batches' spans), not its sampled ones scaled by the rate: exactly what the exact
/// attribution of the thread counts, as the unfiltered sampled one counts every thread's.
#[test]
fn attribute_thread_sampled_counts_the_threads_references_in_full() {
    let dir = tempfile::tempdir().unwrap();
    // Three threads interleaved, each over its own 4 K lines, with a few instructions.
    let mut refs = Vec::new();
    let mut x = 7u64;
    for i in 0..200_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let t = 1 + (x >> 60) as u32 % 3;
        let line = (u64::from(t) << 20) + (x >> 20) % 4096;
        refs.push((t, Access::load(line * 64, 8)));
        if i % 5 == 0 {
            let fetch = Access {
                addr: 0x40_0000 + i % 64,
                size: 4,
                kind: AccessKind::Instr,
                pc: None,
            };
            refs.push((t, fetch));
        }
    }
    let trace = threaded_trace(dir.path(), "threads.cst", &refs);
    let t = trace.to_str().unwrap();
    let (of, all) = data_refs(&refs, 2);
    let sampled = json(&["attribute", t, "--json", "--sampled", "--rate", "0.1"]);
    assert_eq!(sampled["data_refs"], all, "{sampled}");
    let exact = json(&["attribute", t, "--json", "--thread", "2"]);
    assert_eq!(exact["data_refs"], of);
    let thread = json(&[
        "attribute",
        t,
        "--json",
        "--thread",
        "2",
        "--sampled",
        "--rate",
        "0.1",
    ]);
    assert_eq!(thread["data_refs"], of, "{thread}");
    // Its misses scaled by the rate as the whole stream's: their share of the whole stream's
    // misses is the exact share (the thread alone in its cache, as `--thread` simulates it),
    // within 20 %.
    let exact_all = json(&["attribute", t, "--json"]);
    let share = |part: &Value, whole: &Value| {
        part["misses"].as_f64().unwrap() / whole["misses"].as_f64().unwrap()
    };
    let (got, want) = (share(&thread, &sampled), share(&exact, &exact_all));
    assert!(
        (got - want).abs() < 0.2 * want,
        "sampled share {got}, exact {want}"
    );
}

/// `report --sampled` of a workload: its analyses shared out over two threads, the phases
/// clustered beside the models and StatCache's sizes solved on both give the report one
/// thread gives, field for field.
#[test]
fn a_sampled_report_on_two_threads_is_the_one_threads_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = |threads: &str| {
        let out = dir.path().join(format!("t{threads}"));
        cs().args(["report", "-q", "--workload", "zipf", "--lines", "65536"])
            .args([
                "--refs",
                "2000000",
                "--interval",
                "50000",
                "--sampled",
                "--rate",
                "0.1",
            ])
            .args(["--threads", threads, "-o"])
            .arg(&out)
            .assert()
            .success();
        let mut v: Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("elapsed_seconds");
        v
    };
    let one = report("1");
    assert!(
        !one["phases"].is_null(),
        "phases left out: {}",
        one["notes"]
    );
    assert!(one["mrc"].as_array().unwrap().len() >= 4, "{}", one["mrc"]);
    assert_eq!(report("2"), one);
}
