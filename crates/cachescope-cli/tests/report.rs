//! End-to-end tests of `cachescope report`, `demo`, `completions` and `man`, and the report
//! opened in a real headless browser (Debian's chromium; skipped with a printed reason where
//! it is not installed or cannot start).

use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::cs;

/// A small, fast report of the phases workload (24 intervals of 4096 references).
fn small_report(dir: &Path) -> Value {
    cs().args([
        "report",
        "--workload",
        "phases",
        "--lines",
        "256",
        "--interval",
        "4096",
        "-q",
    ])
    .arg("-o")
    .arg(dir)
    .assert()
    .success()
    .stdout(predicate::str::contains("Wrote").and(predicate::str::contains("exact lru")));
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json is JSON")
}

fn figure_ids(report: &Value) -> Vec<String> {
    report["figures"]
        .as_array()
        .expect("a figures list")
        .iter()
        .map(|f| f["id"].as_str().expect("an id").to_string())
        .collect()
}

#[test]
fn report_writes_html_json_and_every_figure_with_no_temporary_left() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let report = small_report(&dir);
    assert_eq!(report["version"], 1);
    assert_eq!(report["source"], "<workload phases>");
    assert_eq!(report["stats"]["refs"], 384 * 256);
    let methods: Vec<&str> = report["mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "exact",
            "exact",
            "statcache",
            "statstack",
            "hotl",
            "hotl-rt"
        ]
    );
    let ids = figure_ids(&report);
    assert!(ids.contains(&"phases".to_string()), "{ids:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for id in &ids {
        for ext in ["svg", "png"] {
            let f = dir.join("figures").join(format!("{id}.{ext}"));
            assert!(f.metadata().unwrap().len() > 1000, "{}", f.display());
        }
        assert!(
            html.contains(&format!("data-figure=\"{id}\"")),
            "{id} not in the page"
        );
    }
    // Self-contained: no script, nothing fetched (SVG namespaces are names, not fetches).
    for needle in [
        "<script",
        "src=\"http",
        "href=\"http",
        "<link",
        "url(",
        "@import",
    ] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
    let leftovers: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn report_json_and_csv_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    // The summary of a report on a loop over 64 lines, printed as `format`.
    let summary = |format: &str| {
        let args = [
            "report",
            "--workload",
            "loop",
            "--lines",
            "64",
            "--refs",
            "20000",
        ];
        let out = cs()
            .args(args)
            .args(["-q", format, "-o"])
            .arg(tmp.path())
            .assert()
            .success();
        out.get_output().stdout.clone()
    };
    let v: Value = serde_json::from_slice(&summary("--json")).unwrap();
    assert_eq!(v["refs"], 20000);
    assert_eq!(v["distinct_lines"], 64);
    assert!(v["html"].as_str().unwrap().ends_with("report.html"));
    let csv = String::from_utf8(summary("--csv")).unwrap();
    assert!(csv.starts_with("method,policy,size_bytes,miss_ratio\n"));
    // A loop over 64 lines (4 KiB): exact LRU misses only its 64 cold misses from 4 KiB on.
    assert!(csv.contains("exact,lru,4096,0.0032\n"), "{csv}");
}

/// `cachescope report TRACE -o DIR -q`.
fn report_of(trace: &Path, dir: &Path) -> assert_cmd::assert::Assert {
    cs().arg("report")
        .arg(trace)
        .arg("-o")
        .arg(dir)
        .arg("-q")
        .assert()
}

#[test]
fn report_on_bad_input_names_file_and_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("bad.txt");
    std::fs::write(&trace, "0x1000\n0x1040\nnot an address\n").unwrap();
    let dir = tmp.path().join("out");
    report_of(&trace, &dir)
        .failure()
        .stderr(predicate::str::contains("bad.txt").and(predicate::str::contains("3")));
    assert!(!dir.join("report.html").exists());
}

#[test]
fn report_reads_a_trace_file() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.cst");
    cs().args([
        "generate", "zipf", "--lines", "512", "--refs", "30000", "-o",
    ])
    .arg(&trace)
    .assert()
    .success();
    let dir = tmp.path().join("out");
    report_of(&trace, &dir)
        .success()
        .stdout(predicate::str::contains("t.cst"));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(v["format"], "native");
    assert_eq!(v["stats"]["refs"], 30000);
}

#[test]
fn report_records_a_program() {
    if !common::tools_or_skip(&["valgrind"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    cs().arg("report")
        .arg("-o")
        .arg(&dir)
        .args(["-q", "--", "true"])
        .assert()
        .success();
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(
        v["source"].as_str().unwrap().contains("true"),
        "{}",
        v["source"]
    );
    assert!(v["stats"]["refs"].as_u64().unwrap() > 1000);
    assert!(dir.join("report.html").exists());
}

#[test]
fn demo_writes_a_report_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    cs().args(["demo", "--lines", "256", "--interval", "4096", "-q", "-o"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("<workload phases>").and(predicate::str::contains(
                dir.join("report.html").to_string_lossy().as_ref(),
            )),
        );
    assert!(dir.join("report.json").exists());
}

#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    cs().args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cachescope").and(predicate::str::contains("report")));
    cs().args(["completions", "zsh"])
        .assert()
        .success()
        .stdout(predicate::str::contains("#compdef cachescope"));
    cs().arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH cachescope").and(predicate::str::contains("report")));
    let tmp = tempfile::tempdir().unwrap();
    cs().arg("man").arg("-o").arg(tmp.path()).assert().success();
    let page = std::fs::read_to_string(tmp.path().join("cachescope-report.1")).unwrap();
    assert!(page.contains("interval"), "{page}");
    assert!(tmp.path().join("cachescope.1").exists());
    assert!(tmp.path().join("cachescope-demo.1").exists());
}

#[test]
fn every_subcommand_has_examples_in_its_help() {
    let out = cs().arg("--help").assert().success().get_output().clone();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(
        commands.contains(&"report") && commands.len() >= 15,
        "{commands:?}"
    );
    for c in commands {
        cs().args([c, "--help"]).assert().success().stdout(
            predicate::str::contains("Examples:")
                .and(predicate::str::contains(format!("cachescope {c}"))),
        );
    }
}

fn headless(browser: &str, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Share of the pixels of a PNG file that are not (near) white.
fn ink(png_path: &Path) -> f64 {
    let bytes = std::fs::read(png_path).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let drawn = px
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&v| v < 240))
        .count();
    drawn as f64 / (info.width * info.height) as f64
}

#[test]
fn report_renders_in_a_headless_browser() {
    let Some(browser) = common::chromium_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let report = small_report(&dir);
    let ids = figure_ids(&report);
    let url = format!("file://{}", dir.join("report.html").display());
    let profile = tmp.path().join("profile");

    // The DOM after loading, with console messages on stderr.
    let out = headless(browser, &profile)
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(&url)
        .output()
        .unwrap();
    if !out.status.success() || out.stdout.is_empty() {
        let last = String::from_utf8_lossy(&out.stderr);
        let why = last.lines().last().unwrap_or("");
        common::skip("chromium", &format!("{browser} cannot run here: {why}"));
        return;
    }
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("net::ERR_"))
        .collect();
    assert!(console_errors.is_empty(), "{console_errors:#?}");
    assert!(dom.contains("<h1>cachescope report</h1>"));
    for id in &ids {
        let start = dom
            .find(&format!("data-figure=\"{id}\""))
            .unwrap_or_else(|| panic!("{id} missing"));
        let figure = &dom[start..start + dom[start..].find("</figure>").unwrap()];
        assert!(
            figure.contains("<svg") && figure.contains("<text"),
            "{id} has no drawn SVG"
        );
        assert!(figure.contains("<figcaption>"), "{id} has no caption");
    }

    // The whole page, and each figure on its own: not blank.
    let page_png = tmp.path().join("page.png");
    let status = headless(browser, &profile)
        .arg(format!("--screenshot={}", page_png.display()))
        .arg("--window-size=1000,3000")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(ink(&page_png) > 0.05, "the page screenshot is nearly blank");
    for id in &ids {
        let shot = tmp.path().join(format!("{id}.png"));
        let svg = dir.join("figures").join(format!("{id}.svg"));
        let status = headless(browser, &profile)
            .arg(format!("--screenshot={}", shot.display()))
            .arg("--window-size=880,440")
            .arg(format!("file://{}", svg.display()))
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let share = ink(&shot);
        assert!(
            share > 0.03,
            "{id}: the browser drew only {:.1}% of the chart",
            100.0 * share
        );
    }
}
