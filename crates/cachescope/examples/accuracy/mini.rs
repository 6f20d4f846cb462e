//! Miniature simulation (Waldspurger et al., ATC 2017) against full per-size simulation:
//! LRU, FIFO, SRRIP and DRRIP, 8-way caches of 32 KiB to 8 MiB, sampling rate 0.01.

use std::fmt::Write as _;
use std::time::Instant;

use cachescope::LineSize;
use cachescope::method::DEFAULT_MINI_MIN_SETS;
use cachescope::mini::MiniSim;
use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::{Mrc, Options};
use cachescope::sim::Policy;
use cachescope::stats::StatsAnalysis;

use crate::common::{Input, human};

const WAYS: u32 = 8;
const RATE: f64 = 0.01;
const SIZES: [u64; 9] = [
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    8 << 20,
];
const POLICIES: [(&str, Policy); 4] = [
    ("LRU", Policy::Lru),
    ("FIFO", Policy::Fifo),
    ("SRRIP", Policy::Srrip),
    ("DRRIP", Policy::Drrip { seed: 1 }),
];

/// Mean and max absolute difference of the miss ratio (cold misses included), percentage
/// points.
fn err(mini: &Mrc, exact: &Mrc) -> (f64, f64) {
    let d: Vec<f64> = mini
        .points
        .iter()
        .zip(&exact.points)
        .map(|(a, b)| 100.0 * (a.miss_ratio.unwrap_or(0.0) - b.miss_ratio.unwrap_or(0.0)).abs())
        .collect();
    (
        d.iter().sum::<f64>() / d.len() as f64,
        d.iter().copied().fold(0.0, f64::max),
    )
}

/// The share of its sets a miniature keeps at `size_bytes` with the set floor: the rate's,
/// raised to `min_sets` sets and rounded to a power of two, never above 1 (the rule of
/// `MiniSim::with_min_sets`, restated here to print it).
fn floor_scale(size_bytes: u64, min_sets: u64) -> f64 {
    let sets = size_bytes / 64 / u64::from(WAYS);
    let want = (sets as f64 * RATE).max(min_sets.max(1) as f64);
    let mini = (1u64 << want.log2().round() as u32).min(sets);
    mini as f64 / sets as f64
}

/// `1/128`, `1/2`, `whole`.
fn share(scale: f64) -> String {
    if scale >= 1.0 {
        "whole".into()
    } else {
        format!("1/{:.0}", 1.0 / scale)
    }
}

/// One policy's curves: exact, miniature with the default set floor (adjusted, and the plain
/// ratio), miniature without it; the seconds of the exact and the default miniature passes;
/// the data references.
fn curves(input: &Input, policy: Policy) -> ([Mrc; 4], f64, f64, u64) {
    let run = |rate, min_sets| {
        let mut sim = MiniSim::with_min_sets(
            Options::default(),
            policy,
            Some(WAYS),
            &SIZES,
            rate,
            min_sets,
        )
        .expect("valid geometry");
        let mut stats = StatsAnalysis::new(LineSize::default());
        let t = Instant::now();
        Pass::new(1)
            .run(&mut input.open(), Analyses(&mut [&mut sim, &mut stats]))
            .expect("trace reads");
        let secs = t.elapsed().as_secs_f64();
        (
            sim.finish(),
            sim.unadjusted().finish(),
            secs,
            stats.finish().refs,
        )
    };
    let (exact, _, exact_secs, refs) = run(1.0, 1);
    let (mini, plain, mini_secs, _) = run(RATE, DEFAULT_MINI_MIN_SETS);
    let (bare, _, _, _) = run(RATE, 1);
    ([exact, mini, plain, bare], exact_secs, mini_secs, refs)
}

pub fn table(inputs: &[Input]) -> String {
    let mut o = format!(
        "# Miniature simulation accuracy\n\n\
         `mrc --method mini --policy P --ways {WAYS} --mini-rate {RATE}` against `--method exact` \
         (one full simulation per size) for {WAYS}-way caches of 32 KiB to 8 MiB, 64-byte \
         lines. Miniature simulation (Waldspurger et al., USENIX ATC 2017) keeps the lines \
         whose hash falls under the rate and simulates caches with the number of sets scaled \
         by it, but never fewer than `--mini-min-sets` (default {DEFAULT_MINI_MIN_SETS}; a cache \
         with no more sets is simulated whole): a miniature of one or two sets is a different \
         cache, and small caches are cheap to simulate anyway. Absolute error of the miss ratio \
         (cold misses included) in percentage points, mean (max) over the nine sizes. Each \
         estimate is a miniature's misses over the references its rate should keep (SHARDS's \
         adjustment); the last rows are the means of the plain ratio, misses over the \
         references kept (`--mini-unadjusted`, the published method), and without the floor \
         (`--mini-min-sets 1`, Waldspurger's plain scaling). \
         Times: the passes of all nine sizes (exact, and miniature with the floor), one \
         thread, the trace decoded each time.\n\n\
         | trace | kind | data refs | LRU | FIFO | SRRIP | DRRIP | exact | mini | speed-up |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    let mut sums = [0.0f64; 4];
    let mut bare_sums = [0.0f64; 4];
    let (mut bare_real, mut floor_real) = (Vec::new(), Vec::new());
    let (mut plain_sums, mut plain_real_sums) = ([0.0f64; 4], [0.0f64; 4]);
    let (mut real_sums, mut real_n) = ([0.0f64; 4], 0.0);
    let mut n = 0.0;
    for input in inputs {
        eprintln!("accuracy mini: {}", input.name);
        let mut cells = Vec::new();
        let (mut exact_secs, mut mini_secs, mut refs) = (0.0, 0.0, 0);
        for (i, (_, policy)) in POLICIES.iter().enumerate() {
            let ([exact, mini, plain, bare], e, m, r) = curves(input, *policy);
            let (mean, max) = err(&mini, &exact);
            let plain = err(&plain, &exact).0;
            sums[i] += mean;
            plain_sums[i] += plain;
            if input.kind == "real" {
                real_sums[i] += mean;
                plain_real_sums[i] += plain;
            }
            let bare = err(&bare, &exact);
            bare_sums[i] += bare.0;
            if input.kind == "real" {
                bare_real.push(bare);
                floor_real.push((mean, max));
            }
            cells.push(format!("{mean:.2} ({max:.2})"));
            exact_secs += e;
            mini_secs += m;
            refs = r;
        }
        n += 1.0;
        if input.kind == "real" {
            real_n += 1.0;
        }
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.2} s | {:.2} s | {:.1}x |",
            input.name,
            input.kind,
            human(refs as f64),
            cells.join(" | "),
            exact_secs,
            mini_secs,
            exact_secs / mini_secs
        );
    }
    let mut mean_row = |label: &str, sums: [f64; 4], n: f64| {
        if n > 0.0 {
            let cells = sums.map(|s| format!("{:.2}", s / n)).join(" | ");
            let _ = writeln!(o, "| {label} | | | {cells} | | | |");
        }
    };
    mean_row("**mean**", sums, n);
    mean_row("**mean, real programs**", real_sums, real_n);
    mean_row("mean, `--mini-unadjusted`", plain_sums, n);
    mean_row(
        "mean, `--mini-unadjusted`, real programs",
        plain_real_sums,
        real_n,
    );
    mean_row("mean, `--mini-min-sets 1`", bare_sums, n);
    let scales: Vec<String> = SIZES
        .iter()
        .map(|&s| {
            format!(
                "{} KiB {}",
                s >> 10,
                share(floor_scale(s, DEFAULT_MINI_MIN_SETS))
            )
        })
        .collect();
    let summary = |v: &[(f64, f64)]| {
        let mean = v.iter().map(|x| x.0).sum::<f64>() / v.len().max(1) as f64;
        let worst = v.iter().map(|x| x.1).fold(0.0, f64::max);
        format!("mean {mean:.2} pp, worst point {worst:.2} pp")
    };
    let _ = writeln!(
        o,
        "\nWith the floor of {DEFAULT_MINI_MIN_SETS} sets no size samples at the rate of \
         {RATE}: the share of each cache's sets a miniature keeps is {}. Over the real \
         programs and every policy: with the floor (the default), {}; at the rate itself \
         (`--mini-min-sets 1`), {}.",
        scales.join(", "),
        summary(&floor_real),
        summary(&bare_real),
    );
    let names: Vec<&str> = POLICIES.iter().map(|(n, _)| *n).collect();
    let _ = writeln!(
        o,
        "\nPolicies: {}. The exact column is what `--method exact` costs for these nine sizes; \
         the miniature's time is mostly decoding the trace, which both pay, and simulating the \
         caches of 64 sets or fewer whole (32 KiB here), so the speed-up is modest for nine \
         sizes; it grows with the number of sizes and policies simulated.",
        names.join(", ")
    );
    o
}
