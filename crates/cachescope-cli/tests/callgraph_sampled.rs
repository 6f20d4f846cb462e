//! `attribute --callgraph --sampled` (docs/callgraph.md) on examples/callgraph/calltree.c: at
//! rate 1 the graph is the exact one (every event but the instruction misses, which a sampled
//! stream cannot measure); at a lower rate the references and calls stay exact and the
//! inclusive misses of the functions that make most of them stay within a measured error;
//! `--callgrind-out` and `-- PROGRAM` under `--sampled`; a trace without call events says so.
//! Skipped, saying why, without cc or the tool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{json, tool_or_skip};

const CACHES: [&str; 3] = ["32K,8,64", "32K,8,64", "8M,16,64"];

/// The events a sampled stream measures (no instruction fetches: no I1mr, ILmr).
const MEASURED: [&str; 10] = [
    "Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw", "D1ev", "D1wb", "D1mc",
];

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/callgraph/calltree.c")
}

fn record(dir: &Path, extra: &[&str]) -> Option<(PathBuf, PathBuf)> {
    if !tool_or_skip() {
        return None;
    }
    let mut args = vec!["--backend", "tool"];
    args.extend(extra);
    Some(common::record_c_program(
        dir,
        &example(),
        &["-O2", "-fno-inline"],
        &args,
    ))
}

fn callgraph(input: &[&str], extra: &[&str]) -> Value {
    let mut args = vec!["attribute", "--callgraph", "--json", "-q"];
    args.extend(["--I1", CACHES[0], "--D1", CACHES[1], "--LL", CACHES[2]]);
    args.extend(extra);
    args.extend(input);
    json(&args)
}

/// Function name → (calls, self, inclusive), each cost object cut to `events`.
type Functions = BTreeMap<String, (u64, Vec<u64>, Vec<u64>)>;

fn functions(r: &Value, events: &[&str]) -> Functions {
    let cut = |c: &Value| events.iter().map(|e| c[*e].as_u64().unwrap()).collect();
    r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["function"].as_str().unwrap().to_string(),
                (
                    f["calls"].as_u64().unwrap(),
                    cut(&f["self"]),
                    cut(&f["inclusive"]),
                ),
            )
        })
        .collect()
}

/// (caller, callee, site) → (calls, inclusive cut to `events`).
fn calls(r: &Value, events: &[&str]) -> BTreeMap<(String, String, String), (u64, Vec<u64>)> {
    r["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("?").to_string();
            let costs = events.iter().map(|e| c["inclusive"][*e].as_u64().unwrap());
            (
                (s("caller"), s("callee"), s("site")),
                (c["calls"].as_u64().unwrap(), costs.collect()),
            )
        })
        .collect()
}

fn d1(c: &Value) -> u64 {
    c["D1mr"].as_u64().unwrap() + c["D1mw"].as_u64().unwrap()
}

#[test]
fn sampled_call_graph_is_exact_at_rate_1_and_close_below() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, trace)) = record(dir.path(), &[]) else {
        return;
    };
    let t = trace.to_str().unwrap();
    let exact = callgraph(&[t], &[]);
    let one = callgraph(&[t], &["--sampled", "--rate", "1"]);
    assert_eq!(one["sampled"], 1.0);
    assert_eq!(functions(&one, &MEASURED), functions(&exact, &MEASURED));
    assert_eq!(calls(&one, &MEASURED), calls(&exact, &MEASURED));
    assert_eq!(one["totals"]["I1mr"], 0, "not measured");
    // Rate 0.1: miniatures of 4 D1 sets and 512 LL sets stand for the caches at 1/16.
    let low = callgraph(&[t], &["--sampled", "--rate", "0.1"]);
    assert_eq!(low["sampled"], 0.0625);
    assert!(
        low["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("estimates"))
    );
    let counts = ["Ir", "Dr", "Dw"];
    assert_eq!(functions(&low, &counts), functions(&exact, &counts));
    assert_eq!(calls(&low, &counts), calls(&exact, &counts));
    // The functions with a tenth of the D1 misses or more: measured within 1.8 % (seed 1,
    // the default); asserted within 3 %.
    let total = d1(&exact["totals"]);
    let sampled: BTreeMap<&str, u64> = low["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["function"].as_str().unwrap(), d1(&f["inclusive"])))
        .collect();
    let mut checked = 0;
    for f in exact["functions"].as_array().unwrap() {
        let want = d1(&f["inclusive"]);
        if want * 10 < total {
            continue;
        }
        let name = f["function"].as_str().unwrap();
        let got = sampled[name];
        let error = (got as f64 - want as f64).abs() / want as f64;
        assert!(error < 0.03, "{name}: {got} sampled, {want} exact");
        checked += 1;
    }
    assert!(
        checked >= 5,
        "main, sum, stream, strided and the start-up frames"
    );
}

#[test]
fn callgrind_out_and_a_live_program_under_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = record(dir.path(), &[]) else {
        return;
    };
    let out = dir.path().join("s.callgrind");
    let o = out.to_str().unwrap();
    let r = callgraph(
        &[trace.to_str().unwrap()],
        &["--sampled", "--rate", "0.5", "--callgrind-out", o],
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("desc: Sampled at rate 0.5: misses are estimates"));
    let totals = text.lines().find(|l| l.starts_with("totals:")).unwrap();
    assert!(totals.starts_with(&format!("totals: {} ", r["totals"]["Ir"])));
    // `-- PROGRAM`: the tool's sampled stream with its call events (no full trace).
    let live = callgraph(
        &["--", exe.to_str().unwrap()],
        &["--sampled", "--rate", "0.5"],
    );
    let file = callgraph(&[trace.to_str().unwrap()], &["--sampled", "--rate", "0.5"]);
    assert_eq!(live["sampled"], 0.5);
    assert_eq!(live["call_events"], true);
    let main = |r: &Value| {
        r["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["function"] == "main")
            .map(|f| (f["calls"].clone(), f["inclusive"]["Dr"].clone()))
    };
    assert_eq!(main(&live), main(&file));
}

#[test]
fn a_recording_without_call_events_says_so_under_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, trace)) = record(dir.path(), &["--no-calls"]) else {
        return;
    };
    let r = callgraph(&[trace.to_str().unwrap()], &["--sampled", "--rate", "0.5"]);
    assert_eq!(r["call_events"], false);
    assert!(r["calls"].as_array().unwrap().is_empty());
    assert!(r["notes"][0].as_str().unwrap().contains("no call events"));
    for f in r["functions"].as_array().unwrap() {
        assert!(f["inclusive"].is_null());
    }
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("known in total only"))
    );
    let main = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == "main");
    assert!(d1(&main.unwrap()["self"]) > 0, "misses placed by pc");
}

/// `report --sampled --sampled-calls TRACE`'s call-graph section: the same functions, calls
/// and instructions as the full report's (its misses estimates). Without `--sampled-calls`
/// the section is left out and a note says how to get it.
#[test]
fn the_sampled_report_has_the_call_graph_section() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, trace)) = record(dir.path(), &[]) else {
        return;
    };
    let section = |extra: &[&str]| -> Vec<(String, u64, u64)> {
        let out = dir.path().join(format!("r{}", extra.len()));
        let mut args = vec!["report", trace.to_str().unwrap(), "-q", "-o"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        common::cs().args(&args).assert().success();
        let text = std::fs::read_to_string(out.join("report.json")).unwrap();
        let r: Value = serde_json::from_str(&text).unwrap();
        let mut rows: Vec<_> = r["callgraph"]["functions"]
            .as_array()
            .expect("a call-graph section")
            .iter()
            .map(|f| {
                (
                    f["function"].as_str().unwrap().to_string(),
                    f["calls"].as_u64().unwrap(),
                    f["instructions_inclusive"].as_u64().unwrap(),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    let full = section(&[]);
    assert!(full.iter().any(|(f, calls, _)| f == "sum" && *calls == 6));
    // The table's 20 functions are the most missing ones: the estimates may order its tail
    // otherwise, so the rows of both are compared.
    let sampled = section(&["--sampled", "--rate", "0.1", "--sampled-calls"]);
    let mut both = 0;
    for row in &sampled {
        if let Some(f) = full.iter().find(|f| f.0 == row.0) {
            assert_eq!(row, f);
            both += 1;
        }
    }
    assert!(both >= 15, "{both} functions in both tables");
    for f in ["main", "sum", "stream", "strided", "chase", "descend"] {
        assert!(sampled.iter().any(|r| r.0 == f), "{f}");
    }
    let out = dir.path().join("without");
    common::cs()
        .args([
            "report",
            trace.to_str().unwrap(),
            "-q",
            "--sampled",
            "--rate",
            "0.1",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert!(
        r["callgraph"].is_null(),
        "no section without --sampled-calls"
    );
    let notes = r["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("--sampled-calls")),
        "{notes:?}"
    );
}

/// Functions whose costs depend on the program's environment: the loader's start-up reads
/// the environment variables, and the tool's sampled run has a few of its own.
fn reads_environment(function: &str) -> bool {
    function.starts_with("_dl_")
        || function.starts_with("ld-linux")
        || ["dl_main", "__GI___tunables_init", "_dl_start"].contains(&function)
}

/// `attribute --callgraph --sampled -- PROGRAM` reads the tool's sampled stream, its call
/// events complete: at rate 1 its calls, `Ir`, `Dr` and `Dw`, self and inclusive, per
/// function and per call, are the exact graph's of the same program run the same way
/// (`attribute --callgraph -- PROGRAM`), but for the loader's reading of the environment.
/// At rate 0.1 too; `--no-calls` gives the graph without call events.
#[test]
fn a_live_sampled_call_graph_has_the_exact_calls_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, _)) = record(dir.path(), &[]) else {
        return;
    };
    let program = ["--", exe.to_str().unwrap()];
    let exact = callgraph(&program, &[]);
    let counts = ["Ir", "Dr", "Dw"];
    let keep = |f: Functions| -> Functions {
        f.into_iter()
            .filter(|(k, _)| !reads_environment(k))
            .collect()
    };
    type Calls = BTreeMap<(String, String, String), (u64, Vec<u64>)>;
    let keep_calls = |c: Calls| -> Calls {
        c.into_iter()
            .filter(|((caller, callee, _), _)| {
                !reads_environment(caller) && !reads_environment(callee)
            })
            .collect()
    };
    let want = keep(functions(&exact, &counts));
    assert!(want.contains_key("main") && want["sum"].0 == 6);
    for rate in ["1", "0.1"] {
        let live = callgraph(&program, &["--sampled", "--rate", rate]);
        assert_eq!(live["call_events"], true, "rate {rate}");
        assert_eq!(keep(functions(&live, &counts)), want, "rate {rate}");
        assert_eq!(
            keep_calls(calls(&live, &counts)),
            keep_calls(calls(&exact, &counts)),
            "rate {rate}"
        );
    }
    let without = callgraph(&program, &["--sampled", "--rate", "0.5", "--no-calls"]);
    assert_eq!(without["call_events"], false);
    assert!(without["calls"].as_array().unwrap().is_empty());
}

/// `report --sampled --sampled-calls -- PROGRAM` has the call-graph section, from the tool's
/// stream.
#[test]
fn a_live_sampled_report_has_the_call_graph_section() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, _)) = record(dir.path(), &[]) else {
        return;
    };
    let out = dir.path().join("live");
    let args = [
        "report",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--sampled",
        "--sampled-calls",
        "--rate",
        "0.1",
        "--",
        exe.to_str().unwrap(),
    ];
    common::cs().args(args).assert().success();
    let text = std::fs::read_to_string(out.join("report.json")).unwrap();
    let r: Value = serde_json::from_str(&text).unwrap();
    let functions = r["callgraph"]["functions"]
        .as_array()
        .expect("a call-graph section");
    let sum = functions.iter().find(|f| f["function"] == "sum").unwrap();
    assert_eq!(sum["calls"], 6);
}
