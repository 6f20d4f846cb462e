//! Threads end to end: `stats` lists them, `--thread ID` keeps one, `mrc --per-thread` gives
//! every thread's curve in one pass, equal to `--thread ID`'s, `convert` keeps them in the
//! native format and says when a text format merges them; and, where Valgrind and a C compiler
//! exist, a recorded two-thread program shows each thread's own working set.

mod common;

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, Batch};
use common::{cs, json, tool_or_skip};
use serde_json::Value;

/// A native trace of three threads: thread 1 over 32 lines, thread 2 over 1000, thread 5 over
/// 200, in runs of 500 references, with a few instruction fetches.
fn threaded_trace(dir: &Path) -> PathBuf {
    let path = dir.join("threads.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::new()).unwrap();
    let mut b = Batch::new();
    for i in 0..60_000u64 {
        let (t, lines) = [(1, 32), (2, 1000), (5, 200)][((i / 500) % 3) as usize];
        b.set_thread(t);
        if i % 10 == 0 {
            b.push(Access {
                kind: cachescope::AccessKind::Instr,
                ..Access::load(0x40_0000 + i % 64, 4)
            });
        }
        b.push(Access::load(
            (u64::from(t) << 30) + 64 * (i * 13 % lines),
            8,
        ));
        if b.is_full() {
            w.write_batch(&b).unwrap();
            b.clear();
        }
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn stats_lists_each_thread_and_their_refs_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    let v = json(&["stats", "--json", s(&t)]);
    let threads = v["threads"].as_array().unwrap();
    let ids: Vec<u64> = threads
        .iter()
        .map(|t| t["thread"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 5]);
    let refs: u64 = threads.iter().map(|t| t["refs"].as_u64().unwrap()).sum();
    assert_eq!(refs, v["refs"].as_u64().unwrap());
    assert_eq!(threads[0]["refs"], 20_000);
    assert_eq!(threads[0]["distinct_lines"], 32);
    assert_eq!(threads[1]["distinct_lines"], 1000);
    let instr: u64 = threads
        .iter()
        .map(|t| t["instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(instr, 6000);
    let table = cs().args(["stats", s(&t)]).assert().success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).to_string();
    assert!(text.contains("threads            3"), "{text}");
    // One thread alone, and a single-stream trace as thread 1.
    let two = json(&["stats", "--json", "--thread", "2", s(&t)]);
    assert_eq!(two["refs"], 20_000);
    assert_eq!(two["distinct_lines"], 1000);
    let w = json(&["stats", "--json", "--workload", "loop"]);
    assert_eq!(w["threads"].as_array().unwrap().len(), 1);
    assert_eq!(w["threads"][0]["thread"], 1);
    assert_eq!(w["threads"][0]["refs"], w["refs"]);
}

#[test]
fn an_unknown_thread_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    for cmd in [["stats", "--thread", "3"], ["mrc", "--thread", "3"]] {
        let out = cs().args(cmd).arg(s(&t)).assert().failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains("thread 3 does not appear in"), "{err}");
        assert!(err.contains("threads 1, 2, 5"), "{err}");
    }
}

#[test]
fn per_thread_curves_equal_each_thread_alone_for_every_method() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    let sizes = ["--sizes", "1K,4K,16K,64K,128K"];
    for method in [
        &["--method", "exact"][..],
        &["--method", "exact", "--policy", "random"],
        &["--method", "statstack", "--rate", "0.05"],
        &["--method", "statcache", "--rate", "0.05"],
        &["--method", "hotl"],
        &["--method", "mini", "--policy", "fifo"],
    ] {
        let mut args = vec!["mrc", "--json", "--per-thread", s(&t)];
        args.extend_from_slice(method);
        args.extend_from_slice(&sizes);
        let all = json(&args);
        let threads = all["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 3, "{method:?}");
        for entry in threads {
            let id = entry["thread"].to_string();
            let mut one = vec!["mrc", "--json", "--thread", &id, s(&t)];
            one.extend_from_slice(method);
            one.extend_from_slice(&sizes);
            let alone = json(&one);
            assert_eq!(entry["points"], alone["points"], "{method:?} thread {id}");
            assert_eq!(entry["refs"], 20_000);
        }
        // Thread 1 (32 lines = 2 KiB) fits at 4K; thread 2 (1000 lines) not below 64K.
        if method[1] == "exact" && method.len() == 2 {
            let warm = |t: &Value, i: usize| t["points"][i]["miss_ratio_warm"].as_f64().unwrap();
            assert_eq!(warm(&threads[0], 1), 0.0);
            assert!(warm(&threads[1], 2) > 0.9);
            assert_eq!(warm(&threads[1], 4), 0.0);
        }
    }
}

#[test]
fn worker_threads_do_not_change_per_thread_output() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    let run = |threads: &str| {
        let out = cs()
            .args(["mrc", "--per-thread", "--csv", "--threads", threads, s(&t)])
            .assert()
            .success();
        out.get_output().stdout.clone()
    };
    assert_eq!(run("1"), run("2"));
    let stats = |threads: &str| json(&["stats", "--json", "--threads", threads, s(&t)]);
    assert_eq!(stats("1"), stats("2"));
}

#[test]
fn convert_keeps_threads_in_native_and_says_when_text_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    let copy = dir.path().join("copy.cst.zst");
    cs().args(["convert", s(&t), s(&copy)]).assert().success();
    assert_eq!(
        json(&["stats", "--json", s(&copy)])["threads"],
        json(&["stats", "--json", s(&t)])["threads"]
    );
    let text = dir.path().join("t.txt");
    let out = cs()
        .args(["convert", s(&t), s(&text), "--to", "lackey"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("3 threads (1, 2, 5) are merged into one stream"),
        "{err}"
    );
    assert_eq!(
        json(&["stats", "--json", s(&text)])["threads"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// examples/threads/working_sets.c: a thread over 16 KiB and one over 1 MiB, each with its
/// own knee.
#[test]
fn a_recorded_program_shows_each_thread_working_set() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace =
        common::record_threads_program(dir.path(), &common::threads_example("working_sets"));
    let v = json(&[
        "mrc",
        "--json",
        "--per-thread",
        "--sizes",
        "8K,32K,512K,2M",
        s(&trace),
    ]);
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3, "main, and the two workers");
    let warm = |t: &Value| -> Vec<f64> {
        t["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["miss_ratio_warm"].as_f64().unwrap())
            .collect()
    };
    // The first worker (16 KiB) fits in 32K; the second (1 MiB) only in 2M.
    let (small, large) = (warm(&threads[1]), warm(&threads[2]));
    assert!(small[0] > 0.2 && small[1] < 0.01, "{small:?}");
    assert!(
        large[1] > 0.2 && large[2] > 0.2 && large[3] < 0.01,
        "{large:?}"
    );
}

/// Valgrind gives a new thread the slot of an exited one; the recording numbers every thread
/// anew: a program that runs two threads one after the other has threads 1, 2 and 3.
#[test]
fn a_thread_created_after_another_exits_gets_a_new_id() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("seq.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\nstatic long a[4096];\n\
         static void *w(void *p) { long *x = p; for (int i = 0; i < 4096; i++) x[i] += i; return 0; }\n\
         int main(void) { pthread_t t; for (int k = 0; k < 2; k++) { pthread_create(&t, 0, w, a); \
         pthread_join(t, 0); } return 0; }\n",
    )
    .unwrap();
    let trace = common::record_threads_program(dir.path(), &src);
    let v = json(&["stats", "--json", s(&trace)]);
    let ids: Vec<u64> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3]);
    // Each worker made its 4096 read-modify-writes of a[].
    for t in &v["threads"].as_array().unwrap()[1..] {
        assert!(t["refs"].as_u64().unwrap() >= 4096, "{t}");
    }
}

#[test]
fn the_threads_of_one_trace_co_run_in_a_shared_cache() {
    let dir = tempfile::tempdir().unwrap();
    let t = threaded_trace(dir.path());
    let v = json(&[
        "corun",
        "--json",
        "--split-threads",
        s(&t),
        "--cache",
        "64K",
        "--simulate",
    ]);
    let rows = v["programs"]
        .as_array()
        .or_else(|| v["rows"].as_array())
        .expect("a row per thread");
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["program"].as_str().unwrap())
        .collect();
    assert!(
        names[0].ends_with("thread 1") && names[2].ends_with("thread 5"),
        "{names:?}"
    );
    // Each thread made 20,000 data references and 2,000 instruction fetches: equal rates.
    for r in rows {
        assert!((r["rate"].as_f64().unwrap() - 10.0).abs() < 1e-9, "{r}");
        assert!(r["simulated"]["miss_ratio"].as_f64().is_some(), "{r}");
    }
    // Thread 1 (32 lines) and thread 5 (200) fit beside thread 2's 1000 lines in 1024.
    cs().args([
        "corun",
        "--split-threads",
        "--workload",
        "loop",
        "--cache",
        "1M",
    ])
    .assert()
    .failure();
    let one = cs()
        .args(["corun", s(&t), "--cache", "64K"])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&one.get_output().stderr).to_string();
    assert!(err.contains("two programs or more"), "{err}");
}
