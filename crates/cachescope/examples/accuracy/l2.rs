//! The L2 model (Ji, Ling & Liu) against the exact two-level simulation: every variant, both
//! policies, L1 32 KiB, L2 128 KiB to 2 MiB, local miss ratios.

use std::fmt::Write as _;
use std::time::Instant;

use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::reuse::{Mrc, Options, StackDistanceAnalysis};
use cachescope::sim::Policy;

use crate::common::{self, Input, human};

const L1_LINES: u64 = 512;
const L2_SIZES: [u64; 5] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20];

/// Mean and max absolute difference of `miss_ratio` (cold included), percentage points.
fn err(model: &Mrc, exact: &Mrc) -> (f64, f64) {
    let d: Vec<f64> = model
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

pub fn table(inputs: &[Input]) -> String {
    let mut o = String::from(
        "# L2 model accuracy\n\n\
         Local L2 miss ratio (L2 misses per L2 reference, i.e. per L1 miss, cold misses \
         included) predicted from the exact L1 stack-distance histogram, against an exact \
         two-level simulation of the same trace: a fully-associative LRU L1 of 32 KiB (512 \
         lines) whose misses feed fully-associative L2s of 128 KiB, 256 KiB, 512 KiB, 1 MiB \
         and 2 MiB (LRU, or random replacement). Absolute error in percentage points, mean \
         (max) over the five L2 sizes, for the paper's reading of Eqs. 3–9 (`ji-l2`), the two \
         corrected readings (`ji-l2-footprint`, `ji-l2-resident`) and, for random replacement, \
         the default `ji-l2-fills` (the resident epochs, survival over the whole distribution of \
         the evicting L2 fills; for LRU it is `ji-l2-resident`); see the `models::l2` \
         documentation. The paper reports 8 % (random) and 6.8 % (LRU) average absolute \
         error. Times: the model (all variants, both policies) against the two-level simulation \
         (both policies), neither counting the pass that builds the L1 histogram.\n\n\
         | trace | kind | data refs | LRU paper | LRU footprint | LRU resident | random paper | random footprint | random resident | random fills | model | simulation |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut sums = [0.0f64; 7];
    let mut worst = [0.0f64; 7];
    let mut n = 0.0;
    for input in inputs {
        eprintln!("accuracy l2: {}", input.name);
        let opts = Options::default();
        let mut sd = StackDistanceAnalysis::new(opts);
        common::run(input, &mut [&mut sd]);
        let distances = sd.finish();
        let hist = L1Histogram::from_stack_distances(&distances);
        let t = Instant::now();
        let mut lru = TwoLevelAnalysis::new(64, L1_LINES, &L2_SIZES, Policy::Lru).expect("valid");
        let mut rnd = TwoLevelAnalysis::new(64, L1_LINES, &L2_SIZES, Policy::Random { seed: 1 })
            .expect("valid");
        common::run(input, &mut [&mut lru, &mut rnd]);
        let sim_secs = t.elapsed().as_secs_f64();
        let exact = [lru.finish().mrc(), rnd.finish().mrc()];
        let t = Instant::now();
        let mut cells = Vec::new();
        // Fills is resident for LRU: its column would repeat.
        let runs = Variant::ALL
            .into_iter()
            .filter(|&v| v != Variant::Fills)
            .map(|v| (0, Policy::Lru, v))
            .chain(Variant::ALL.map(|v| (1, Policy::Random { seed: 1 }, v)));
        for (i, (pi, policy, variant)) in runs.enumerate() {
            let model = l2_mrc(&hist, L1_LINES, &L2_SIZES, policy, variant).expect("models");
            let (mean, max) = err(&model, &exact[pi]);
            sums[i] += mean;
            worst[i] = worst[i].max(max);
            cells.push(format!("{mean:.2} ({max:.2})"));
        }
        let model_secs = t.elapsed().as_secs_f64();
        n += 1.0;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.1} ms | {:.2} s |",
            input.name,
            input.kind,
            human(distances.refs as f64),
            cells.join(" | "),
            1e3 * model_secs,
            sim_secs
        );
    }
    let _ = writeln!(
        o,
        "| **mean** | | | {} | | |",
        sums.map(|s| format!("{:.2}", s / n)).join(" | ")
    );
    let _ = writeln!(
        o,
        "| **worst point** | | | {} | | |",
        worst.map(|w| format!("{w:.2}")).join(" | ")
    );
    o
}
