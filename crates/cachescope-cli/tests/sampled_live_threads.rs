//! `report --sampled -- PROGRAM` of a threaded program: each thread's curve is `combined`, from
//! the tool's per-thread reuse samples (`cs_sample_threads.c`), as on the recorded trace,
//! whose threads' samplers read the full stream in cachescope (`--save` keeps every
//! reference, so the tool does not sample then). The same seed draws the same positions in
//! both, so at rate 1 (every line sampled) the curves agree exactly. Skips, saying so (see
//! cachescope-testkit), where Valgrind, a C compiler or the tool are missing.

mod common;

use std::path::Path;

use common::{compile_c_file, live_report_json, threads_example, tool_or_skip};
use serde_json::Value;

/// `report -q --sampled --rate 1 --seed 2 [EXTRA…] -o dir/NAME -- exe`'s report.json.
fn report(dir: &Path, name: &str, extra: &[&str], exe: &Path) -> Value {
    let args = [&["--sampled", "--rate", "1", "--seed", "2"], extra].concat();
    live_report_json(dir, name, &args, exe)
}

#[test]
fn a_live_sampled_reports_thread_curves_are_the_traces() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Statically linked: two runs make the same references (tests/sample_tool.rs says why).
    let exe = dir.path().join("working_sets");
    let src = threads_example("working_sets");
    compile_c_file(&src, &exe, &["-O1", "-g", "-pthread", "-static"]);
    let live = report(dir.path(), "live", &[], &exe);
    let saved = dir.path().join("saved.cst");
    let trace = report(
        dir.path(),
        "trace",
        &["--save", saved.to_str().unwrap()],
        &exe,
    );
    let (live, trace) = (&live["threads"]["curves"], &trace["threads"]["curves"]);
    assert_eq!(live["method"], "combined", "{live}");
    assert_eq!(trace["method"], "combined", "{trace}");
    let threads = |c: &Value| c["threads"].as_array().unwrap().clone();
    let (l, t) = (threads(live), threads(trace));
    // The main thread and its two workers (thread 3 past the samplers' 2^16 references:
    // thinned alike). The workers make the same references in both runs: the same curves.
    // The main thread makes a few more in the recording tool's start-up (23 of 9,265 here),
    // which shift its positions: near.
    assert_eq!(l.len(), 3, "{live}");
    assert_eq!(l.len(), t.len());
    for (a, b) in l.iter().zip(&t) {
        assert_eq!(a["thread"], b["thread"]);
        let worker = a["thread"] != 1;
        let refs = |c: &Value| c["refs"].as_f64().unwrap();
        assert!(
            if worker {
                a["refs"] == b["refs"]
            } else {
                (refs(a) / refs(b) - 1.0).abs() < 0.01
            },
            "thread {}: {} references live, {} on the trace",
            a["thread"],
            a["refs"],
            b["refs"]
        );
        let within = if worker { 1e-9 } else { 0.005 };
        for (p, q) in a["points"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["points"].as_array().unwrap())
        {
            let (x, y) = (p["miss_ratio"].as_f64(), q["miss_ratio"].as_f64());
            assert!(
                match (x, y) {
                    (Some(x), Some(y)) => (x - y).abs() < within,
                    _ => x == y,
                },
                "thread {} at {}: {p} live, {q} on the trace",
                a["thread"],
                p["size_bytes"]
            );
        }
    }
}
