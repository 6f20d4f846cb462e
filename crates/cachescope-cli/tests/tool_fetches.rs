//! Every instruction fetch the tool records ran, with call events (record's default) and
//! without (`--no-calls`): on a C program with calls, a tail call, a function pointer,
//! recursion and a branch pair VEX merges when it chases (`jne X; test; je X`), the fetches of
//! the merged middle equal the times it ran (known by construction), and the whole run's
//! fetches equal Cachegrind's I refs with chasing off (`--vex-guest-chase=no`, which counts
//! only what ran; with chasing on Cachegrind also counts the merged instructions that did
//! not). Skipped, saying why, without Valgrind, cc or the tool.

use std::path::Path;

use cachescope::trace::OpenOptions;
use cachescope::{AccessKind, Batch, batch::Step};

mod common;
use common::{bin, cachegrind_summary, compile_c, tool_or_skip};

/// Bytes scanned by `hits`, one in 7 equal to 3: `cs_arm` runs N / 7 times, not N.
const N: u64 = 7000;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>

/* How many of p's n bytes equal k (k != 0). With chasing, VEX merges `test; je` into the
   block of `jne`, which jumps to the same place: its fetches would be counted per byte. */
__attribute__((noinline, noclone)) long hits(const unsigned char *p, long n, unsigned char k)
{
    long c = 0;
    for (long i = 0; i < n; i++)
        __asm__ volatile("movzbl (%1), %%ecx\n\t"
                         "cmp %b2, %%cl\n\t"
                         "jne 1f\n"
                         ".globl cs_arm\n"
                         "cs_arm:\n\t"
                         "test %%cl, %%cl\n\t"
                         "je 1f\n\t"
                         "add $1, %0\n"
                         "1:\n"
                         : "+r"(c) : "r"(p + i), "q"(k) : "rcx", "cc");
    return c;
}

__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
/* A tail call (-foptimize-sibling-calls): a jump into leaf. */
__attribute__((noinline)) long tail(long x) { return leaf(x + 1); }
__attribute__((noinline)) long twice(long x) { return leaf(x) + leaf(x + 2); }
__attribute__((noinline)) long rec(long n) { return n == 0 ? 0 : 1 + rec(n - 1); }

extern const char cs_arm[];

int main(void)
{
    enum { N = 7000 };
    unsigned char *p = malloc(N);
    for (int i = 0; i < N; i++) p[i] = (unsigned char)(i % 7);
    long (*volatile f)(long) = twice;
    long s = 0;
    for (int i = 0; i < 200; i++) s += tail(i) + f(i) + rec(i % 9);
    s += hits(p, N, 3);
    free(p);
    printf("%ld %#lx\n", s, (unsigned long)cs_arm);
    return 0;
}
"#;

/// The instruction fetches in `trace`: all of them, those at `at`, and the call events.
fn fetches(trace: &Path, at: u64) -> (u64, u64, u64) {
    let mut t = cachescope::trace::open(trace, &OpenOptions::default()).unwrap();
    let (mut all, mut here, mut calls) = (0, 0, 0);
    let mut b = Batch::new();
    while t.read_batch(&mut b).unwrap() > 0 {
        for step in b.steps() {
            match step {
                Step::Call(_) => calls += 1,
                Step::Accesses(range, _) => {
                    for j in range.filter(|&j| b.kinds[j] == AccessKind::Instr) {
                        all += 1;
                        here += u64::from(b.addrs[j] == at);
                    }
                }
            }
        }
    }
    (all, here, calls)
}

/// Cachegrind's I refs with chasing off, run as a user runs it in the environment `record`
/// leaves the program (the tool removes cachescope's variables from it).
fn cachegrind_irefs(dir: &Path, exe: &Path) -> u64 {
    let out = dir.join("cg.out");
    let run = std::process::Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=no",
            "--vex-guest-chase=no",
        ])
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(exe)
        .env_clear()
        .envs(std::env::vars().filter(|(k, _)| !k.starts_with("CACHESCOPE_")))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    cachegrind_summary(&out)[0]
}

#[test]
fn every_recorded_fetch_ran_with_and_without_call_events() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Static: no dynamic loader, whose start-up depends on the environment Valgrind is given.
    let exe = compile_c(
        dir.path(),
        "fetches",
        PROGRAM,
        &["-O1", "-foptimize-sibling-calls", "-static"],
    );
    let want = cachegrind_irefs(dir.path(), &exe);
    assert!(want > 100_000, "a suspiciously short run: {want}");
    for (mode, flags) in [
        (
            "call events",
            &["-q", "--backend", "tool", "--no-events"][..],
        ),
        (
            "--no-calls",
            &["-q", "--backend", "tool", "--no-events", "--no-calls"],
        ),
    ] {
        let trace = dir.path().join("f.cst");
        let (stdout, _) = common::record_ok(flags, &trace, &[&exe]);
        let arm = stdout
            .split_whitespace()
            .nth(1)
            .expect("the program prints cs_arm");
        let arm = u64::from_str_radix(arm.trim_start_matches("0x"), 16).unwrap();
        let (all, here, calls) = fetches(&trace, arm);
        assert_eq!(here, N / 7, "{mode}: fetches of the merged instruction");
        assert_eq!(
            calls > 0,
            mode == "call events",
            "{mode}: {calls} call events"
        );
        // As in tests/flags.rs: Valgrind's LD_PRELOAD names each tool's directory and the C
        // library's start-up reads every variable, so start-ups may differ by a few dozen.
        let tolerance = 50 + want / 10_000;
        assert!(
            all.abs_diff(want) <= tolerance,
            "{mode}: {all} fetches, Cachegrind {want} (tolerance {tolerance}), {}",
            bin().display()
        );
    }
}
