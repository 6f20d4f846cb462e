//! ChampSim traces end to end: detection (plain and inside xz/gzip), `convert --to champsim`
//! round trips with `stats` unchanged, the warnings of lossy conversions, and cut files.
//!
//! The fixtures are written by [`champsim_trace`], a small generator of records shaped like
//! ChampSim's Pin tracer output (branches, registers, read-modify-write operands).

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::{cs, generate, stats_json};

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// One `input_instr`: ip, is_branch, branch_taken, 2 + 4 register bytes, 2 destination and 4
/// source addresses, little endian.
fn record(ip: u64, branch: Option<bool>, dst: [u64; 2], src: [u64; 4]) -> Vec<u8> {
    let mut r = ip.to_le_bytes().to_vec();
    r.push(u8::from(branch.is_some()));
    r.push(u8::from(branch == Some(true)));
    r.extend([26, 0, 26, 25, 0, 0]);
    for a in dst.iter().chain(&src) {
        r.extend(a.to_le_bytes());
    }
    assert_eq!(r.len(), 64);
    r
}

/// `n` instructions in loops over basic blocks: a third load (some twice), a tenth store,
/// some read-modify-write an address (source and destination slot), blocks end in a branch.
fn champsim_trace(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let blocks: Vec<(u64, u64)> = (0..64)
        .map(|_| (0x40_0000 + rng.below(1 << 20), 2 + rng.below(14)))
        .collect();
    let mut out = Vec::with_capacity(n * 64);
    let mut written = 0;
    while written < n {
        let (mut ip, len) = blocks[rng.below(64) as usize];
        for i in 0..len {
            let a = if rng.below(2) == 0 {
                0x7ffc_0000_0000 + rng.below(1 << 14)
            } else {
                0x5555_5000_0000 + rng.below(1 << 24)
            };
            let (dst, src) = match rng.below(30) {
                0..9 => ([0, 0], [a, 0, 0, 0]),
                9 => ([0, 0], [a, a + 16, 0, 0]),
                10..13 => ([a, 0], [0; 4]),
                13 => ([a, 0], [a, 0, 0, 0]),
                _ => ([0, 0], [0; 4]),
            };
            let branch = (i + 1 == len).then(|| rng.below(3) > 0);
            out.extend(record(ip, branch, dst, src));
            ip += 1 + rng.below(7);
            written += 1;
            if written == n {
                break;
            }
        }
    }
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `stats --json` of `path`, without the fields that name the file and how it was read.
fn stats(path: &Path) -> Value {
    let mut v = stats_json(&[path.to_str().unwrap()]);
    let o = v.as_object_mut().unwrap();
    for k in ["source", "format", "compression"] {
        o.remove(k);
    }
    v
}

/// `convert IN OUT [ARGS]`, which must succeed; returns its stderr.
fn convert(input: &Path, output: &Path, args: &[&str]) -> String {
    let out = cs()
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(args)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

#[test]
fn champsim_round_trips_through_every_format_with_stats_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let original = write(dir.path(), "t.champsim", &champsim_trace(20_000, 1));
    let v = stats_json(&[original.to_str().unwrap()]);
    assert_eq!(v["format"], "champsim");
    assert_eq!(v["compression"], "none");
    assert_eq!(v["instructions"], 20_000);
    assert_eq!(v["modifies"], 0);
    assert!(v["loads"].as_u64().unwrap() > 6000, "{v}");
    assert!(v["stores"].as_u64().unwrap() > 1000, "{v}");
    let want = stats(&original);
    for (via, to) in [
        ("t.cst", "native"),
        ("t.lackey.gz", "lackey"),
        ("t.din", "din"),
    ] {
        let middle = dir.path().join(via);
        convert(&original, &middle, &["--to", to]);
        assert_eq!(stats(&middle), want, "{via}");
        for back in ["back.champsim", "back.champsim.xz", "back.champsim.gz"] {
            let back = dir.path().join(format!("{via}-{back}"));
            let stderr = convert(&middle, &back, &["--to", "champsim"]);
            let v = stats_json(&[back.to_str().unwrap()]);
            assert_eq!(v["format"], "champsim", "{}", back.display());
            assert_eq!(stats(&back), want, "{}", back.display());
            // lackey and native keep every pc; din has none, so its data references are
            // attached to the fetch before them again, and that is said.
            if to == "din" {
                assert!(stderr.contains("whose pc reads back different"), "{stderr}");
            } else {
                assert!(!stderr.contains("warning"), "{via}: {stderr}");
            }
        }
    }
    // Through native and back, byte for byte but for the branch and register bytes.
    let back = std::fs::read(dir.path().join("t.cst-back.champsim")).unwrap();
    let orig = std::fs::read(&original).unwrap();
    assert_eq!(back.len(), orig.len());
    for (i, (b, o)) in back.chunks(64).zip(orig.chunks(64)).enumerate() {
        assert_eq!((&b[..8], &b[16..]), (&o[..8], &o[16..]), "record {i}");
        assert_eq!(&b[8..16], &[0; 8]);
    }
}

#[test]
fn a_workload_round_trips_with_stats_unchanged_when_it_fits_the_format() {
    // 1-byte loads (the workload's size at line size 1) after their fetches: everything
    // ChampSim holds. (Stores are in the round trips above.)
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "phases",
        "--refs",
        "20000",
        "--line-size",
        "1",
        "--instructions",
    ];
    let native = generate(dir.path(), "s.cst", &args);
    let want = stats(&native);
    let out = dir.path().join("s.champsimtrace.xz");
    let stderr = convert(&native, &out, &["--to", "champsim"]);
    // The workload's fetches are 4 bytes: said, and no count changes.
    assert!(
        stderr.contains("instruction fetch(es) of other than 1 byte"),
        "{stderr}"
    );
    let v = stats_json(&[out.to_str().unwrap()]);
    assert_eq!(
        (&v["format"], &v["compression"]),
        (&"champsim".into(), &"xz".into())
    );
    assert_eq!(stats(&out), want);
}

#[test]
fn a_lossy_conversion_says_what_it_loses() {
    let dir = tempfile::tempdir().unwrap();
    let native = generate(dir.path(), "m.cst", &["matmul", "--n", "6"]);
    let want = stats(&native);
    let out = dir.path().join("m.champsim");
    let stderr = convert(&native, &out, &["--to", "champsim"]);
    for said in [
        "cachescope: warning: ",
        "data reference(s) of other than 1 byte",
        "modify reference(s) written as a load and a store",
        "written in records of their own with ip 0",
    ] {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
    let got = stats(&out);
    // Every modify became a load and a store.
    let modifies = want["modifies"].as_u64().unwrap();
    assert!(modifies > 0);
    assert_eq!(got["modifies"], 0);
    assert_eq!(
        got["refs"].as_u64(),
        Some(want["refs"].as_u64().unwrap() + modifies)
    );
    assert_eq!(got["distinct_lines"], want["distinct_lines"]);
    // --quiet: no warnings.
    cs().args(["convert", "-q", "--to", "champsim"])
        .arg(&native)
        .arg(dir.path().join("q.champsim"))
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

#[test]
fn a_cut_record_names_the_file_and_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = champsim_trace(100, 2);
    bytes.truncate(64 * 70 + 9);
    let path = write(dir.path(), "cut.champsim", &bytes);
    let expected = format!(
        "{}: truncated: ChampSim record 71 (at byte offset 4480 of the trace's content) is cut \
         short: 9 of its 64 bytes",
        path.display()
    );
    for args in [&[][..], &["--format", "champsim"]] {
        cs().arg("stats")
            .arg(&path)
            .args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(expected.as_str()));
    }
    cs().args(["stats", "--format", "nonsense"])
        .arg(&path)
        .assert()
        .failure()
        .stderr(predicate::str::contains("champsim"));
}

#[test]
fn other_binary_traces_are_not_taken_for_champsim() {
    let dir = tempfile::tempdir().unwrap();
    let bin = generate(
        dir.path(),
        "r.bin",
        &["random", "--refs", "5000", "--to", "binary"],
    );
    assert_eq!(stats_json(&[bin.to_str().unwrap()])["format"], "binary");
    let bin = generate(
        dir.path(),
        "s.bin",
        &["stride", "--stride", "65536", "--to", "binary"],
    );
    assert_eq!(stats_json(&[bin.to_str().unwrap()])["format"], "binary");
}
