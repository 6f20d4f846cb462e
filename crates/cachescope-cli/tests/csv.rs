//! `--csv` on every command that prints results: golden files of the exact CSV on fixed,
//! seeded workloads, and one end-to-end check per command that the CSV parses, its header
//! names JSON fields, and it has one row per record of `--json` (points, programs, methods…).
//! `UPDATE_GOLDEN=1 cargo test -p cachescope-cli --test csv` rewrites tests/golden/*.csv after
//! an intended change (review the diff).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// A small seeded workload every command reads.
const ZIPF: [&str; 6] = ["--workload", "zipf", "--lines", "512", "--refs", "20000"];

/// Columns that hold timings: blanked before the comparison with the golden file.
const VOLATILE: [&str; 4] = [
    "signature_ns_per_ref",
    "clustering_ms",
    "clustering_ns_per_ref",
    "simpoint_measured_speedup",
];

fn run(dir: &Path, args: &[&str]) -> String {
    let out = cargo_bin_cmd!("cachescope")
        .current_dir(dir)
        .args(args)
        .arg("-q")
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("UTF-8 output")
}

/// Parses CSV (quoted fields included) into a header and rows, checking every row's width.
fn parse(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => fields.push(std::mem::take(&mut field)),
                _ => field.push(c),
            }
        }
        assert!(!quoted, "unterminated quote in {line:?}");
        fields.push(field);
        rows.push(fields);
    }
    assert!(!rows.is_empty(), "no header in {text:?}");
    let header = rows.remove(0);
    for r in &rows {
        assert_eq!(r.len(), header.len(), "row {r:?} against header {header:?}");
    }
    (header, rows)
}

/// Blanks the timing columns and compares with (or, with UPDATE_GOLDEN, writes) the golden.
fn golden(name: &str, text: &str) {
    let (header, rows) = parse(text);
    let mut stable = header.join(",") + "\n";
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&header)
            .map(|(v, h)| {
                if VOLATILE.contains(&h.as_str()) {
                    String::new()
                } else if v.contains(',') || v.contains('"') {
                    format!("\"{}\"", v.replace('"', "\"\""))
                } else {
                    v.clone()
                }
            })
            .collect();
        stable += &(cells.join(",") + "\n");
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.csv"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &stable).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert!(
        stable == want,
        "{name}: the CSV differs from {}:\n{stable}",
        path.display()
    );
}

/// The scalar field names of a JSON record, nested objects joined with `_`.
fn field_names(prefix: &str, v: &Value, out: &mut Vec<String>) {
    if let Value::Object(map) = v {
        for (k, child) in map {
            let name = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}_{k}")
            };
            match child {
                Value::Object(_) => field_names(&name, child, out),
                Value::Array(_) => {}
                _ => out.push(name),
            }
        }
    }
}

/// Runs `args` with `--csv` and `--json`; checks the CSV against the golden `name` and that
/// it has one row per record `records` picks from the JSON, with the records' field names.
fn check(dir: &Path, name: &str, args: &[&str], records: fn(&Value) -> Vec<Value>) {
    let csv = run(dir, &[args, &["--csv"]].concat());
    let json: Value = serde_json::from_str(&run(dir, &[args, &["--json"]].concat()))
        .unwrap_or_else(|e| panic!("{name}: --json is not JSON: {e}"));
    let (header, rows) = parse(&csv);
    let recs = records(&json);
    assert_eq!(
        rows.len(),
        recs.len(),
        "{name}: CSV rows against JSON records"
    );
    assert!(!recs.is_empty(), "{name}: nothing to compare");
    let mut names = Vec::new();
    for r in &recs {
        field_names("", r, &mut names);
    }
    for h in &header {
        assert!(
            names.contains(h),
            "{name}: column {h:?} is no JSON field ({names:?})"
        );
    }
    golden(name, &csv);
}

fn whole(v: &Value) -> Vec<Value> {
    vec![v.clone()]
}

fn points(v: &Value) -> Vec<Value> {
    v["points"].as_array().cloned().unwrap_or_default()
}

#[test]
fn analyses_print_one_csv_row_per_json_point() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let z = |rest: &[&'static str]| -> Vec<&'static str> { [&ZIPF[..], rest].concat() };
    check(d, "stats", &[&["stats"][..], &ZIPF].concat(), whole);
    check(
        d,
        "mrc",
        &[&["mrc"][..], &z(&["--sizes", "4K,16K,32K"])].concat(),
        points,
    );
    check(
        d,
        "footprint",
        &[&["footprint"][..], &z(&["--windows", "10,100,1000"])].concat(),
        points,
    );
    check(
        d,
        "hotl",
        &[
            &["hotl"][..],
            &z(&["--range", "4K..64K", "--per-octave", "2"]),
        ]
        .concat(),
        points,
    );
    check(
        d,
        "l2",
        &[
            &["l2"][..],
            &z(&["--l1", "4K", "--l2", "8K,16K", "--simulate"]),
        ]
        .concat(),
        // `simulated_miss_ratio` is `simulated.points[i].miss_ratio`.
        |v| {
            let mut ps = points(v);
            for (p, s) in ps.iter_mut().zip(points(&v["simulated"])) {
                p["simulated"] = s;
            }
            ps
        },
    );
    check(
        d,
        "simulate",
        &[
            &["simulate"][..],
            &z(&["--cache", "8K,2,64", "--cache", "16K,4,64", "--3c"]),
        ]
        .concat(),
        |v| {
            v["simulations"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .flat_map(|(i, s)| {
                    let mut levels = s["levels"].as_array().cloned().unwrap_or_default();
                    for l in &mut levels {
                        l["simulation"] = i.into();
                    }
                    levels
                })
                .collect()
        },
    );
    check(
        d,
        "phases",
        &[&["phases"][..], &z(&["--interval", "2000"])].concat(),
        |v| v["methods"].as_array().cloned().unwrap_or_default(),
    );
    check(d, "attribute", &[&["attribute"][..], &ZIPF].concat(), |v| {
        v["buckets"].as_array().cloned().unwrap_or_default()
    });
}

#[test]
fn writers_print_their_summary_as_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    check(
        d,
        "generate",
        &[
            "generate", "zipf", "--lines", "512", "--refs", "20000", "-o", "z.cst",
        ],
        whole,
    );
    check(
        d,
        "convert",
        &["convert", "z.cst", "z.txt.gz", "--to", "lackey"],
        whole,
    );
    check(
        d,
        "sample",
        &["sample", "z.cst", "-o", "z.prof", "--rate", "0.01"],
        whole,
    );
    check(
        d,
        "corun",
        &[
            "corun",
            "z.cst",
            "z.txt.gz",
            "--cache",
            "16K",
            "--rates",
            "2,1",
            "--simulate",
        ],
        |v| v["programs"].as_array().cloned().unwrap_or_default(),
    );
    // A trace written to stdout keeps stdout for itself: the summary goes to stderr.
    let out = cargo_bin_cmd!("cachescope")
        .current_dir(d)
        .args(["convert", "z.cst", "-", "--to", "plain-hex", "--csv"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(stdout.lines().count(), 20_000);
    let (header, rows) = parse(&stderr);
    let bytes = header.iter().position(|h| h == "bytes").unwrap();
    assert_eq!(rows[0][bytes], stdout.len().to_string());
}

#[test]
fn report_csv_rows_are_the_curves_at_the_summary_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let csv = run(
        d,
        &[
            &["report", "-o", "r"][..],
            &ZIPF,
            &["--interval", "2000", "--csv"],
        ]
        .concat(),
    );
    golden("report", &csv);
    let (header, rows) = parse(&csv);
    assert_eq!(header, ["method", "policy", "size_bytes", "miss_ratio"]);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r/report.json")).unwrap()).unwrap();
    let sizes = ["4096", "32768", "262144", "2097152", "16777216"];
    let expected: usize = report["mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["points"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| sizes.contains(&p["size_bytes"].to_string().as_str()))
                .count()
        })
        .sum();
    assert_eq!(rows.len(), expected);
}
