//! Peak memory of `report --sampled` on a long stream (issue 57): the phase timeline merges
//! its intervals and StatCache's samples are thinned, so a run of 2 × 10^9 references keeps
//! both under their caps and the process under 200 MB. Slow in a debug build (minutes), so
//! ignored by default:
//!
//!     cargo test --release -p cachescope-cli --test sampled_memory -- --ignored

mod common;

use std::process::Command;

use common::{bin, skip};

#[test]
#[ignore = "2 × 10^9 references: minutes in a debug build"]
fn a_long_stream_keeps_the_timeline_and_the_samples_under_their_caps() {
    if !std::path::Path::new("/usr/bin/time").exists() {
        return skip("time", "GNU time (/usr/bin/time) is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let run = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin())
        .args(["report", "-q", "--sampled", "--workload", "loop"])
        .args(["--lines", "100000", "--refs", "2000000000", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let kb: u64 = stderr.lines().last().unwrap().trim().parse().unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    // 20 000 intervals of 100 000 data references asked for: merged to at most 4096.
    let phases = &v["phases"];
    let intervals = phases["intervals"].as_array().unwrap().len();
    assert!(intervals <= 4097, "{intervals} intervals");
    assert!(phases["interval"].as_u64().unwrap() >= 800_000);
    // 2 × 10^6 samples expected at 10^-3: thinned once, to about 2^20.
    let s = &v["sampling"];
    assert_eq!(s["rate"].as_f64().unwrap(), 0.0005);
    assert!(s["samples"].as_u64().unwrap() < 1_200_000);
    assert!(kb < 200 * 1024, "peak {kb} KB");
}
