//! cachescope's Valgrind tool against lackey, record for record, on small C programs compiled
//! here and on real programs (`ls`, `sort`).
//!
//! Both tools run with the same `VALGRIND_LIB` (a directory holding both) so the program sees
//! the same environment and stack. Skips, saying so (see cachescope-testkit), where Valgrind,
//! its development files (the tool is then not built) or a C compiler are missing.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cachescope::record::tool::ToolReader;
use cachescope::trace::{AccessReader, lackey};
use cachescope::{AccessKind, Batch, Source};

mod common;

type Rec = (AccessKind, u64, u32, u64);

fn read_all(mut r: impl AccessReader) -> Vec<Rec> {
    let mut b = Batch::new();
    let mut out = Vec::new();
    while r.read_batch(&mut b).unwrap() > 0 {
        for a in b.iter() {
            out.push((a.kind, a.addr, a.size, a.pc.unwrap_or(0)));
        }
    }
    out
}

/// Runs `program` under lackey and under the tool; returns both reference streams.
fn both(lib: &Path, dir: &Path, program: &OsStr, args: &[&str]) -> (Vec<Rec>, Vec<Rec>, u32) {
    let lk = dir.join("lackey.txt");
    let bin = dir.join("tool.bin");
    let run = |tool_args: Vec<std::ffi::OsString>| {
        let status = Command::new("valgrind")
            .args(tool_args)
            .arg(program)
            .args(args)
            .env("VALGRIND_LIB", lib)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{program:?} under valgrind: {status}");
    };
    let opt = |name: &str, p: &Path| {
        let mut s = std::ffi::OsString::from(name);
        s.push(p);
        s
    };
    // Chasing off, as the tool runs: with it, VEX merges small if-then-else arms into their
    // blocks and lackey records fetches of arms that did not run.
    run(vec![
        "--tool=lackey".into(),
        "--vex-guest-chase=no".into(),
        "--trace-mem=yes".into(),
        opt("--log-file=", &lk),
    ]);
    // The same environment as lackey's run: VALGRIND_LIB kept (record strips it).
    run(vec![
        "--tool=cachescope".into(),
        opt("--cs-out=", &bin),
        "--cs-keep-env=yes".into(),
    ]);
    let text = std::fs::File::open(&lk).unwrap();
    let lackey = read_all(lackey::Reader::new(
        std::io::BufReader::new(text),
        Source::File(lk.clone()),
        lackey::Options::default(),
    ));
    let mut reader = ToolReader::new(
        std::fs::File::open(&bin).unwrap(),
        Source::File(bin.clone()),
    );
    let mut tool = Vec::new();
    let mut b = Batch::new();
    while reader.read_batch(&mut b).unwrap() > 0 {
        tool.extend(
            b.iter()
                .map(|a| (a.kind, a.addr, a.size, a.pc.unwrap_or(0))),
        );
    }
    (lackey, tool, reader.threads())
}

/// The streams are equal record for record, except at most `allowed` one-byte loads whose
/// kind, size and pc agree (ld.so's start-up scan of strings Valgrind writes on the new stack
/// lands on other addresses under each tool: see docs/recording.md).
fn assert_equivalent(name: &str, lackey: &[Rec], tool: &[Rec], allowed: usize) {
    assert_eq!(lackey.len(), tool.len(), "{name}: record counts");
    let mut differ = 0;
    for (i, (l, t)) in lackey.iter().zip(tool).enumerate() {
        if l != t {
            assert!(
                l.0 == t.0 && l.2 == t.2 && l.3 == t.3 && l.0 == AccessKind::Load,
                "{name}: record {i}: lackey {l:x?}, tool {t:x?}"
            );
            differ += 1;
        }
    }
    assert!(differ <= allowed, "{name}: {differ} addresses differ");
}

fn cc(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let flags: Vec<&str> = ["-O1"].iter().chain(flags).copied().collect();
    common::compile_c(dir, name, source, &flags)
}

/// A directory and the shared VALGRIND_LIB in it; `None`, after a skip, where Valgrind, cc or
/// the tool is missing (lackey and Cachegrind are part of every Valgrind: their absence is a
/// failure).
fn setup() -> Option<(tempfile::TempDir, PathBuf)> {
    if !common::tool_or_skip() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = cachescope_testkit::shared_valgrind_lib(dir.path());
    Some((dir, lib))
}

const KERNEL: &str = r#"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    int n = 64;
    double *a = malloc(n * n * sizeof *a), *b = calloc(n * n, sizeof *b);
    for (int i = 0; i < n * n; i++) a[i] = i * 0.5;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) b[j * n + i] += a[i * n + j];
    char *s = malloc(100); strcpy(s, "cachescope"); s = realloc(s, 4000);
    unsigned long long sum = 0;
    for (int k = 0; k < 3; k++) for (int i = 0; i < n * n; i++) sum += (unsigned long long)b[(i * 17) % (n * n)];
    printf("%llu %s\n", sum, s);
    free(a); free(b); free(s);
    return 0;
}
"#;

#[test]
fn a_c_kernel_gives_lackeys_records() {
    let Some((dir, lib)) = setup() else { return };
    let exe = cc(dir.path(), "kernel", KERNEL, &[]);
    let (lackey, tool, threads) = both(&lib, dir.path(), exe.as_os_str(), &[]);
    assert!(lackey.len() > 100_000, "{}", lackey.len());
    assert_equivalent("kernel", &lackey, &tool, 8);
    assert_eq!(threads, 1);
    // Every kind is there: modifies are merged load+store pairs, as lackey makes them.
    for kind in AccessKind::ALL {
        assert!(tool.iter().any(|r| r.0 == kind), "no {kind:?}");
    }
}

#[test]
fn real_programs_give_lackeys_records() {
    let Some((dir, lib)) = setup() else { return };
    let words = dir.path().join("words.txt");
    let text: String = (0..3000)
        .map(|i| format!("w{}\n", (i * 7919) % 3001))
        .collect();
    std::fs::write(&words, text).unwrap();
    for (program, args) in [
        ("ls", vec!["-l", "/usr"]),
        ("sort", vec![words.to_str().unwrap()]),
    ] {
        let (lackey, tool, _) = both(&lib, dir.path(), OsStr::new(program), &args);
        assert!(lackey.len() > 100_000, "{program}: {}", lackey.len());
        assert_equivalent(program, &lackey, &tool, 8);
    }
}

const THREADS: &str = r#"
#include <pthread.h>
#include <stdio.h>
static long data[4][4096];
static void *work(void *p) {
    long *d = p, s = 0;
    for (int r = 0; r < 20; r++) for (int i = 0; i < 4096; i++) s += d[i] += i;
    return (void *)s;
}
int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, work, data[i]);
    long total = 0;
    for (int i = 0; i < 4; i++) { void *r; pthread_join(t[i], &r); total += (long)r; }
    printf("%ld\n", total);
    return 0;
}
"#;

#[test]
fn threads_are_marked_and_their_references_all_arrive() {
    let Some((dir, lib)) = setup() else { return };
    let exe = cc(dir.path(), "threads", THREADS, &["-pthread"]);
    let (lackey, tool, threads) = both(&lib, dir.path(), exe.as_os_str(), &[]);
    // Valgrind reuses the slots of threads that ended, so ids go up to 5 at most.
    assert!((2..=5).contains(&threads), "{threads} thread ids");
    // The interleaving may differ between two runs; each kind's count of the references made
    // by the program's own code (pc in the executable, mapped low) may not.
    let count = |s: &[Rec], k| s.iter().filter(|r| r.0 == k && r.3 < 0x100_0000).count();
    for kind in [AccessKind::Load, AccessKind::Store, AccessKind::Modify] {
        assert_eq!(count(&lackey, kind), count(&tool, kind), "{kind:?}");
    }
}

/// `simulate --cachegrind`'s model on the tool's stream against Cachegrind itself, on the C
/// kernel: references equal, D1 misses within 0.01 %.
#[test]
fn cachegrind_sim_on_the_tool_stream_equals_cachegrind() {
    use cachescope::sim::{CachegrindSim, Geometry};
    let Some((dir, lib)) = setup() else { return };
    let exe = cc(dir.path(), "kernel", KERNEL, &[]);
    let bin = dir.path().join("t.bin");
    let cg = dir.path().join("cg.out");
    let run = |args: Vec<String>| {
        let ok = Command::new("valgrind")
            .args(args)
            .arg(&exe)
            .env("VALGRIND_LIB", &lib)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
    };
    run(vec![
        "--tool=cachescope".into(),
        format!("--cs-out={}", bin.display()),
        "--cs-keep-env=yes".into(),
    ]);
    // Chasing off, as the tool runs (see `both`).
    run(vec![
        "--tool=cachegrind".into(),
        "--cache-sim=yes".into(),
        "--vex-guest-chase=no".into(),
        format!("--cachegrind-out-file={}", cg.display()),
        "--I1=32768,8,64".into(),
        "--D1=32768,8,64".into(),
        "--LL=262144,8,64".into(),
    ]);
    let summary = std::fs::read_to_string(&cg).unwrap();
    let want: Vec<u64> = summary
        .lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let g = |s: &str| Geometry::parse(s).unwrap();
    let mut sim = CachegrindSim::new(g("32K,8,64"), g("32K,8,64"), g("256K,8,64")).unwrap();
    let reader = ToolReader::new(std::fs::File::open(&bin).unwrap(), Source::Memory);
    let mut trace = cachescope::trace::Trace::from_reader(Box::new(reader), Source::Memory);
    cachescope::pass::Pass::new(1)
        .run(&mut trace, cachescope::pass::Analyses(&mut [&mut sim]))
        .unwrap();
    let c = sim.finish();
    // Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
    assert_eq!(c.i_refs, want[0]);
    assert_eq!(c.d_reads, want[3]);
    assert_eq!(c.d_writes, want[6]);
    let (got, exp) = (c.d1_read_misses + c.d1_write_misses, want[4] + want[7]);
    assert!(
        got.abs_diff(exp) as f64 <= 1e-4 * exp as f64,
        "D1 misses {got}, Cachegrind {exp}"
    );
}
