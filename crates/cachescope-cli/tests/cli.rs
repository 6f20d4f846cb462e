//! End-to-end tests of the `cachescope` binary: round trips through every format and
//! compression, stdin, and every kind of bad input named in the foundation issue.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::{counts, cs, generate, stats_json};

#[test]
fn demo_runs_without_a_trace() {
    // The default output directory, relative to where it runs.
    let tmp = tempfile::tempdir().unwrap();
    cs().current_dir(tmp.path())
        .args(["demo", "--lines", "256", "-q"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cachescope-demo/report.html"));
    assert!(tmp.path().join("cachescope-demo/report.html").exists());
}

#[test]
fn stats_json_has_the_contract_fields() {
    let v = stats_json(&["--workload", "loop", "--lines", "100", "--refs", "1000"]);
    for key in [
        "refs",
        "loads",
        "stores",
        "modifies",
        "instructions",
        "distinct_lines",
        "line_size",
        "format",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["refs"], 1000);
    assert_eq!(v["distinct_lines"], 100);
    assert_eq!(v["line_size"], 64);
}

#[test]
fn every_format_and_compression_gives_the_same_counts() {
    let dir = tempfile::tempdir().unwrap();
    let wl = ["phases", "--refs", "20000", "--instructions", "--seed", "7"];
    let reference = stats_json(&[
        "--workload",
        wl[0],
        "--refs",
        "20000",
        "--instructions",
        "--seed",
        "7",
    ]);
    let want = counts(&reference);
    for (to, ext) in [
        ("native", "cst"),
        ("lackey", "txt"),
        ("plain-hex", "txt"),
        ("plain-dec", "txt"),
    ] {
        for comp in ["", ".gz", ".zst", ".xz"] {
            let name = format!("t-{to}.{ext}{comp}");
            let mut args = wl.to_vec();
            args.extend(["--to", to]);
            let path = generate(dir.path(), &name, &args);
            let v = stats_json(&[path.to_str().unwrap()]);
            assert_eq!(counts(&v), want, "{name}: {v}");
            let expect_fmt = if to == "plain-dec" { "plain-dec" } else { to };
            assert_eq!(v["format"], expect_fmt, "{name}");
            let expect_comp = match comp {
                ".gz" => "gzip",
                ".zst" => "zstd",
                ".xz" => "xz",
                _ => "none",
            };
            assert_eq!(v["compression"], expect_comp, "{name}");
            // convert → native → stats keeps every count.
            let native = dir.path().join(format!("{name}.cst"));
            cs().arg("convert")
                .arg(&path)
                .arg(&native)
                .assert()
                .success();
            assert_eq!(
                counts(&stats_json(&[native.to_str().unwrap()])),
                want,
                "{name} converted"
            );
        }
    }
}

#[test]
fn din_and_binary_keep_what_they_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    let reference = stats_json(&["--workload", "random", "--refs", "5000"]);
    let din = generate(
        dir.path(),
        "t.din",
        &["random", "--refs", "5000", "--to", "din"],
    );
    let v = stats_json(&[din.to_str().unwrap()]);
    assert_eq!(v["format"], "din");
    assert_eq!(v["refs"], reference["refs"]);
    assert_eq!(v["distinct_lines"], reference["distinct_lines"]);
    let bin = generate(
        dir.path(),
        "t.bin",
        &["random", "--refs", "5000", "--to", "binary"],
    );
    let v = stats_json(&[bin.to_str().unwrap()]);
    assert_eq!(v["format"], "binary");
    assert_eq!(v["refs"], 5000);
    assert_eq!(v["distinct_lines"], reference["distinct_lines"]);
}

#[test]
fn reads_stdin() {
    let input = "0x1000\n0x1008\n0x2000\n";
    let out = cs()
        .args(["stats", "--json", "-"])
        .write_stdin(input)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["refs"], 3);
    assert_eq!(v["distinct_lines"], 2);
    assert_eq!(v["source"], "<stdin>");
}

#[test]
fn ambiguous_decimal_is_reported() {
    cs().args(["stats", "-"])
        .write_stdin("4096\n8192\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("decimal"));
    let out = cs()
        .args(["stats", "--json", "-"])
        .write_stdin("4096\n8192\n")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["format"], "plain-dec");
    assert!(v["notes"][0].as_str().unwrap().contains("decimal"));
    // Forcing hex reads the same digits as hex.
    let out = cs()
        .args(["stats", "--json", "--format", "plain-hex", "-"])
        .write_stdin("40\n80\n")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["distinct_lines"], 2); // 0x40 and 0x80 are different 64-B lines
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn a_bad_line_names_file_line_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "bad.txt",
        b"I  0400,3\n L 1000,8\n L zzzz,8\n S 1008,8\n",
    );
    cs().arg("stats")
        .arg(&p)
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad.txt:3").and(predicate::str::contains("zzzz")));
    let out = cs()
        .args(["stats", "--json", "--skip-bad-lines"])
        .arg(&p)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(stderr.matches("warning").count(), 1, "warns once: {stderr}");
    assert!(stderr.contains("skipped 1 line"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["refs"], 2);
    assert_eq!(v["skipped_lines"], 1);
}

#[test]
fn empty_and_unknown_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.txt", b"");
    cs().arg("stats")
        .arg(&empty)
        .assert()
        .failure()
        .stderr(predicate::str::contains("empty"));
    let prose = write(
        dir.path(),
        "prose.txt",
        b"Once upon a time\nthere was a cache\n",
    );
    cs().arg("stats").arg(&prose).assert().failure().stderr(
        predicate::str::contains("unknown trace format").and(predicate::str::contains("lackey")),
    );
    let gz_empty = {
        let mut e = flate2_free_gzip_of(b"");
        e.shrink_to_fit();
        write(dir.path(), "empty.gz", &e)
    };
    cs().arg("stats")
        .arg(&gz_empty)
        .assert()
        .failure()
        .stderr(predicate::str::contains("empty"));
    cs().args(["stats", "/nonexistent/trace.txt"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("/nonexistent/trace.txt"));
}

/// A trace of instruction fetches only gives a curve of zeros by convention, and `mrc` says so
/// (every method), as `l2` does; counting the fetches, or a trace with data references, is
/// not noted.
#[test]
fn a_curve_of_no_references_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let fetches = write(
        dir.path(),
        "fetches.lackey",
        b"I  00001000,4\nI  00001004,4\nI  00001008,4\n",
    );
    let note = "no data references: every miss ratio below is 0 by convention";
    for method in [
        &["--method", "exact"][..],
        &["--method", "hotl"],
        &["--policy", "opt"],
        &["--method", "mini", "--policy", "fifo"],
    ] {
        let out = cs()
            .arg("mrc")
            .args(method)
            .args(["--format", "lackey"])
            .arg(&fetches)
            .output()
            .unwrap();
        assert!(out.status.success(), "{method:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).matches(note).count(),
            1,
            "{method:?}"
        );
    }
    let out = cs()
        .args(["mrc", "--include-instructions", "--format", "lackey"])
        .arg(&fetches)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("convention"));
    let out = cs()
        .args(["mrc", "-q", "--format", "lackey"])
        .arg(&fetches)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("convention"));
    // `l2` too, without the flag it does not have.
    let out = cs()
        .args(["l2", "--format", "lackey"])
        .arg(&fetches)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains(note) && !err.contains("--include"),
        "{err}"
    );
    let data = write(dir.path(), "data.lackey", b"I  00001000,4\n L 00002000,8\n");
    let out = cs()
        .args(["mrc", "--format", "lackey"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("convention"));
}

/// gzip of `data` made by the system's gzip, or a stored (uncompressed) gzip member built by hand.
fn flate2_free_gzip_of(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip is installed by .ci/run");
    child.stdin.take().unwrap().write_all(data).unwrap();
    child.wait_with_output().unwrap().stdout
}

#[test]
fn truncated_and_corrupt_compressed_streams_fail() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["gz", "zst", "xz"] {
        let full = generate(
            dir.path(),
            &format!("t.txt.{ext}"),
            &["random", "--refs", "50000", "--to", "lackey"],
        );
        let bytes = std::fs::read(&full).unwrap();
        let cut = write(
            dir.path(),
            &format!("cut.{ext}"),
            &bytes[..bytes.len() * 2 / 3],
        );
        cs().arg("stats")
            .arg(&cut)
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!("cut.{ext}")));
        let mut flipped = bytes.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x55;
        let bad = write(dir.path(), &format!("flip.{ext}"), &flipped);
        cs().arg("stats")
            .arg(&bad)
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!("flip.{ext}")));
    }
}

#[test]
fn truncated_native_fails() {
    let dir = tempfile::tempdir().unwrap();
    let full = generate(dir.path(), "t.cst", &["random", "--refs", "200000"]);
    let bytes = std::fs::read(&full).unwrap();
    for frac in [1, 2, 3] {
        let cut = write(dir.path(), "cut.cst", &bytes[..bytes.len() * frac / 4]);
        cs().arg("stats")
            .arg(&cut)
            .assert()
            .failure()
            .stderr(predicate::str::contains("cut.cst").and(
                predicate::str::contains("truncated").or(predicate::str::contains("corrupt")),
            ));
    }
}

#[test]
fn absurd_parameters_are_rejected() {
    cs().args(["stats", "--workload", "loop", "--line-size", "48"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("power of two"));
    cs().args(["stats", "--workload", "loop", "--lines", "0"])
        .assert()
        .failure();
    cs().args(["stats", "--workload", "nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("unknown workload"));
    cs().args(["stats", "--format", "csv", "-"])
        .assert()
        .failure();
}

#[test]
fn output_files_appear_only_when_complete() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.cst");
    // Converting a bad trace fails and leaves nothing behind.
    let bad = write(dir.path(), "bad.txt", b" L 1000,8\n L 10g0,8\n");
    cs().arg("convert").arg(&bad).arg(&out).assert().failure();
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn broken_pipe_is_not_an_error() {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("cachescope"))
        .args([
            "generate",
            "sequential",
            "--refs",
            "2000000",
            "--to",
            "plain-hex",
            "-o",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn generate_lists_every_workload() {
    let out = cs().args(["generate", "--list"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for w in [
        "sequential",
        "stride",
        "loop",
        "random",
        "zipf",
        "matmul",
        "matmul-tiled",
        "stencil",
        "phases",
    ] {
        assert!(text.contains(w), "{w} missing from {text}");
    }
}

#[test]
fn generated_workloads_are_deterministic_per_seed() {
    let dir = tempfile::tempdir().unwrap();
    let a = generate(
        dir.path(),
        "a.txt",
        &["zipf", "--refs", "3000", "--seed", "5", "--to", "plain-hex"],
    );
    let b = generate(
        dir.path(),
        "b.txt",
        &["zipf", "--refs", "3000", "--seed", "5", "--to", "plain-hex"],
    );
    let c = generate(
        dir.path(),
        "c.txt",
        &["zipf", "--refs", "3000", "--seed", "6", "--to", "plain-hex"],
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
}

#[test]
fn din_flush_records_are_counted_and_noted_once() {
    let out = cs()
        .args(["stats", "--json", "-"])
        .write_stdin("0 1000\n1 1040\n4 0\n2 400\n4 0\n")
        .assert()
        .success();
    let o = out.get_output();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "din");
    assert_eq!(
        (v["refs"].as_u64(), v["instructions"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("2 din cache-flush"),
        "{v}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("cache-flush").count(), 1, "{stderr}");
}
