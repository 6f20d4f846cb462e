//! `CachegrindSim` against Valgrind's Cachegrind on real programs.
//!
//! When Valgrind and cc are on PATH (otherwise this skips, saying so: see cachescope-testkit),
//! each program is run twice: under lackey (`--trace-mem=yes`) to record its trace, and under
//! Cachegrind (`--cache-sim=yes`) with the same caches. The trace goes through
//! [`CachegrindSim`] and the nine totals (`Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw`) are
//! compared with the `summary:` line of Cachegrind's output file.
//!
//! The programs are a small C program (compiled with `cc`) that makes
//! straddling, read-modify-write and cache-thrashing accesses, and `sort` on a small file.
//! Instruction and data reference counts must be equal. Misses are equal in every run measured
//! (docs/cachegrind.md), but the two runs are different processes: the loader reads the 16
//! random bytes the kernel gives it (`AT_RANDOM`) and a couple of loads index a stack table with
//! them, so a miss count may in principle move by a few. Misses may differ by at most
//! 4 + 0.1%; the test prints which counts were exact.

use std::path::Path;

use cachescope::pass::{Analyses, Pass};
use cachescope::sim::{CachegrindSim, Geometry};
use cachescope::trace::{OpenOptions, open};

mod common;

/// Cachegrind's event names, in its output order.
const EVENTS: [&str; 9] = [
    "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
];

/// A program that straddles lines, modifies memory in place and thrashes a small cache.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct __attribute__((packed)) rec { char tag; long value; };
int main(void) {
    static long table[1 << 15];
    struct rec *recs = malloc(4096 * sizeof *recs);
    unsigned x = 1;
    for (int i = 0; i < 4096; i++) { recs[i].tag = (char)i; recs[i].value = i; }
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 4096; i++) {
            x = x * 1103515245u + 12345u;
            table[(x >> 8) & ((1 << 15) - 1)] += recs[i].value;  /* read-modify-write */
            recs[(i * 7) & 4095].value += round;                 /* straddles, unaligned */
        }
    char buf[256];
    memcpy(buf, (char *)recs + 3, sizeof buf);
    long s = 0;
    for (int i = 0; i < (1 << 15); i += 8) s += table[i];
    printf("%ld %d\n", s, buf[17]);
    return 0;
}
"#;

/// The totals of a Cachegrind output file, in [`EVENTS`] order.
fn cachegrind_summary(path: &Path) -> [u64; 9] {
    let text = std::fs::read_to_string(path).unwrap();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no `{name}` line in {}", path.display()))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let events = field("events:");
    let summary = field("summary:");
    EVENTS.map(|e| {
        let i = events.iter().position(|&x| x == e).expect("event present");
        summary[i].parse().expect("a count")
    })
}

/// The same totals from the lackey trace.
fn simulated(trace: &Path, caches: [&str; 3]) -> [u64; 9] {
    let [i1, d1, ll] = caches.map(|c| Geometry::parse(c).unwrap());
    let mut sim = CachegrindSim::new(i1, d1, ll).unwrap();
    let mut t = open(trace, &OpenOptions::default()).unwrap();
    Pass::new(1).run(&mut t, Analyses(&mut [&mut sim])).unwrap();
    let c = sim.finish();
    [
        c.i_refs,
        c.i1_misses,
        c.lli_misses,
        c.d_reads,
        c.d1_read_misses,
        c.lld_read_misses,
        c.d_writes,
        c.d1_write_misses,
        c.lld_write_misses,
    ]
}

#[test]
fn cachegrind_sim_reproduces_cachegrind_on_real_programs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut programs: Vec<(&str, Vec<String>)> = Vec::new();
    if !common::tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let exe = common::compile_c(d, "prog", PROGRAM, &["-O2"]);
    programs.push(("prog", vec![exe.display().to_string()]));
    let input = d.join("words.txt");
    let words: String = (0..300u64)
        .map(|i| format!("{:x}\n", i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40))
        .collect();
    std::fs::write(&input, words).unwrap();
    programs.push(("sort", vec!["sort".into(), input.display().to_string()]));

    // Two configurations: Cachegrind-like defaults, and small caches with 32-byte L1 lines
    // (more straddles, more misses at every level).
    let configs = [
        ["32K,8,64", "32K,8,64", "256K,8,64"],
        ["16K,4,32", "8K,2,32", "64K,4,64"],
    ];
    for (name, program) in &programs {
        let program: Vec<&str> = program.iter().map(String::as_str).collect();
        let log = d.join(format!("{name}.lackey"));
        assert!(common::record_lackey(&log, &program, None));
        for caches in configs {
            let out = d.join(format!("{name}.cg"));
            let out_arg = format!("--cachegrind-out-file={}", out.display());
            let [i1, d1, ll] = caches.map(|c| {
                let g = Geometry::parse(c).unwrap();
                format!("{},{},{}", g.size_bytes(), g.assoc(), g.line_size().bytes())
            });
            let args = [
                "--tool=cachegrind",
                "--cache-sim=yes",
                &out_arg,
                &format!("--I1={i1}"),
                &format!("--D1={d1}"),
                &format!("--LL={ll}"),
            ];
            assert!(common::valgrind(&args, &program, None));
            let want = cachegrind_summary(&out);
            let got = simulated(&log, caches);
            eprintln!("{name} {caches:?}\n  cachegrind {want:?}\n  simulated  {got:?}");
            assert!(want[0] > 100_000, "{name}: a suspiciously short run");
            for (i, e) in EVENTS.iter().enumerate() {
                let (w, g) = (want[i], got[i]);
                if matches!(*e, "Ir" | "Dr" | "Dw") {
                    assert_eq!(g, w, "{name} {caches:?}: {e} differs");
                } else {
                    let tolerance = 4 + w / 1000;
                    assert!(
                        g.abs_diff(w) <= tolerance,
                        "{name} {caches:?}: {e} = {g}, Cachegrind {w} (tolerance {tolerance})"
                    );
                }
            }
            eprintln!(
                "  {}",
                if got == want {
                    "exact"
                } else {
                    "within tolerance"
                }
            );
        }
    }
}
