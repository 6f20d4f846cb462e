//! `--threads N`: every analysing command prints byte-identical JSON for 1, 2 and 4 threads, on
//! a synthetic trace in the native format (split by block index), the same trace as text and
//! gzip (read sequentially, dealt out in segments), and a real program's lackey trace.

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

mod common;
use common::generate;

/// Runs `cachescope ARGS --threads N --quiet` and returns its stdout.
fn out(args: &[&str], threads: usize) -> Vec<u8> {
    let o = cargo_bin_cmd!("cachescope")
        .args(args)
        .args(["--threads", &threads.to_string(), "--quiet"])
        // Many chunk boundaries in traces read sequentially, too.
        .env("CACHESCOPE_CHUNK_ACCESSES", "50000")
        .assert()
        .success();
    o.get_output().stdout.clone()
}

/// The commands compared, on `trace`.
fn commands(trace: &str) -> Vec<Vec<String>> {
    let t = trace.to_string();
    let v = |a: &[&str]| {
        let mut c: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        c.insert(1, t.clone());
        c
    };
    vec![
        v(&["stats", "--json"]),
        v(&["mrc", "--json", "--range", "1K..4M"]),
        v(&["mrc", "--json", "--method", "hotl"]),
        v(&["mrc", "--json", "--method", "hotl-rt"]),
        v(&["mrc", "--json", "--method", "statcache", "--rate", "0.01"]),
        v(&[
            "mrc",
            "--json",
            "--method",
            "statstack",
            "--rate",
            "0.02",
            "--include-instructions",
        ]),
        v(&["sample", "-o", "-", "--rate", "0.05", "--slot", "10000"]),
        v(&["footprint", "--json"]),
        v(&["footprint", "--json", "--windows", "1,7,1000,70001"]),
        v(&["hotl", "--json"]),
        v(&[
            "l2",
            "--json",
            "--l1",
            "4K",
            "--l2",
            "16K,64K",
            "--simulate",
        ]),
        v(&["l2", "--json", "--l1", "4K", "--l2", "16K,64K"]),
        v(&[
            "simulate", "--json", "--cache", "4K,4,64", "--cache", "32K,8,64", "--cache", "8K,1,32",
        ]),
    ]
}

fn same_for_1_2_4_threads(trace: &Path) {
    let t = trace.to_str().unwrap();
    for cmd in commands(t) {
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let one = out(&args, 1);
        assert!(!one.is_empty(), "{cmd:?} printed nothing");
        for threads in [2, 4] {
            assert!(
                out(&args, threads) == one,
                "{cmd:?}: --threads {threads} differs from --threads 1"
            );
        }
    }
}

#[test]
fn synthetic_native_text_and_gzip_traces() {
    let dir = tempfile::tempdir().unwrap();
    // 300 000 accesses: five native blocks, so 4 threads get a run of blocks each.
    let native = generate(
        dir.path(),
        "zipf.cst",
        &["zipf", "--refs", "300000", "--seed", "7"],
    );
    same_for_1_2_4_threads(&native);
    let text = dir.path().join("zipf.txt");
    cargo_bin_cmd!("cachescope")
        .args(["convert", native.to_str().unwrap(), text.to_str().unwrap()])
        .args(["--to", "plain-hex"])
        .assert()
        .success();
    same_for_1_2_4_threads(&text);
    let gz = dir.path().join("zipf.txt.gz");
    cargo_bin_cmd!("cachescope")
        .args(["convert", native.to_str().unwrap(), gz.to_str().unwrap()])
        .args(["--to", "lackey"])
        .assert()
        .success();
    same_for_1_2_4_threads(&gz);
}

#[test]
fn a_real_programs_lackey_trace_and_its_native_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let Some(log) = common::record_ls(dir.path()) else {
        return;
    };
    same_for_1_2_4_threads(&log);
    let native = dir.path().join("ls.cst");
    cargo_bin_cmd!("cachescope")
        .args(["convert", log.to_str().unwrap(), native.to_str().unwrap()])
        .assert()
        .success();
    same_for_1_2_4_threads(&native);
    // And the text and native forms of the same trace agree on the exact curve.
    let a = out(&["mrc", "--json", log.to_str().unwrap()], 2);
    let b = out(&["mrc", "--json", native.to_str().unwrap()], 4);
    assert!(a == b, "lackey and native curves differ");
}
