//! `attribute --callgraph` and `--callgrind-out` on examples/callgraph/calltree.c, a program
//! whose call tree is known (a function called from two callers, recursion, tail calls, calls
//! through a function pointer): its call counts, each function's inclusive D1 misses against
//! a brute-force sum over the trace, `callgrind_annotate --inclusive=yes` reading our file,
//! and the call counts of real Callgrind. Skipped, saying why, without Valgrind, cc or the tool.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cachescope::batch::{CallOp, Step};
use cachescope::sim::{CachegrindSim, Geometry};
use cachescope::trace::OpenOptions;
use cachescope::{AccessKind, Batch};
use serde_json::Value;

mod common;
use common::{have, json, tool_or_skip, tools_or_skip};

/// The example's functions.
const FUNCTIONS: [&str; 8] = [
    "main", "stream", "strided", "sum", "descend", "leaf", "walk", "chase",
];

/// Its calls: (caller, callee, count). ROUNDS = 3, DEPTH = 12, KERNEL_CALLS = 40.
const CALLS: [(&str, &str, u64); 9] = [
    ("main", "stream", 3),
    ("main", "strided", 3),
    ("stream", "sum", 3),
    ("strided", "sum", 3), // a tail call: a jump into sum, entered as a call
    ("main", "descend", 3),
    ("descend", "descend", 36),
    ("descend", "leaf", 3), // a tail call too
    ("main", "walk", 20),   // through the function pointer
    ("main", "chase", 20),
];

const CACHES: [&str; 3] = ["32K,8,64", "32K,8,64", "8M,16,64"];

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/callgraph/calltree.c")
}

/// Records the example (`-O2 -fno-inline`, so calls stay calls and the tail calls jumps)
/// with the tool (the only backend with call events); `None`, the test skipped, where it
/// cannot run.
fn record(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    if !tool_or_skip() {
        return None;
    }
    Some(common::record_c_program(
        dir,
        &example(),
        &["-O2", "-fno-inline"],
        &["--backend", "tool"],
    ))
}

fn callgraph(trace: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "attribute",
        trace.to_str().unwrap(),
        "--callgraph",
        "--json",
    ];
    args.extend(["--I1", CACHES[0], "--D1", CACHES[1], "--LL", CACHES[2]]);
    args.extend(extra);
    json(&args)
}

fn function<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

fn d1(costs: &Value) -> u64 {
    costs["D1mr"].as_u64().unwrap() + costs["D1mw"].as_u64().unwrap()
}

/// Calls between the example's functions, summed over sites.
fn example_calls(
    pairs: impl Iterator<Item = (String, String, u64)>,
) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for (a, b, n) in pairs {
        if FUNCTIONS.contains(&a.as_str()) && FUNCTIONS.contains(&b.as_str()) {
            *m.entry((a, b)).or_default() += n;
        }
    }
    m
}

fn expected_calls() -> BTreeMap<(String, String), u64> {
    example_calls(CALLS.iter().map(|&(a, b, n)| (a.into(), b.into(), n)))
}

/// The executable's functions by run-time entry address: `nm`'s offsets plus its load base
/// from the event log's memory map.
fn entries(exe: &Path, trace: &Path) -> BTreeMap<u64, String> {
    let nm = Command::new("nm").arg(exe).output().unwrap();
    let text = String::from_utf8(nm.stdout).unwrap();
    let exe_name = exe.canonicalize().unwrap();
    let log = cachescope::attribution::events::EventReader::open(&PathBuf::from(format!(
        "{}.events",
        trace.display()
    )))
    .unwrap();
    let base = log
        .filter_map(Result::ok)
        .find_map(|e| match e.kind {
            cachescope::attribution::events::EventKind::Map(m)
                if m.offset == 0 && Path::new(&m.path) == exe_name =>
            {
                Some(m.start)
            }
            _ => None,
        })
        .expect("the executable's mapping");
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (addr, kind, name) = (w.next()?, w.next()?, w.next()?);
            (kind == "T" && FUNCTIONS.contains(&name)).then(|| {
                (
                    base + u64::from_str_radix(addr, 16).unwrap(),
                    name.to_string(),
                )
            })
        })
        .collect()
}

/// Brute force: every data reference of the trace through Cachegrind's model, each D1 miss
/// added to every example function on its thread's stack (replayed from the call events on a
/// plain vector), once.
fn brute_force_inclusive(trace: &Path, names: &BTreeMap<u64, String>) -> BTreeMap<String, u64> {
    let g = |s: &str| Geometry::parse(s).unwrap();
    let mut sim = CachegrindSim::new(g(CACHES[0]), g(CACHES[1]), g(CACHES[2])).unwrap();
    let mut t = cachescope::trace::open(trace, &OpenOptions::default()).unwrap();
    let mut stacks: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut misses = BTreeMap::new();
    let mut b = Batch::new();
    while t.read_batch(&mut b).unwrap() > 0 {
        for step in b.steps() {
            match step {
                Step::Call(e) => {
                    let s = stacks.entry(e.thread).or_default();
                    match e.op {
                        CallOp::Enter { key, .. } => s.push(key),
                        CallOp::Leave { frames } => s.truncate(s.len() - frames as usize),
                        CallOp::Reset => stacks.clear(),
                    }
                }
                Step::Accesses(range, thread) => {
                    for j in range {
                        let o = match b.kinds[j] {
                            AccessKind::Instr => sim.instr_outcome(b.addrs[j], b.sizes[j]),
                            k => sim.data_outcome(b.addrs[j], b.sizes[j], k == AccessKind::Store),
                        };
                        if b.kinds[j] == AccessKind::Instr || !o.l1_miss {
                            continue;
                        }
                        let on: BTreeSet<&String> = stacks
                            .get(&thread)
                            .into_iter()
                            .flatten()
                            .filter_map(|k| names.get(k))
                            .collect();
                        for f in on {
                            *misses.entry(f.clone()).or_default() += 1;
                        }
                    }
                }
            }
        }
    }
    misses
}

#[test]
fn the_example_call_tree_inclusive_misses_and_callgrind_annotate() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = record(dir.path()) else {
        return;
    };
    if have("objdump") {
        let d = Command::new("objdump")
            .args(["-d", "--no-show-raw-insn"])
            .arg(&exe)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&d.stdout);
        let strided = text
            .split("<strided>:")
            .nth(1)
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap();
        assert!(
            strided.contains("jmp") && strided.contains("<sum>"),
            "strided ends in a jump:{strided}"
        );
    }
    let out = dir.path().join("ct.callgrind");
    let r = callgraph(&trace, &["--callgrind-out", out.to_str().unwrap()]);
    assert_eq!(r["call_events"], true);
    objects_named_where_files_are_not(&out);

    // Call counts per caller and callee, tail calls and calls through a pointer included.
    let pairs = r["calls"].as_array().unwrap().iter().map(|c| {
        (
            c["caller"].as_str().unwrap().to_string(),
            c["callee"].as_str().unwrap().to_string(),
            c["calls"].as_u64().unwrap(),
        )
    });
    assert_eq!(example_calls(pairs), expected_calls());

    // Inclusive D1 misses against brute force over the trace.
    let names = entries(&exe, &trace);
    assert_eq!(names.len(), FUNCTIONS.len(), "{names:?}");
    let brute = brute_force_inclusive(&trace, &names);
    for f in FUNCTIONS {
        let got = d1(&function(&r, f)["inclusive"]);
        assert_eq!(got, brute.get(f).copied().unwrap_or(0), "{f}");
    }
    // Sanity of the tree: main holds everything its callees do; sum misses on `big`.
    let main = d1(&function(&r, "main")["inclusive"]);
    let sum = d1(&function(&r, "sum")["inclusive"]);
    assert!(main > sum && sum > 100_000, "main {main}, sum {sum}");
    assert_eq!(function(&r, "sum")["structures"][0]["structure"], "big");
    assert_eq!(
        d1(&function(&r, "leaf")["inclusive"]),
        d1(&function(&r, "leaf")["self"])
    );

    // callgrind_annotate --inclusive=yes reads our file and shows the same inclusive misses.
    if !tools_or_skip(&["callgrind_annotate"]) {
        return;
    }
    let a = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--show=D1mr,D1mw", "--threshold=100"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let text = String::from_utf8_lossy(&a.stdout);
    // callgrind_annotate lists a function once per file its lines are in (`FILE:NAME
    // [OBJECT]`): a PLT stub's instructions are charged to its caller (as Callgrind's
    // --skip-plt charges them), have no line, are written `fi=???` and show as `???:main`
    // (no object). A function's inclusive misses are the sum of those rows. (A row of the callee's file without an object is what its incoming
    // calls carry, left out: it would count the function twice.)
    let mut rows: BTreeMap<&str, (u64, Vec<&str>)> = BTreeMap::new();
    for line in text.lines() {
        let Some((nums, file, name, object)) = annotate_row(line) else {
            continue;
        };
        if object != Some("[calltree]") && file != "???" {
            continue;
        }
        if let Some(f) = FUNCTIONS.iter().find(|&&f| name == f) {
            let e = rows.entry(f).or_default();
            e.0 += nums[0] + nums[1];
            e.1.push(line);
        }
    }
    for f in FUNCTIONS {
        let (misses, lines) = rows
            .get(f)
            .unwrap_or_else(|| panic!("{f} not in callgrind_annotate's output:\n{text}"));
        assert_eq!(
            *misses,
            d1(&function(&r, f)["inclusive"]),
            "{f}: {lines:#?}"
        );
    }
}

/// Code without debug information (the C start-up's `_start`, PLT sections) has no file, so
/// its `fl=`/`cfi=` is `???` as Callgrind writes it; the object holding it is always named
/// (`ob=`/`cob=`), which is what KCachegrind groups such functions by.
fn objects_named_where_files_are_not(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let (mut object, mut callee_object) = ("", "");
    let (mut files, mut callees) = (0, 0);
    for line in text.lines() {
        if let Some(o) = line.strip_prefix("ob=") {
            object = o;
        } else if let Some(o) = line.strip_prefix("cob=") {
            callee_object = o;
        } else if line == "fl=???" {
            files += 1;
            assert!(
                !object.is_empty() && object != "???",
                "{line} in ob={object}"
            );
        } else if line == "cfi=???" {
            callees += 1;
            assert!(
                !callee_object.is_empty() && callee_object != "???",
                "{line} in cob={callee_object}"
            );
        } else if line == "fn=_start" {
            assert_eq!(object, "calltree", "{line}");
        }
    }
    // The start-up code has no lines: the check above saw such functions and calls into them.
    assert!(
        files > 0 && callees > 0,
        "{files} fl=???, {callees} cfi=???"
    );
}

/// One function row of callgrind_annotate's output: its counts (percentages in parentheses
/// dropped, `.` for 0), and the function's file, name and `[OBJECT]` (`FILE:NAME [OBJECT]`,
/// the object optional).
type AnnotateRow<'a> = (Vec<u64>, &'a str, &'a str, Option<&'a str>);

/// `line` as an [`AnnotateRow`]; `None` for any other line.
fn annotate_row(line: &str) -> Option<AnnotateRow<'_>> {
    let mut bare = String::new();
    let mut depth = 0;
    for c in line.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => bare.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = bare.split_whitespace().collect();
    let at = words.iter().position(|w| w.contains(':'))?;
    let nums: Vec<u64> = words[..at]
        .iter()
        .map(|w| match *w {
            "." => Some(0),
            w => w.replace(',', "").parse().ok(),
        })
        .collect::<Option<_>>()?;
    if nums.len() != 2 {
        return None;
    }
    let mut rest = line.split_whitespace().skip_while(|w| !w.contains(':'));
    let (file, name) = rest.next()?.rsplit_once(':')?;
    Some((nums, file, name, rest.next()))
}

/// Callgrind's calls per (caller, callee): names by `fn=`/`cfn=` (with its name compression),
/// counts by `calls=`.
fn callgrind_calls(file: &Path) -> BTreeMap<(String, String), u64> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut name = |spec: &str| -> String {
        let spec = spec.trim();
        if let Some(rest) = spec.strip_prefix('(') {
            let (id, n) = rest.split_once(')').unwrap();
            let n = n.trim();
            if !n.is_empty() {
                names.insert(id.to_string(), n.to_string());
            }
            names[id].clone()
        } else {
            spec.to_string()
        }
    };
    let (mut caller, mut callee) = (String::new(), String::new());
    let mut pairs = Vec::new();
    for line in text.lines() {
        if let Some(s) = line.strip_prefix("fn=") {
            caller = name(s);
        } else if let Some(s) = line.strip_prefix("cfn=") {
            callee = name(s);
        } else if let Some(s) = line.strip_prefix("calls=") {
            let n: u64 = s.split_whitespace().next().unwrap().parse().unwrap();
            pairs.push((caller.clone(), callee.clone(), n));
        }
    }
    example_calls(pairs.into_iter())
}

#[test]
fn call_counts_equal_callgrinds() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = record(dir.path()) else {
        return;
    };
    let out = dir.path().join("callgrind.out");
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--cache-sim=yes", "--separate-recs=1"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(callgrind_calls(&out), expected_calls());
    let r = callgraph(&trace, &[]);
    let ours = r["calls"].as_array().unwrap().iter().map(|c| {
        (
            c["caller"].as_str().unwrap().to_string(),
            c["callee"].as_str().unwrap().to_string(),
            c["calls"].as_u64().unwrap(),
        )
    });
    assert_eq!(example_calls(ours), callgrind_calls(&out));
}

#[test]
fn a_trace_without_call_events_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.txt");
    std::fs::write(
        &t,
        "I  00401000,4\n L 00009000,8\nI  00401004,4\n S 00009040,8\n",
    )
    .unwrap();
    let r = callgraph(&t, &[]);
    assert_eq!(r["call_events"], false);
    assert!(r["calls"].as_array().unwrap().is_empty());
    assert!(r["notes"][0].as_str().unwrap().contains("no call events"));
    assert_eq!(r["totals"]["Ir"], 2);
    assert_eq!(r["totals"]["Dr"], 1);
    assert_eq!(r["totals"]["Dw"], 1);
    for f in r["functions"].as_array().unwrap() {
        assert!(f["inclusive"].is_null());
    }
    let out = dir.path().join("t.callgrind");
    common::cs()
        .args([
            "attribute",
            t.to_str().unwrap(),
            "--callgrind-out",
            out.to_str().unwrap(),
            "-q",
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("desc: No call events: self costs only"));
}

/// examples/callgraph/unwind.c: recursion left by longjmp, a signal handler inside raise().
#[test]
fn longjmp_and_signal_handlers_keep_the_stack_right() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/callgraph/unwind.c");
    let (_, trace) =
        common::record_c_program(dir.path(), &src, &["-fno-inline"], &["--backend", "tool"]);
    let r = callgraph(&trace, &[]);
    let calls: BTreeMap<(String, String), u64> = r["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = |k: &str| c[k].as_str().unwrap().to_string();
            (
                (name("caller"), name("callee")),
                c["calls"].as_u64().unwrap(),
            )
        })
        .fold(BTreeMap::new(), |mut m, (k, n)| {
            *m.entry(k).or_default() += n;
            m
        });
    let n = |a: &str, b: &str| {
        calls
            .get(&(a.to_string(), b.to_string()))
            .copied()
            .unwrap_or(0)
    };
    assert_eq!((n("main", "deep"), n("deep", "deep")), (5, 500));
    // Each longjmp left deep's 101 frames: what main does next is main's.
    assert_eq!((n("main", "after"), n("deep", "after")), (1, 0));
    assert_eq!(
        n("main", "main"),
        0,
        "a longjmp back into main is a return, not a call"
    );
    // The handler runs above its boundary, not under what it interrupted.
    assert_eq!(n("<signal 10>", "on_signal"), 1);
    let handler = d1(&function(&r, "on_signal")["inclusive"]);
    assert!(handler > 4000, "on_signal misses {handler}");
    assert_eq!(d1(&function(&r, "<signal 10>")["inclusive"]), handler);
    assert!(d1(&function(&r, "interrupted")["inclusive"]) < handler / 10);
    assert!(d1(&function(&r, "deep")["inclusive"]) < d1(&function(&r, "after")["inclusive"]));
}

/// The program's start-up code and PLT entries are named as objdump names them (`_init`,
/// `__do_global_dtors_aux`, `NAME@plt` from the dynamic relocations), not by offset
/// (`calltree+0x1040`): every function of the program's object is one of objdump's labels.
#[test]
fn startup_code_and_plt_entries_are_named_as_objdump_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, trace)) = record(dir.path()) else {
        return;
    };
    if !have("objdump") {
        common::skip("objdump", "binutils is not installed");
        return;
    }
    let d = Command::new("objdump")
        .arg("-d")
        .arg(&exe)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&d.stdout);
    let labels: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" <")?.1.strip_suffix(">:"))
        .collect();
    assert!(labels.iter().any(|l| l.ends_with("@plt")), "{labels:?}");
    let r = callgraph(&trace, &[]);
    let ours: Vec<&str> = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["object"] == "calltree")
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    for f in FUNCTIONS.iter().chain(&["_start", "_init"]) {
        assert!(ours.contains(f), "{f} not among {ours:?}");
    }
    for f in &ours {
        assert!(labels.contains(f), "{f} is no objdump label: {labels:?}");
    }
}
