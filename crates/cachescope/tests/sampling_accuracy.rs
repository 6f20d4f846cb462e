//! Accuracy of the sampled models against the exact curves on the built-in workloads, with
//! about 10 000 samples per trace: StatCache against one seeded fully-associative
//! random-replacement simulation (cold misses excluded on both sides), StatStack against the
//! exact LRU curve, over the default working-set sweep (every eighth of an octave from 1 KiB
//! to 1 GiB). Errors are absolute, in percentage points.
//!
//! `quick_accuracy` runs with the suite. The full table (five workloads, five seeds, three
//! slot lengths) is `accuracy_table`:
//! `cargo test --release -p cachescope --test sampling_accuracy -- --ignored --nocapture`.

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::models::{statcache, statstack};
use cachescope::reuse::{Mrc, Options, RandomReplacementAnalysis, StackDistanceAnalysis};
use cachescope::sampling::{Cold, Profile, Sampler, SamplerOptions, working_set_sizes};
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};

/// Exact and sampled results of one workload.
struct Run {
    name: String,
    refs: u64,
    footprint_lines: u64,
    sizes: Vec<u64>,
    random: Mrc,
    lru: Mrc,
    profiles: Vec<Profile>,
}

/// One pass over `w`: the exact random and LRU curves at `sizes`, and one profile per seed at
/// the rate that gives about `samples` samples.
fn run(w: Workload, params: &Params, sizes: &[u64], seeds: &[u64], samples: f64) -> Run {
    let mut g = generator(w, params).unwrap();
    let refs = g.data_refs();
    let rate = (samples / refs as f64).min(1.0);
    let options = Options::default();
    let mut random = RandomReplacementAnalysis::new(options, sizes, 1);
    let mut lru = StackDistanceAnalysis::new(options);
    let mut samplers: Vec<Sampler> = seeds
        .iter()
        .map(|&seed| {
            Sampler::new(SamplerOptions {
                rate,
                seed,
                ..SamplerOptions::default()
            })
            .unwrap()
        })
        .collect();
    let mut batch = Batch::new();
    while g.read_batch(&mut batch).unwrap() > 0 {
        random.observe(&batch);
        lru.observe(&batch);
        for s in &mut samplers {
            s.observe(&batch);
        }
    }
    let lru = lru.finish();
    Run {
        name: w.name().into(),
        refs,
        footprint_lines: lru.cold,
        sizes: sizes.to_vec(),
        random: random.finish(),
        lru: lru.mrc(sizes),
        profiles: samplers.iter().map(Sampler::finish).collect(),
    }
}

/// The same samples, cut into slots of `slot_refs`.
fn reslot(p: &Profile, slot_refs: u64) -> Profile {
    let options = SamplerOptions {
        slot_refs,
        ..*p.options()
    };
    Profile::new(options, p.refs(), p.samples().to_vec()).unwrap()
}

/// Mean and max absolute difference, in percentage points, of `model` and `exact` over the
/// points where `keep` holds.
fn errors(
    model: impl Iterator<Item = f64>,
    exact: impl Iterator<Item = f64>,
    keep: &[bool],
) -> (f64, f64) {
    let d: Vec<f64> = model
        .zip(exact)
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|((m, x), _)| 100.0 * (m - x).abs())
        .collect();
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    (mean, d.iter().cloned().fold(0.0, f64::max))
}

fn warm(m: &Mrc) -> impl Iterator<Item = f64> + '_ {
    m.points.iter().map(|p| p.miss_ratio_warm)
}

fn all(m: &Mrc) -> impl Iterator<Item = f64> + '_ {
    m.points.iter().map(|p| p.miss_ratio.unwrap())
}

/// Errors of one profile: StatCache Exclude (warm), StatCache Estimate (warm part, and
/// with cold misses), StatStack (warm, and with cold misses), the whole-trace StatStack
/// (warm); over the whole sweep, and over the sizes up to the footprint.
fn profile_errors(r: &Run, p: &Profile) -> [[(f64, f64); 6]; 2] {
    let sc = statcache::mrc(p, &r.sizes, Cold::Exclude).unwrap();
    let se = statcache::mrc(p, &r.sizes, Cold::Estimate).unwrap();
    let ss = statstack::mrc(p, &r.sizes, Cold::Estimate).unwrap();
    let sw = statstack::mrc_whole_trace(p, &r.sizes, Cold::Exclude).unwrap();
    let everywhere = vec![true; r.sizes.len()];
    let small: Vec<bool> = r
        .sizes
        .iter()
        .map(|&s| s / 64 <= r.footprint_lines)
        .collect();
    [everywhere, small].map(|keep| {
        [
            errors(warm(&sc), warm(&r.random), &keep),
            errors(warm(&se), warm(&r.random), &keep),
            errors(all(&se), all(&r.random), &keep),
            errors(warm(&ss), warm(&r.lru), &keep),
            errors(all(&ss), all(&r.lru), &keep),
            errors(warm(&sw), warm(&r.lru), &keep),
        ]
    })
}

fn params(lines: u64, refs: Option<u64>) -> Params {
    Params {
        lines,
        refs,
        ..Params::default()
    }
}

#[test]
fn quick_accuracy() {
    // Two workloads of 400 000 references, 10 000 samples, one seed, the default slots.
    let sizes: Vec<u64> = working_set_sizes()
        .into_iter()
        .filter(|&s| s <= 1 << 20)
        .collect();
    for w in [Workload::Random, Workload::Zipf] {
        let r = run(w, &params(2048, Some(400_000)), &sizes, &[1], 10_000.0);
        let p = &r.profiles[0];
        assert!(
            (9_000..11_000).contains(&p.samples().len()),
            "{}",
            p.samples().len()
        );
        let [sweep, _] = profile_errors(&r, p);
        let names = [
            "statcache",
            "statcache-estimate-warm",
            "statcache-estimate",
            "statstack warm",
            "statstack",
            "statstack whole-trace warm",
        ];
        for (name, (mean, max)) in names.iter().zip(sweep) {
            eprintln!("{}: {name}: mean {mean:.3} pp, max {max:.3} pp", r.name);
            assert!(mean <= 1.0, "{}: {name}: mean error {mean} pp", r.name);
            assert!(max <= 5.0, "{}: {name}: max error {max} pp", r.name);
        }
    }
}

#[test]
fn statstack_follows_phases() {
    // Six phases (loop, stream, random, twice) of 786 432 references, 10 000 samples: the
    // whole-trace reuse-time distribution mixes the phases; the time-local model does not.
    let sizes: Vec<u64> = working_set_sizes()
        .into_iter()
        .filter(|&s| s <= 1 << 18)
        .collect();
    let r = run(
        Workload::Phases,
        &params(2048, None),
        &sizes,
        &[1],
        10_000.0,
    );
    let p = &r.profiles[0];
    let [_, small] = profile_errors(&r, p);
    let (local, whole) = (small[3], small[5]);
    eprintln!(
        "phases: time-local mean {:.3} max {:.3} pp, whole trace mean {:.3} max {:.3} pp",
        local.0, local.1, whole.0, whole.1
    );
    assert!(local.0 <= 1.0 && local.1 <= 3.0, "time-local: {local:?}");
    assert!(whole.0 >= 2.0, "whole trace: {whole:?}");
}

#[test]
#[ignore = "the full accuracy table; minutes in release mode"]
fn accuracy_table() {
    let sizes = working_set_sizes();
    let seeds = [1, 2, 3, 4, 5];
    let cases = [
        (Workload::Random, params(4096, Some(2_000_000))),
        (Workload::Zipf, params(4096, Some(2_000_000))),
        (Workload::Matmul, params(4096, None)),
        (
            Workload::Stencil,
            Params {
                n: 32,
                ..params(4096, None)
            },
        ),
        (Workload::Phases, params(4096, None)),
    ];
    let names = [
        "StatCache (cold excluded) vs random, warm",
        "StatCache (cold estimated), warm part vs random, warm",
        "StatCache (cold estimated) vs random, cold included",
        "StatStack vs LRU, warm",
        "StatStack (cold estimated) vs LRU, cold included",
        "StatStack, whole-trace distribution, vs LRU, warm",
    ];
    for (w, p) in cases {
        let r = run(w, &p, &sizes, &seeds, 10_000.0);
        let samples: Vec<usize> = r.profiles.iter().map(|p| p.samples().len()).collect();
        println!(
            "\n## {} ({} refs, {} lines, rate {:.2e}, samples {:?})",
            r.name,
            r.refs,
            r.footprint_lines,
            r.profiles[0].rate(),
            samples
        );
        let slotting = [
            ("default slots (200k refs)", 200_000),
            (
                "~20 samples per slot (paper's density)",
                (20.0 / r.profiles[0].rate()) as u64,
            ),
            ("one slot", r.refs),
        ];
        for (label, slot_refs) in slotting {
            let per_seed: Vec<[[(f64, f64); 6]; 2]> = r
                .profiles
                .iter()
                .map(|p| profile_errors(&r, &reslot(p, slot_refs)))
                .collect();
            println!("{label}:");
            for (i, name) in names.iter().enumerate() {
                if i >= 3 && slot_refs != 200_000 {
                    continue; // StatStack ignores slots (it finds its own stretches)
                }
                for (scope, s) in [("sweep", 0), ("≤ footprint", 1)] {
                    let means: Vec<f64> = per_seed.iter().map(|e| e[s][i].0).collect();
                    let maxes: Vec<f64> = per_seed.iter().map(|e| e[s][i].1).collect();
                    let avg = means.iter().sum::<f64>() / means.len() as f64;
                    let lo = means.iter().cloned().fold(f64::MAX, f64::min);
                    let hi = means.iter().cloned().fold(0.0, f64::max);
                    let max = maxes.iter().cloned().fold(0.0, f64::max);
                    println!(
                        "  {name:55} {scope:12} mean {avg:6.3} pp (seeds {lo:.3}–{hi:.3}), max {max:6.3} pp"
                    );
                }
            }
        }
    }
}
