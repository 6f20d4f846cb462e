//! StatCache against exact random replacement, StatStack against exact LRU, at 1k, 10k and 100k
//! samples, several seeds each.

use std::fmt::Write as _;
use std::time::Instant;

use cachescope::analysis::Analysis;
use cachescope::models::{statcache, statstack};
use cachescope::reuse::{Options, RandomReplacementAnalysis, StackDistanceAnalysis};
use cachescope::sampling::{Cold, Sampler, SamplerOptions};

use crate::common::{self, Input, Spread, error_pp, human};

/// Target sample counts.
const TARGETS: [f64; 3] = [1e3, 1e4, 1e5];
/// Seeds per target.
const SEEDS: u64 = 5;

/// One trace at about 10k samples: the means over seeds of StatCache's, StatStack's and the
/// cold-estimating StatCache's mean errors, the worst point of any seed of each model, the
/// trace's name.
type Summary = (f64, f64, f64, f64, f64, String);

pub fn table(inputs: &[Input]) -> String {
    let mut o = String::from(
        "# StatCache and StatStack accuracy\n\n\
         Absolute error of the sampled models' warm miss ratio (cold misses left out, per data \
         reference) against exact references, in percentage points, over the working-set sweep: \
         every eighth of an octave from 1 KiB up to the first power of two holding every line \
         of the trace (64-byte lines, data references, fully associative). StatStack is compared \
         with the exact LRU curve (stack distances) at every size of the sweep; StatCache with \
         the exact random-replacement simulation (the mean of 2 seeded runs) at every half \
         octave. Each cell: the mean over 5 sampling seeds of the mean (or max) error over the \
         sweep, with the range over seeds in brackets. Rates are chosen per trace to give about \
         1k, 10k and 100k samples.\n\n",
    );
    let _ = writeln!(
        o,
        "| trace | kind | data refs | lines | samples | StatCache mean | StatCache max | StatStack mean | StatStack max | StatCache, cold est. mean |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut summary: Vec<Summary> = Vec::new();
    for input in inputs {
        eprintln!("accuracy sampling: {}", input.name);
        let opts = Options::default();
        // Exact LRU at the 1/8-octave sweep, and the distinct lines that bound it.
        let mut sd = StackDistanceAnalysis::new(opts);
        common::run(input, &mut [&mut sd]);
        let distances = sd.finish();
        let refs = distances.refs;
        let lines = distances.cold;
        let sweep = common::sweep(lines, opts.line_size);
        let lru = distances.mrc(&sweep);
        let half_octaves: Vec<u64> = sweep
            .iter()
            .copied()
            .filter(|s| {
                let k = s.ilog2();
                *s == 1 << k || *s == (1 << k) + (1 << (k - 1))
            })
            .collect();
        let random = {
            let mut curves = Vec::new();
            for seed in 0..2 {
                let mut rr = RandomReplacementAnalysis::new(opts, &half_octaves, 1000 + seed);
                common::run(input, &mut [&mut rr]);
                curves.push(rr.finish());
            }
            common::average(&curves)
        };
        // Every sampler of every rate and seed in one pass.
        let mut samplers: Vec<Sampler> = Vec::new();
        for target in TARGETS {
            for seed in 1..=SEEDS {
                let rate = (target / refs as f64).min(1.0);
                samplers.push(
                    Sampler::new(SamplerOptions {
                        rate,
                        seed,
                        ..SamplerOptions::default()
                    })
                    .expect("valid rate"),
                );
            }
        }
        let t = Instant::now();
        {
            let mut refs: Vec<&mut dyn Analysis> = samplers
                .iter_mut()
                .map(|s| s as &mut dyn Analysis)
                .collect();
            common::run(input, &mut refs);
        }
        let _ = t.elapsed();
        for (ti, target) in TARGETS.iter().enumerate() {
            let (mut sc_mean, mut sc_max, mut ss_mean, mut ss_max, mut est_mean) =
                (vec![], vec![], vec![], vec![], vec![]);
            let mut samples = 0;
            for s in &samplers[ti * SEEDS as usize..(ti + 1) * SEEDS as usize] {
                let profile = s.finish();
                samples += profile.samples().len();
                let sc = statcache::mrc(&profile, &half_octaves, Cold::Exclude).expect("models");
                let (mean, max) = error_pp(&sc, &random);
                sc_mean.push(mean);
                sc_max.push(max);
                let est = statcache::mrc(&profile, &half_octaves, Cold::Estimate).expect("models");
                est_mean.push(error_pp(&est, &random).0);
                let ss = statstack::mrc(&profile, &sweep, Cold::Exclude).expect("models");
                let (mean, max) = error_pp(&ss, &lru);
                ss_mean.push(mean);
                ss_max.push(max);
            }
            let samples = samples as f64 / SEEDS as f64;
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} (target {}) | {} | {} | {} | {} | {} |",
                input.name,
                input.kind,
                human(refs as f64),
                human(lines as f64),
                human(samples),
                human(*target),
                Spread::of(&sc_mean),
                Spread::of(&sc_max),
                Spread::of(&ss_mean),
                Spread::of(&ss_max),
                Spread::of(&est_mean),
            );
            if *target == 1e4 {
                summary.push((
                    Spread::of(&sc_mean).mean,
                    Spread::of(&ss_mean).mean,
                    Spread::of(&est_mean).mean,
                    Spread::of(&sc_max).max,
                    Spread::of(&ss_max).max,
                    input.name.clone(),
                ));
            }
        }
    }
    let n = summary.len() as f64;
    let worst = |f: fn(&Summary) -> f64| {
        summary
            .iter()
            .max_by(|a, b| f(a).total_cmp(&f(b)))
            .map_or((0.0, String::new()), |s| (f(s), s.5.clone()))
    };
    let (sc_worst, sc_at) = worst(|s| s.3);
    let (ss_worst, ss_at) = worst(|s| s.4);
    let (sc_mean_worst, sc_mean_at) = worst(|s| s.0);
    let (ss_mean_worst, ss_mean_at) = worst(|s| s.1);
    let _ = writeln!(
        o,
        "\nAt about 10k samples, over the {} traces: StatCache mean absolute error {:.2} pp \
         (cold estimated: {:.2} pp), StatStack {:.2} pp (goal: at most 1 pp). The worst trace's \
         mean: StatCache {:.2} pp ({}), StatStack {:.2} pp ({}). The worst single point, any \
         seed and size: StatCache {:.2} pp ({}), StatStack {:.2} pp ({}).",
        summary.len(),
        summary.iter().map(|s| s.0).sum::<f64>() / n,
        summary.iter().map(|s| s.2).sum::<f64>() / n,
        summary.iter().map(|s| s.1).sum::<f64>() / n,
        sc_mean_worst,
        sc_mean_at,
        ss_mean_worst,
        ss_mean_at,
        sc_worst,
        sc_at,
        ss_worst,
        ss_at,
    );
    o
}
