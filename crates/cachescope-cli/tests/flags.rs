//! One command-line test for each flag that had none: `record --to`, `--policy plru|brrip`,
//! `--prefetch-distance`, `--mini-min-sets`, `sharing --top/--L1/--LL/--cores/--csv`,
//! `attribute --per-thread --csv`, and `simulate --cachegrind` against Valgrind's Cachegrind
//! run from the command line. The expected numbers are worked by hand from each flag's
//! definition (`--help`, docs/hardware.md, docs/threads.md) or come from another command.

use std::path::{Path, PathBuf};

use cachescope::{Access, ThreadId};
use serde_json::Value;

mod common;
use common::{cachegrind_summary, compile_c, cs, json, threaded_trace, tool_or_skip};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A lackey text trace of `records` (kind, byte address), each 8 bytes, every one preceded by
/// the fetch of one instruction at 0x400000 (their pc).
fn lackey(dir: &Path, name: &str, records: &[(char, u64)]) -> PathBuf {
    let path = dir.join(name);
    let text: String = records
        .iter()
        .map(|&(k, addr)| format!("I  00400000,4\n {k} {addr:x},8\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// `simulate TRACE ARGS --json`: the first simulation's first level.
fn level(trace: &Path, args: &[&str]) -> Value {
    let mut all = vec!["simulate", s(trace), "--json"];
    all.extend_from_slice(args);
    json(&all)["simulations"][0]["levels"][0].clone()
}

fn misses(trace: &Path, args: &[&str]) -> u64 {
    level(trace, args)["misses"].as_u64().unwrap()
}

#[test]
fn plru_and_brrip_replace_as_their_definitions_say() {
    let dir = tempfile::tempdir().unwrap();
    // One 4-way set: A B C D A E B C. LRU evicts B for E, then misses B and C: 7 misses.
    // Tree PLRU after A's hit points away from A's half: E replaces C, so B hits and only C
    // misses again: 6.
    let lines = [0u64, 1, 2, 3, 0, 4, 1, 2];
    let t = lackey(dir.path(), "abcd.txt", &lines.map(|l| ('L', l * 64)));
    assert_eq!(misses(&t, &["--cache", "256,4,64"]), 7);
    assert_eq!(misses(&t, &["--cache", "256,4,64", "--policy", "plru"]), 6);
    // A loop over 5 lines in 4 ways: LRU and SRRIP (inserting near) miss every time; BRRIP
    // inserts at the distant end but one time in 32, so most of the loop stays.
    let loop5: Vec<(char, u64)> = (0..500).map(|i| ('L', (i % 5) * 64)).collect();
    let t = lackey(dir.path(), "loop.txt", &loop5);
    let cache = ["--cache", "256,4,64", "--seed", "5"];
    let of = |p: &str| misses(&t, &[&cache[..], &["--policy", p]].concat());
    assert_eq!((of("lru"), of("srrip")), (500, 500));
    let brrip = of("brrip");
    assert!((5..250).contains(&brrip), "brrip: {brrip} misses of 500");
    // The seed drives the bimodal draws: the same seed, the same count.
    let again = misses(
        &t,
        &["--cache", "256,4,64", "--seed", "5", "--policy", "brrip"],
    );
    assert_eq!(again, brrip);
    // mrc takes them too, with --ways (set-associative caches); the same caches.
    let v = json(&[
        "mrc",
        s(&t),
        "--json",
        "--ways",
        "4",
        "--sizes",
        "256",
        "--policy",
        "brrip",
        "--seed",
        "5",
    ]);
    let ratio = v["points"][0]["miss_ratio"].as_f64().unwrap();
    assert!((ratio - brrip as f64 / 500.0).abs() < 1e-9, "{v}");
}

#[test]
fn prefetch_distance_sets_how_far_ahead_the_stride_prefetcher_fetches() {
    let dir = tempfile::tempdir().unwrap();
    // One instruction loads every 256 bytes (a new line each time), 20 times, in a cache that
    // never evicts. Its stride is steady from the third load on; each load from then on
    // prefetches the line `distance` strides ahead.
    let stream: Vec<(char, u64)> = (0..20).map(|i| ('L', 0x10_0000 + 256 * i)).collect();
    let t = lackey(dir.path(), "stride.txt", &stream);
    let counts = |distance: &str| {
        let l = level(
            &t,
            &[
                "--cache",
                "64K,8,64",
                "--prefetch",
                "stride",
                "--prefetch-distance",
                distance,
            ],
        );
        ["misses", "prefetches", "useful_prefetches"].map(|k| l[k].as_u64().unwrap())
    };
    // Distance 1: loads 0-2 miss, 3-19 were prefetched; 18 prefetches (loads 2-19).
    assert_eq!(counts("1"), [3, 18, 17]);
    // Distance 4: the first prefetch (at load 2) is for load 6: loads 0-5 miss.
    assert_eq!(counts("4"), [6, 18, 14]);
    cs().args([
        "simulate",
        s(&t),
        "--cache",
        "64K,8,64",
        "--prefetch",
        "stride",
    ])
    .args(["--prefetch-distance", "0"])
    .assert()
    .failure()
    .stderr(predicates::str::contains("1..=4096"));
}

#[test]
fn mini_min_sets_decides_which_caches_are_simulated_whole() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::generate(
        dir.path(),
        "z.cst",
        &[
            "zipf", "--refs", "300000", "--lines", "20000", "--seed", "3",
        ],
    );
    let exact = |cache: &str| {
        let l = level(&t, &["--cache", cache]);
        l["misses"].as_f64().unwrap() / l["refs"].as_f64().unwrap()
    };
    let mini = |min_sets: &str| -> Vec<f64> {
        let v = json(&[
            "mrc",
            s(&t),
            "--json",
            "--method",
            "mini",
            "--ways",
            "8",
            "--sizes",
            "32K,1M",
            "--mini-min-sets",
            min_sets,
        ]);
        let points = v["points"].as_array().unwrap();
        points
            .iter()
            .map(|p| p["miss_ratio"].as_f64().unwrap())
            .collect()
    };
    let (small, large) = (exact("32K,8,64"), exact("1M,8,64"));
    // 32K in 8 ways is 64 sets: with the floor at 64 it is simulated whole, exactly.
    let floor64 = mini("64");
    assert!(
        (floor64[0] - small).abs() < 1e-12,
        "{floor64:?} against {small}"
    );
    // 1M has 2048 sets: scaled down and sampled, not exact.
    assert!(
        (floor64[1] - large).abs() > 1e-6,
        "{floor64:?} against {large}"
    );
    // A floor of 2048 sets takes both whole.
    let floor2048 = mini("2048");
    assert!((floor2048[0] - small).abs() < 1e-12 && (floor2048[1] - large).abs() < 1e-12);
    // A floor of 1 samples both.
    let floor1 = mini("1");
    assert!(
        (floor1[0] - small).abs() > 1e-6,
        "{floor1:?} against {small}"
    );
}

/// Threads 1 and 2 in turn, 50 rounds: each stores its own 8 bytes of line 0x1000 (false
/// sharing), both store the same 8 bytes of line 0x2040 (true sharing), each stores a 64-byte
/// line of its own, 0x3000 and 0x3040 (shared only as one 128-byte line), and thread 2 loads
/// a line thread 1 never touches.
fn sharing_trace(dir: &Path) -> PathBuf {
    let mut refs: Vec<(ThreadId, Access)> = Vec::new();
    for _ in 0..50 {
        for t in [1u32, 2] {
            let own = u64::from(t - 1);
            refs.push((t, Access::store(0x1000 + 8 * own, 8)));
            refs.push((t, Access::store(0x2040, 8)));
            refs.push((t, Access::store(0x3000 + 64 * own, 8)));
        }
        refs.push((2, Access::load(0x5000, 8)));
    }
    threaded_trace(dir, "sharing.cst", &refs)
}

fn sharing(trace: &Path, args: &[&str]) -> Value {
    // Round-robin, one instruction each: the interleaving these counts were made for.
    let mut all = vec![
        "sharing",
        s(trace),
        "--json",
        "--interleave",
        "instructions",
        "--quantum",
        "1",
    ];
    all.extend_from_slice(args);
    json(&all)
}

fn kinds(v: &Value) -> Vec<(String, String)> {
    let mut k: Vec<(String, String)> = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_str().unwrap().into(),
                l["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    k.sort();
    k
}

fn pair(line: &str, kind: &str) -> (String, String) {
    (line.into(), kind.into())
}

#[test]
fn sharing_flags_set_the_line_the_machine_and_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let t = sharing_trace(dir.path());
    let v = sharing(&t, &[]);
    assert_eq!(kinds(&v), [pair("0x1000", "false"), pair("0x2040", "true")]);
    // --L1 sets the line: 128 bytes make 0x3000 and 0x3040 one falsely shared line, and put
    // 0x2040 in line 0x2000.
    let wide = sharing(&t, &["--L1", "32K,8,128", "--LL", "8M,16,128"]);
    assert_eq!(
        kinds(&wide),
        [
            pair("0x1000", "false"),
            pair("0x2000", "true"),
            pair("0x3000", "false")
        ]
    );
    // --LL must have the L1's line.
    cs().args(["sharing", s(&t), "--L1", "32K,8,128"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("line size"));
    // --cores: one core has no coherence misses; two (one per thread, the default) do.
    let coherence = |v: &Value| -> u64 {
        v["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["coherence_misses"].as_u64().unwrap())
            .sum()
    };
    assert!(coherence(&v) >= 100, "{v}");
    assert_eq!(coherence(&sharing(&t, &["--cores", "1"])), 0);
    assert_eq!(coherence(&sharing(&t, &["--cores", "2"])), coherence(&v));
    // --csv: a header and one row per shared line, every line whatever --top says.
    let out = cs()
        .args([
            "sharing",
            s(&t),
            "--csv",
            "--interleave",
            "instructions",
            "--quantum",
            "1",
            "--top",
            "1",
        ])
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("line,kind,"), "{csv}");
    assert!(
        rows[1..].iter().any(|r| r.starts_with("0x1000,false,")),
        "{csv}"
    );
    // --top 1: the table shows the line with the most coherence misses alone.
    let text = |top: &str| -> String {
        let out = cs()
            .args(["sharing", s(&t), "--quantum", "1", "--top", top])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let (one, all) = (text("1"), text("20"));
    assert!(all.contains("0x1000") && all.contains("0x2040"), "{all}");
    assert_eq!(
        usize::from(one.contains("0x1000")) + usize::from(one.contains("0x2040")),
        1,
        "{one}"
    );
}

#[test]
fn attribute_per_thread_csv_has_a_row_per_thread_and_bucket() {
    let dir = tempfile::tempdir().unwrap();
    // Thread 1 sweeps 64 KiB, thread 2 reuses 1 KiB: in a 4 KiB cache of its own each, thread
    // 1 misses every time and thread 2 only on its 16 cold lines.
    let mut refs: Vec<(ThreadId, Access)> = Vec::new();
    for i in 0..4096u64 {
        refs.push((1, Access::load(0x10_0000 + 64 * (i % 1024), 8)));
        refs.push((2, Access::load(0x90_0000 + 64 * (i % 16), 8)));
    }
    let t = threaded_trace(dir.path(), "two.cst", &refs);
    let args = [
        "attribute",
        s(&t),
        "--per-thread",
        "--cache",
        "4K,4,64",
        "-q",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2, "{v}");
    let out = cs().args(args).arg("--csv").assert().success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(header[0], "thread", "{csv}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (thread, misses) = (col("thread"), col("misses"));
    let mut per_thread = [0u64; 3];
    for row in rows {
        let cells: Vec<&str> = row.split(',').collect();
        let t: usize = cells[thread].parse().unwrap();
        per_thread[t] += cells[misses].parse::<u64>().unwrap();
    }
    // Each thread's rows add up to its own attribution's misses.
    for (i, th) in threads.iter().enumerate() {
        let id = th["thread"].as_u64().unwrap() as usize;
        assert_eq!(id, i + 1);
        assert_eq!(per_thread[id], th["misses"].as_u64().unwrap(), "{csv}");
    }
    assert_eq!(per_thread[1], 4096);
    assert_eq!(per_thread[2], 16);
}

const KERNEL: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 96;
    double *a = malloc(n * n * sizeof *a), *b = calloc(n * n, sizeof *b);
    for (int i = 0; i < n * n; i++) a[i] = i * 0.5;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) b[j * n + i] += a[i * n + j];
    char *s = malloc(4000);
    for (int i = 0; i < 4000; i++) s[i] = (char)i;
    long sum = 0;
    for (int k = 0; k < 3; k++) for (int i = 0; i < n * n; i++) sum += (long)b[(i * 17) % (n * n)];
    for (int i = 1; i < 3990; i += 7) sum += *(int *)(s + i);
    free(a); free(b); free(s);
    printf("%ld\n", sum);
    return 0;
}
"#;

#[test]
fn simulate_cachegrind_on_a_recording_gives_cachegrinds_counts() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Static: no dynamic loader, whose start-up depends on the environment Valgrind is given.
    let exe = compile_c(dir.path(), "kernel", KERNEL, &["-O1", "-static"]);
    let trace = dir.path().join("k.cst");
    let rec = cachescope_testkit::record(
        common::bin(),
        &["-q", "--backend", "tool", "--no-events"],
        &trace,
        &[&exe],
    );
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    // Cachegrind as a user runs it, in the environment `record` leaves the program (the tool
    // removes cachescope's variables from it), with chasing off as the tool runs: with it,
    // VEX merges small if-then-else arms into their blocks and Cachegrind counts the fetches
    // of arms that did not run (0.15 % more here; tests/tool_fetches.rs).
    let cg = dir.path().join("cg.out");
    let run = std::process::Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--vex-guest-chase=no",
        ])
        .arg(format!("--cachegrind-out-file={}", cg.display()))
        .args(["--I1=32768,8,64", "--D1=32768,8,64", "--LL=262144,8,64"])
        .arg(&exe)
        .env_clear()
        .envs(std::env::vars().filter(|(k, _)| !k.starts_with("CACHESCOPE_")))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let want = cachegrind_summary(&cg);
    let v = json(&[
        "simulate",
        s(&trace),
        "--cachegrind",
        "--json",
        "--I1",
        "32K,8,64",
        "--D1",
        "32K,8,64",
        "--LL",
        "256K,8,64",
    ]);
    let got = |k: &str| v[k].as_u64().unwrap();
    // Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
    let [ir, i1, lli, dr, d1r, llr, dw, d1w, llw] = want[..] else {
        panic!("{want:?}")
    };
    assert!(ir > 500_000, "a suspiciously short run: {want:?}");
    // Not quite one environment: Valgrind's LD_PRELOAD names the directory each tool lives
    // in, and the C library's start-up reads every variable, so the start-up may differ by a
    // few dozen instructions (tests/tool_real.rs in the library compares the two record for
    // record, both run from one directory). References within 0.01 %, misses within 0.5 %.
    let near = |name: &str, got: u64, want: u64| {
        let tolerance = 50 + want / 10_000;
        assert!(
            got.abs_diff(want) <= tolerance,
            "{name}: simulate {got}, Cachegrind {want} (tolerance {tolerance}): {v}"
        );
    };
    near("instructions", got("i_refs"), ir);
    near("data references", got("d_refs"), dr + dw);
    near("data reads", got("d_reads"), dr);
    near("data writes", got("d_writes"), dw);
    let close = |name: &str, got: u64, want: u64| {
        let tolerance = 10 + want / 200;
        assert!(
            got.abs_diff(want) <= tolerance,
            "{name}: simulate {got}, Cachegrind {want} (tolerance {tolerance}): {v}"
        );
    };
    close("I1 misses", got("i1_misses"), i1);
    close("LLi misses", got("lli_misses"), lli);
    close("D1 misses", got("d1_misses"), d1r + d1w);
    close("LLd misses", got("lld_misses"), llr + llw);
}

#[test]
fn record_to_writes_the_format_asked_with_the_same_references() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "kernel", KERNEL, &["-O1", "-static"]);
    let record = |args: &[&str], name: &str| {
        let trace = dir.path().join(name);
        let rec = cachescope_testkit::record(common::bin(), args, &trace, &[&exe]);
        assert!(rec.status.success(), "{rec:?}");
        common::stats_json(&[s(&trace)])
    };
    let tool = ["-q", "--backend", "tool", "--no-events"];
    let native = record(&tool, "k.cst");
    assert_eq!(native["format"], "native");
    for (to, name, format) in [
        ("lackey", "k.txt.zst", "lackey"),
        ("plain-hex", "k.hex", "plain-hex"),
        ("din", "k.din", "din"),
    ] {
        let other = record(&[&tool[..], &["--to", to]].concat(), name);
        assert_eq!(other["format"], format, "--to {to}: {other}");
        // The same deterministic program under the same tool: the same references (din has
        // no modify: it writes one as a read, as Cachegrind sees it).
        let n = |k: &str| native[k].as_u64().unwrap();
        let loads = n("loads") + if to == "din" { n("modifies") } else { 0 };
        let modifies = if to == "din" { 0 } else { n("modifies") };
        assert!(n("modifies") > 0, "{native}");
        for (k, want) in [
            ("refs", n("refs")),
            ("loads", loads),
            ("stores", n("stores")),
            ("modifies", modifies),
            ("instructions", n("instructions")),
            ("distinct_lines", n("distinct_lines")),
        ] {
            assert_eq!(other[k], want, "--to {to}: {k}");
        }
    }
}
