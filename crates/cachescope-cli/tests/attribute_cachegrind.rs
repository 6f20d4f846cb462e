//! `cachescope attribute --cachegrind-out FILE`: the real `cg_annotate` (Valgrind's) reads the
//! file and prints the same totals and the same misses per source line as `attribute --json`,
//! on a C program compiled here with debug information and run under Valgrind; a hand-made
//! trace gives a file whose `summary:` equals the JSON's totals; an unwritable path is an error
//! naming the file, before the run. Skips, saying why, where Valgrind, `cg_annotate` or a C
//! compiler is missing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command as Std;

use serde_json::Value;

mod common;
use common::{compile_c, cs, tools_or_skip};

/// Markers name the lines the test looks at.
const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>
#define N 8192
double grid[N];
__attribute__((noinline)) static void fill(double *p, int n) {
    for (int i = 0; i < n; i++)
        p[i] = i * 0.5; /* STORE */
}
__attribute__((noinline)) static double walk(const double *p, int n, int stride) {
    double s = 0;
    for (int i = 0; i < n; i += stride)
        s += p[i] + grid[(i * 13) % N]; /* LOAD */
    return s;
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    double *p = malloc(n * sizeof *p);
    if (!p) return 1;
    fill(p, n);
    double s = 0;
    for (int r = 0; r < 3; r++)
        s += walk(p, n, 4);
    printf("%f\n", s);
    free(p);
    return 0;
}
"#;

fn line_of(marker: &str) -> u32 {
    PROGRAM
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker") as u32
        + 1
}

/// What `cg_annotate` printed: the events shown, the program totals, and for the source file
/// ending in `source`, each annotated line's counts by line number.
struct Annotation {
    events: Vec<String>,
    totals: Vec<u64>,
    lines: BTreeMap<u32, Vec<u64>>,
}

impl Annotation {
    fn total(&self, event: &str) -> u64 {
        self.totals[self.index(event)]
    }

    fn index(&self, event: &str) -> usize {
        self.events
            .iter()
            .position(|e| e == event)
            .unwrap_or_else(|| panic!("no event {event} in {:?}", self.events))
    }

    /// The sum of `events` at source line `line` (0 when the line has no counts).
    fn at(&self, line: u32, events: &[&str]) -> u64 {
        self.lines
            .get(&line)
            .map_or(0, |c| events.iter().map(|e| c[self.index(e)]).sum())
    }
}

fn count(token: &str) -> u64 {
    token
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("count {token:?}"))
}

/// Runs `cg_annotate` (Perl or Python: flags both accept) and parses its output; the source
/// file `source` is printed whole (a context of 10000 lines), its lines checked against `text`.
fn cg_annotate(file: &Path, source: &str, text: &str) -> Annotation {
    let out = Std::new("cg_annotate")
        .args([
            "--auto=yes",
            "--show-percs=no",
            "--threshold=0",
            "--context=10000",
        ])
        .arg(file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cg_annotate failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in\n{stdout}"))
    };
    let events: Vec<String> = field("Events shown:")["Events shown:".len()..]
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let n = events.len();
    let totals_line = stdout
        .lines()
        .find(|l| l.trim_end().ends_with("PROGRAM TOTALS"))
        .unwrap_or_else(|| panic!("no PROGRAM TOTALS in\n{stdout}"));
    let totals: Vec<u64> = totals_line.split_whitespace().take(n).map(count).collect();

    // The annotated source: after its header ("-- Auto-annotated source: PATH", Perl, or
    // "-- Annotated source file: PATH", Python), a rule and the events' names, one line per
    // source line from line 1: a count or "." per event, then the source text.
    let mut lines = BTreeMap::new();
    let mut it = stdout.lines().skip_while(|l| {
        !(l.starts_with("-- ") && l.contains("source") && l.trim_end().ends_with(source))
    });
    assert!(it.next().is_some(), "{source} not annotated in\n{stdout}");
    let mut it = it.skip(2);
    let want: Vec<&str> = text.lines().collect();
    let mut number = 0usize;
    for l in it.by_ref() {
        if l.trim().is_empty() || l.trim_end().ends_with("<unknown (line 0)>") {
            continue;
        }
        if l.starts_with("--") || number == want.len() {
            break;
        }
        let tokens: Vec<&str> = l.split_whitespace().collect();
        let src: Vec<&str> = want[number].split_whitespace().collect();
        assert_eq!(tokens[n..], src[..], "line {} of {source}", number + 1);
        number += 1;
        if tokens[0] != "." {
            lines.insert(
                number as u32,
                tokens[..n].iter().map(|t| count(t)).collect(),
            );
        }
    }
    assert_eq!(number, want.len(), "{source} not printed whole:\n{stdout}");
    Annotation {
        events,
        totals,
        lines,
    }
}

/// The totals of `attribute --json` equal `cg_annotate`'s.
fn check_totals(r: &Value, a: &Annotation) {
    let json = |k: &str| r[k].as_u64().unwrap();
    assert_eq!(a.total("Dr") + a.total("Dw"), json("data_refs"));
    assert_eq!(a.total("D1mr") + a.total("D1mw"), json("misses"));
    assert_eq!(a.total("SD1mr") + a.total("SD1mw"), json("samples"));
    if json("instructions") > 0 {
        assert_eq!(a.total("Ir"), json("instructions"));
    }
}

#[test]
fn cg_annotate_prints_attributes_totals_and_misses_per_source_line() {
    if !tools_or_skip(&["valgrind", "cc", "cg_annotate"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "prog", PROGRAM, &["-g", "-O1"]);

    let cg = dir.path().join("prog.cg");
    let out = cs()
        .args([
            "attribute",
            "--cache",
            "1K,2,32",
            "--sample",
            "10",
            "--no-cost",
        ])
        .args(["--no-mrc", "--json", "-q", "--cachegrind-out"])
        .arg(&cg)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&cg).unwrap();
    assert!(
        text.contains(&format!("cmd: {}\n", exe.display())),
        "{text}"
    );

    let a = cg_annotate(&cg, "/prog.c", PROGRAM);
    assert_eq!(
        a.events,
        ["Ir", "Dr", "D1mr", "Dw", "D1mw", "SD1mr", "SD1mw"]
    );
    check_totals(&r, &a);

    // Every code line of prog.c in the JSON: the same misses and samples in cg_annotate.
    let mut json_lines: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for l in r["lines_by_misses"].as_array().unwrap() {
        if l["code"]["file"] == "prog.c" {
            let e = json_lines
                .entry(l["code"]["line"].as_u64().unwrap() as u32)
                .or_default();
            e.0 += l["misses"].as_u64().unwrap();
            e.1 += l["sampled"].as_u64().unwrap();
        }
    }
    for &marker in ["STORE", "LOAD"].iter() {
        let line = line_of(marker);
        assert!(
            json_lines.get(&line).is_some_and(|c| c.0 > 0),
            "{marker} misses"
        );
    }
    assert!(a.at(line_of("STORE"), &["D1mw"]) > 0);
    assert!(a.at(line_of("LOAD"), &["D1mr"]) > 0);
    for (&line, &(misses, sampled)) in &json_lines {
        assert_eq!(
            a.at(line, &["D1mr", "D1mw"]),
            misses,
            "misses at prog.c:{line}"
        );
        assert_eq!(
            a.at(line, &["SD1mr", "SD1mw"]),
            sampled,
            "samples at prog.c:{line}"
        );
    }
    // And the other way: cg_annotate's lines the JSON leaves out are below its 0.1 % cut
    // and never sampled.
    let total = r["misses"].as_u64().unwrap();
    for &line in a.lines.keys() {
        if !json_lines.contains_key(&line) {
            assert!(
                a.at(line, &["D1mr", "D1mw"]) * 1000 < total,
                "prog.c:{line}"
            );
            assert_eq!(a.at(line, &["SD1mr", "SD1mw"]), 0, "prog.c:{line}");
        }
    }
}

#[test]
fn a_trace_without_debug_information_gives_unknown_lines_with_the_json_totals() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    // A lackey trace: fetches at two instructions, loads and stores over 8 KiB.
    let mut s = String::new();
    for i in 0..2000u64 {
        s.push_str("I  00401000,4\n");
        s.push_str(&format!(" L {:08x},8\n", 0x10_0000 + (i * 40) % 8192));
        s.push_str("I  00401004,4\n");
        s.push_str(&format!(" S {:08x},8\n", 0x20_0000 + (i * 72) % 8192));
    }
    std::fs::write(&trace, s).unwrap();
    let cg = dir.path().join("t.cg");
    let out = cs()
        .arg("attribute")
        .arg(&trace)
        .args(["--cache", "1K,2,32", "--sample", "7", "--json", "-q"])
        .arg("--cachegrind-out")
        .arg(&cg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&cg).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[3], format!("cmd: {}", trace.display()));
    assert_eq!(lines[4], "events: Ir Dr D1mr Dw D1mw SD1mr SD1mw");
    assert_eq!(lines[5..7], ["fl=???", "fn=???"]);
    assert!(lines[7].starts_with("0 4000 2000 "), "{}", lines[7]);
    let summary: Vec<u64> = lines[8]
        .strip_prefix("summary: ")
        .unwrap()
        .split(' ')
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(lines[7][2..], lines[8]["summary: ".len()..]);
    let json = |k: &str| r[k].as_u64().unwrap();
    assert_eq!(summary[0], json("instructions"));
    assert_eq!(summary[1] + summary[3], json("data_refs"));
    assert_eq!(summary[2] + summary[4], json("misses"));
    assert_eq!(summary[5] + summary[6], json("samples"));
    assert!(json("samples") > 0);
    if tools_or_skip(&["cg_annotate"]) {
        // No source file to annotate: only the totals.
        let out = Std::new("cg_annotate")
            .args(["--auto=no", "--show-percs=no"])
            .arg(&cg)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let totals = stdout
            .lines()
            .find(|l| l.trim_end().ends_with("PROGRAM TOTALS"))
            .unwrap();
        let got: Vec<u64> = totals.split_whitespace().take(7).map(count).collect();
        assert_eq!(got, summary);
    }
}

#[test]
fn an_unwritable_cachegrind_out_is_an_error_naming_the_file_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file as the directory: no one can create a file under it, not even root.
    let not_a_dir = dir.path().join("plain");
    std::fs::write(&not_a_dir, "x").unwrap();
    let bad = not_a_dir.join("out.cg");
    let out = cs()
        .args(["attribute", "--workload", "loop", "-q", "--cachegrind-out"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(out.stdout.is_empty(), "no report after the error");
    assert_eq!(std::fs::read_to_string(&not_a_dir).unwrap(), "x");
}
