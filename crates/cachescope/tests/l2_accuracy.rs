//! Accuracy of the L2 model against the exact two-level simulation: L1 = 32 KiB (512 lines of
//! 64 bytes, fully-associative LRU), L2 = 128K … 2M fully associative, LRU and random.
//!
//! Both tables (synthetic workloads; real lackey traces `/tmp/rt/*.lackey.zst`, skipped when
//! absent) are printed by
//! `cargo test --release -p cachescope --test l2_accuracy -- --ignored --nocapture`; the
//! error bounds that run by default are in `tests/l2_model.rs`.

use std::path::Path;
use std::time::Instant;

use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sim::Policy;
use cachescope::trace::{self, AccessReader, OpenOptions};
use cachescope::workloads::{Params, Workload, generator};

const L1_LINES: u64 = 512;
const L2_SIZES: [u64; 5] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20];

/// Absolute errors of each variant (rows) at each L2 size, for one policy.
struct Errors {
    policy: &'static str,
    /// Per variant: |model − sim| of `miss_ratio` (cold included) per size.
    by_variant: Vec<Vec<f64>>,
    sim: Vec<f64>,
    model_secs: f64,
}

struct Run {
    name: String,
    l1_miss_ratio: f64,
    sim_secs: f64,
    sd_secs: f64,
    errors: Vec<Errors>,
}

fn evaluate(name: &str, mut feed: impl FnMut(&mut [&mut dyn Analysis])) -> Run {
    let mut sd = StackDistanceAnalysis::new(Options::default());
    let t = Instant::now();
    feed(&mut [&mut sd]);
    let sd_secs = t.elapsed().as_secs_f64();
    let mut lru = TwoLevelAnalysis::new(64, L1_LINES, &L2_SIZES, Policy::Lru).unwrap();
    let mut rnd =
        TwoLevelAnalysis::new(64, L1_LINES, &L2_SIZES, Policy::Random { seed: 7 }).unwrap();
    let t = Instant::now();
    feed(&mut [&mut lru, &mut rnd]);
    let sim_secs = t.elapsed().as_secs_f64();
    let h = L1Histogram::from_stack_distances(&sd.finish());
    let mut errors = Vec::new();
    let mut l1_miss_ratio = 0.0;
    for (policy, sim) in [("lru", lru.finish()), ("random", rnd.finish())] {
        l1_miss_ratio = sim.l1_misses as f64 / sim.refs.max(1) as f64;
        let truth: Vec<f64> = sim
            .mrc()
            .points
            .iter()
            .map(|p| p.miss_ratio.unwrap())
            .collect();
        let p = if policy == "lru" {
            Policy::Lru
        } else {
            Policy::Random { seed: 7 }
        };
        let t = Instant::now();
        let by_variant = Variant::ALL
            .iter()
            .map(|&v| {
                let m = l2_mrc(&h, L1_LINES, &L2_SIZES, p, v).unwrap();
                m.points
                    .iter()
                    .zip(&truth)
                    .map(|(p, t)| (p.miss_ratio.unwrap() - t).abs())
                    .collect()
            })
            .collect();
        let model_secs = t.elapsed().as_secs_f64() / Variant::ALL.len() as f64;
        errors.push(Errors {
            policy,
            by_variant,
            sim: truth,
            model_secs,
        });
    }
    Run {
        name: name.into(),
        l1_miss_ratio,
        sim_secs,
        sd_secs,
        errors,
    }
}

fn workload_run(w: Workload, p: &Params) -> Run {
    let name = format!("{}", w);
    evaluate(&name, |analyses| {
        let mut g = generator(w, p).unwrap();
        let mut batch = cachescope::Batch::new();
        while g.read_batch(&mut batch).unwrap() > 0 {
            for a in analyses.iter_mut() {
                a.observe(&batch);
            }
        }
    })
}

fn trace_run(path: &Path) -> Run {
    let name = path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".lackey.zst", "");
    evaluate(&name, |analyses| {
        let mut t = trace::open(path, &OpenOptions::default()).unwrap();
        Pass::new(2).run(&mut t, Analyses(analyses)).unwrap();
    })
}

fn print(runs: &[Run]) {
    println!(
        "| workload | L1 mr | policy | variant | {} | mean | model ms | sim s | sd s |",
        L2_SIZES.map(|s| format!("{}K", s >> 10)).join(" | ")
    );
    println!(
        "|---|---|---|---|{}---|---|---|---|",
        "---|".repeat(L2_SIZES.len())
    );
    for r in runs {
        for e in &r.errors {
            println!(
                "| {} | {:.3} | {} | sim | {} | | | {:.2} | {:.2} |",
                r.name,
                r.l1_miss_ratio,
                e.policy,
                e.sim
                    .iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                r.sim_secs,
                r.sd_secs,
            );
            for (v, errs) in Variant::ALL.iter().zip(&e.by_variant) {
                let mean = errs.iter().sum::<f64>() / errs.len() as f64;
                println!(
                    "| {} | | {} | {} | {} | {:.3} | {:.1} | | |",
                    r.name,
                    e.policy,
                    v.method(),
                    errs.iter()
                        .map(|x| format!("{x:.3}"))
                        .collect::<Vec<_>>()
                        .join(" | "),
                    mean,
                    e.model_secs * 1e3
                );
            }
        }
    }
    for e in 0..2 {
        for (i, v) in Variant::ALL.iter().enumerate() {
            let all: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.errors[e].by_variant[i].clone())
                .collect();
            println!(
                "average |error| {} {}: {:.4}",
                runs[0].errors[e].policy,
                v.method(),
                all.iter().sum::<f64>() / all.len() as f64
            );
        }
    }
}

fn synthetic() -> Vec<Run> {
    let base = Params::default();
    vec![
        workload_run(
            Workload::Random,
            &Params {
                lines: 16384,
                refs: Some(2_000_000),
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Zipf,
            &Params {
                lines: 65536,
                refs: Some(2_000_000),
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Zipf,
            &Params {
                lines: 65536,
                zipf_s: 0.8,
                refs: Some(2_000_000),
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Loop,
            &Params {
                lines: 3000,
                refs: Some(600_000),
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Matmul,
            &Params {
                n: 96,
                ..base.clone()
            },
        ),
        workload_run(
            Workload::MatmulTiled,
            &Params {
                n: 96,
                tile: 16,
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Stencil,
            &Params {
                n: 48,
                ..base.clone()
            },
        ),
        workload_run(
            Workload::Phases,
            &Params {
                lines: 8192,
                ..base.clone()
            },
        ),
    ]
}

#[test]
#[ignore]
fn table_synthetic() {
    print(&synthetic());
}

#[test]
#[ignore]
fn table_real() {
    let mut runs = Vec::new();
    for name in ["gzip", "sort", "awk", "mm", "hash"] {
        let p = format!("/tmp/rt/{name}.lackey.zst");
        if Path::new(&p).exists() {
            runs.push(trace_run(Path::new(&p)));
        }
    }
    if !runs.is_empty() {
        print(&runs);
    }
}
