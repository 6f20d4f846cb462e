//! Stack locals field by field (docs/attribution.md, docs/advice.md): examples/advice/
//! stack_locals.c keeps an array of structures in the frame of a function called from two
//! places and recursively. Its references per field, as `attribute --fields` counts them under
//! `walk:cells`, must equal a brute force that knows nothing of frames: the program prints
//! where each frame's array is, and every data reference the function's own instructions make
//! into one of those arrays is counted by the field its first byte falls in. And `whatif`'s
//! split of that local must predict the misses of the fixed twin (stack_locals_fixed.c, the
//! split made by hand) within 10 %, as advise's pairs are checked (tests/advice.rs); `advise`
//! must propose that split, with the same prediction. Skips (saying why) where cachescope's Valgrind tool, a C
//! compiler or `nm` is missing.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cachescope::trace::OpenOptions;
use cachescope::{AccessKind, Batch};
use serde_json::Value;

use common::{bin, compile_c_file, have, json, skip, structure, tool_or_skip};

const MACHINE: &[&str] = &["--I1", "32K,8,64", "--D1", "32K,8,64", "--L2", "1M,16,64"];
/// `struct cell`: `hot` at 0, `cold[3]` at 8.
const CELL: u64 = 32;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/advice/{name}.c"))
}

/// Compiles (not position-independent, so `nm`'s addresses are the run's) and records
/// `name`: the executable, the trace and the program's output.
fn record(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, PathBuf, String) {
    let exe = dir.join(name);
    compile_c_file(&example(name), &exe, &["-O2", "-g", "-no-pie"]);
    let trace = dir.join(format!("{name}.cst"));
    let mut record_args = vec!["-q"];
    record_args.extend(args);
    let (out, _) = cachescope_testkit::record_ok(bin(), &record_args, &trace, &[&exe]);
    (exe, trace, out)
}

/// `walk`'s code: [start, end) from `nm -S`.
fn walk_code(exe: &Path) -> (u64, u64) {
    let out = std::process::Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(exe)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.ends_with(" walk"))
        .unwrap_or_else(|| panic!("no walk in nm's output:\n{text}"));
    let mut words = line.split_whitespace();
    let start = u64::from_str_radix(words.next().unwrap(), 16).unwrap();
    let size = u64::from_str_radix(words.next().unwrap(), 16).unwrap();
    (start, start + size)
}

/// The frames' arrays the program printed: (start, end).
fn printed(out: &str) -> Vec<(u64, u64)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("cells 0x"))
        .map(|l| {
            let (a, n) = l.split_once(' ').unwrap();
            let a = u64::from_str_radix(a, 16).unwrap();
            (a, a + n.trim().parse::<u64>().unwrap())
        })
        .collect()
}

/// Brute force: the references `walk`'s instructions make into a printed array, by field.
fn brute_force(
    trace: &Path,
    code: (u64, u64),
    arrays: &[(u64, u64)],
) -> BTreeMap<&'static str, u64> {
    let mut t = cachescope::trace::open(trace, &OpenOptions::default()).unwrap();
    let mut b = Batch::new();
    let mut counts = BTreeMap::new();
    while t.read_batch(&mut b).unwrap() > 0 {
        for j in 0..b.len() {
            let (addr, pc) = (b.addrs[j], b.pcs[j]);
            if b.kinds[j] == AccessKind::Instr || pc < code.0 || pc >= code.1 {
                continue;
            }
            if let Some(&(start, _)) = arrays.iter().find(|&&(s, e)| addr >= s && addr < e) {
                let field = if (addr - start) % CELL < 8 {
                    "hot"
                } else {
                    "cold"
                };
                *counts.entry(field).or_default() += 1;
            }
        }
    }
    counts
}

#[test]
fn a_local_array_is_counted_field_by_field_as_a_brute_force_counts_it() {
    if !tool_or_skip() {
        return;
    }
    if !have("nm") {
        skip("nm", "binutils is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (exe, trace, out) = record(dir.path(), "stack_locals", &[]);
    let arrays = printed(&out);
    assert_eq!(
        arrays.len(),
        5,
        "three frames from first, two from second: {out}"
    );
    let brute = brute_force(&trace, walk_code(&exe), &arrays);
    let t = trace.to_str().unwrap();
    let report = json(&["attribute", t, "--fields", "--json"]);
    let s = structure(&report, "walk:cells");
    assert_eq!(s["kind"], "stack", "{s:#}");
    assert_eq!(s["type_name"], "struct cell", "{s:#}");
    assert_eq!(s["element_size"], CELL, "{s:#}");
    assert_eq!(s["dims"], serde_json::json!([2048]), "{s:#}");
    let mut ours = BTreeMap::new();
    for f in s["fields"].as_array().unwrap() {
        ours.insert(
            f["field"].as_str().unwrap().to_owned(),
            f["refs"].as_u64().unwrap(),
        );
    }
    for (field, n) in &brute {
        assert_eq!(
            ours.get(*field),
            Some(n),
            "{field}: ours {ours:?}, brute force {brute:?}"
        );
    }
    assert_eq!(
        ours.len(),
        brute.len(),
        "ours {ours:?}, brute force {brute:?}"
    );
    // Per-field misses add up to the structure's, and its bucket is in the bucket table.
    let misses: u64 = s["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["misses"].as_u64().unwrap())
        .sum();
    assert_eq!(s["misses"].as_u64(), Some(misses));
    assert!(common::names(&report).iter().any(|n| n == "walk:cells"));

    // Without call events the stack stays one bucket, and a note says why.
    let bare = dir.path().join("bare.cst");
    cachescope_testkit::record_ok(bin(), &["-q", "--no-calls"], &bare, &[&exe]);
    let report = json(&["attribute", bare.to_str().unwrap(), "--fields", "--json"]);
    assert!(!common::names(&report).iter().any(|n| n == "walk:cells"));
    let notes = report["notes"].to_string();
    assert!(notes.contains("no call events"), "{notes}");
}

/// (level, misses) of one simulation's JSON.
fn levels(v: &Value) -> Vec<(String, u64)> {
    v["simulations"][0]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["misses"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_split_local_predicts_the_program_split_by_hand() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, planted, _) = record(dir.path(), "stack_locals", &[]);
    let (_, fixed, _) = record(dir.path(), "stack_locals_fixed", &[]);
    let p = planted.to_str().unwrap();
    let mut args = vec!["whatif", p, "--json", "--change", "split:walk:cells=hot"];
    args.extend(MACHINE);
    let whatif = json(&args);
    let mut args = vec!["simulate", fixed.to_str().unwrap(), "--json"];
    args.extend(MACHINE);
    let twin = levels(&json(&args));
    let (before, after) = (levels(&whatif["original"]), levels(&whatif["changed"]));
    let d1 = |v: &[(String, u64)]| v.iter().find(|l| l.0 == "L1D").map(|l| l.1).unwrap();
    assert!(
        d1(&after) < d1(&before) * 2 / 3,
        "the split saves D1 misses: {whatif:#}"
    );
    for (level, actual) in &twin {
        if level == "L1I" {
            continue;
        }
        let b = before.iter().find(|l| &l.0 == level).unwrap().1;
        let predicted = after.iter().find(|l| &l.0 == level).unwrap().1;
        let slack = (*actual as f64 * 0.10).max(b as f64 * 1e-3);
        let error = predicted.abs_diff(*actual) as f64;
        eprintln!("{level}: before {b}, predicted {predicted}, split by hand {actual}");
        assert!(
            error <= slack,
            "{level}: predicted {predicted}, split by hand {actual}"
        );
    }
    // advise proposes that split, predicted as whatif predicts it.
    let mut args = vec!["advise", p, "--json"];
    args.extend(MACHINE);
    let advice = json(&args);
    let split = advice["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "split" && f["structure"] == "walk:cells")
        .unwrap_or_else(|| panic!("no split of walk:cells: {advice:#}"));
    let l1d = split["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["level"] == "L1D")
        .unwrap();
    assert_eq!(l1d["misses_after"].as_u64(), Some(d1(&after)), "{split:#}");
    assert!(
        split["whatif"]
            .as_str()
            .unwrap()
            .contains("split:walk:cells=hot")
    );
}

/// The call graph names the structures each function's subtree misses on with the same map
/// as `attribute`, call events applied: `walk`'s misses fall on its frames' `walk:cells`, not
/// on the undivided `stack`.
#[test]
fn the_call_graph_names_a_frames_local_array() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, trace, _) = record(dir.path(), "stack_locals", &[]);
    let r = json(&[
        "attribute",
        trace.to_str().unwrap(),
        "--callgraph",
        "--json",
    ]);
    let functions = r["functions"].as_array().unwrap();
    let walk = functions
        .iter()
        .find(|f| f["function"] == "walk")
        .unwrap_or_else(|| panic!("no walk in the call graph: {r}"));
    let missed = |name: &str| {
        walk["structures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["structure"] == name)
            .map_or(0, |s| s["d1_misses"].as_u64().unwrap())
    };
    let incl =
        walk["inclusive"]["D1mr"].as_u64().unwrap() + walk["inclusive"]["D1mw"].as_u64().unwrap();
    let cells = missed("walk:cells");
    assert_eq!(walk["structures"][0]["structure"], "walk:cells", "{walk}");
    assert_eq!(walk["structures"][0]["kind"], "stack", "{walk}");
    // 2048 cells of 32 bytes, five frames, each line missed at least once per frame.
    assert!(cells >= 5 * 2048 * 32 / 64, "{walk}");
    assert!(
        cells * 100 >= incl * 90,
        "walk:cells {cells} of {incl}: {walk}"
    );
    assert!(missed("stack") * 100 < incl, "{walk}");
}
