//! Co-run prediction (HOTL §4.5) against the exact simulation of interleaved traces, and the
//! simulation's own behaviour.

use std::sync::Arc;

use cachescope::analysis::Analysis;
use cachescope::models::hotl::corun::{self, CorunProgram};
use cachescope::models::hotl::{FootprintAnalysis, FootprintCurve};
use cachescope::reuse::Options;
use cachescope::sim::Geometry;
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, AccessKind, Batch, Result};

mod common;

/// A trace in memory, data references only.
#[derive(Clone)]
struct Mem {
    batches: Arc<Vec<Batch>>,
    next: usize,
    /// References left to give (a prefix).
    left: u64,
}

impl Mem {
    fn new(batches: Vec<Batch>) -> Mem {
        Mem {
            batches: Arc::new(batches),
            next: 0,
            left: u64::MAX,
        }
    }

    fn prefix(&self, refs: u64) -> Mem {
        Mem {
            batches: self.batches.clone(),
            next: 0,
            left: refs,
        }
    }

    fn len(&self) -> u64 {
        self.batches.iter().map(|b| b.len() as u64).sum()
    }
}

impl AccessReader for Mem {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        if let Some(b) = self.batches.get(self.next) {
            self.next += 1;
            let k = (b.len() as u64).min(self.left) as usize;
            batch.extend((0..k).map(|i| b.get(i)));
            self.left -= k as u64;
        }
        Ok(batch.len())
    }
}

/// The data references of `r`, in batches.
fn load(mut r: impl AccessReader) -> Mem {
    let mut out = Vec::new();
    let mut b = Batch::new();
    while r.read_batch(&mut b).unwrap() > 0 {
        let data: Batch = b.iter().filter(|a| a.kind != AccessKind::Instr).collect();
        out.push(data);
    }
    Mem::new(out)
}

fn profile(mut trace: Mem, rate: f64) -> CorunProgram {
    let mut a = FootprintAnalysis::new(Options::default(), &[]).unwrap();
    let mut b = Batch::new();
    while trace.read_batch(&mut b).unwrap() > 0 {
        a.observe(&b);
    }
    CorunProgram {
        footprint: FootprintCurve::from_footprint(&a.finish(), 256).unwrap(),
        rate,
    }
}

fn lines(seq: impl IntoIterator<Item = u64>) -> Mem {
    let v: Vec<Access> = seq.into_iter().map(|l| Access::load(l * 64, 8)).collect();
    Mem::new(
        v.chunks(1 << 16)
            .map(|c| c.iter().copied().collect())
            .collect(),
    )
}

#[test]
fn two_loops_share_a_cache() {
    // Two loops of 100 lines each, interleaved one for one: together they cycle over 200
    // lines, so a 150-line LRU cache misses every reference and a 256-line one only the 200
    // cold ones. The prediction agrees: shares of 75 lines each, or the whole footprint.
    let a = lines((0..20_000).map(|i| i % 100));
    let b = lines((0..20_000).map(|i| 1000 + i % 100));
    let programs = [profile(a.clone(), 1.0), profile(b.clone(), 1.0)];
    for (lines, want_warm) in [(150u64, 1.0 - 100.0 / 20_000.0), (256, 0.0)] {
        let g = Geometry::fully_associative(lines * 64, 64).unwrap();
        let sim = corun::simulate(
            &mut [a.clone(), b.clone()],
            &[1.0, 1.0],
            g,
            Options::default(),
        )
        .unwrap();
        let pred = corun::predict(&programs, g).unwrap();
        for (s, p) in sim.iter().zip(&pred) {
            assert_eq!(s.refs, 20_000);
            assert_eq!(s.cold_misses, 100);
            assert!((s.miss_ratio_warm() - want_warm).abs() < 1e-12);
            assert!(
                (p.miss_ratio.unwrap() - s.miss_ratio()).abs() < 1e-9,
                "{p:?} {s:?}"
            );
            let share = if lines == 150 { 75.0 } else { 100.0 };
            assert!((p.share_lines - share).abs() < 1e-6);
        }
        assert!(sim.iter().any(|s| s.ended));
    }
}

#[test]
fn simulation_interleaves_by_rate_and_stops_at_the_first_end() {
    let a = lines(0..5000);
    let b = lines(10_000..11_000);
    let g = Geometry::new(64 * 64, 4, 64).unwrap();
    let sim = corun::simulate(
        &mut [a.clone(), b.clone()],
        &[3.0, 1.0],
        g,
        Options::default(),
    )
    .unwrap();
    // Three of a's references for each of b's (a a b a, a a b a, …): b's 1001st turn, which
    // finds its trace over, comes after a's 3002nd reference.
    assert_eq!((sim[0].refs, sim[1].refs), (3002, 1000));
    assert!(sim[1].ended && !sim[0].ended);
    let sim = corun::simulate(
        &mut [a.clone(), b.clone()],
        &[1.0, 1.0],
        g,
        Options::default(),
    )
    .unwrap();
    assert_eq!((sim[0].refs, sim[1].refs), (1001, 1000)); // a b a b … a, then b ends
    // Streams never reuse: every reference misses, and every miss is cold.
    assert!(
        sim.iter()
            .all(|s| s.misses == s.refs && s.cold_misses == s.refs)
    );
    let o = Options::default();
    assert!(corun::simulate(&mut [a.clone()], &[1.0, 2.0], g, o).is_err());
    assert!(corun::simulate(&mut [a.clone(), b.clone()], &[1.0, 0.0], g, o).is_err());
    assert!(corun::simulate(&mut [lines([1u64 << 57])], &[1.0], g, o).is_err());
    let g128 = Geometry::new(64 * 128, 4, 128).unwrap();
    assert!(corun::simulate(&mut [a.clone()], &[1.0], g128, o).is_err());
    let p = profile(a, 1.0);
    assert!(corun::predict(&[], g).is_err());
    assert!(
        corun::predict(
            &[CorunProgram {
                rate: -1.0,
                ..p.clone()
            }],
            g
        )
        .is_err()
    );
    assert!(corun::predict(&[p], g128).is_err());
}

/// Records `program` under Valgrind lackey into `dir` and loads its data references; `None`
/// when Valgrind is missing.
fn record(dir: &std::path::Path, name: &str, program: &[&str]) -> Option<Mem> {
    let log = dir.join(format!("{name}.lackey"));
    if !common::record_lackey(&log, program, Some(dir)) {
        return None;
    }
    let m = load(common::lackey_reader(&log));
    std::fs::remove_file(&log).unwrap();
    Some(m)
}

fn synthetic(w: Workload, p: Params) -> Mem {
    load(generator(w, &p).unwrap())
}

/// Every pair of the workloads, equal rates, in a fully associative and an 8-way cache of
/// about half their combined footprint: each program's predicted miss ratio against the
/// simulation of the part of it that ran (the profiles are of exactly those parts).
#[test]
fn prediction_against_simulation_for_every_pair() {
    let mut traces = vec![
        (
            "zipf",
            synthetic(
                Workload::Zipf,
                Params {
                    lines: 30_000,
                    refs: Some(1_500_000),
                    ..Params::default()
                },
            ),
        ),
        (
            "random",
            synthetic(
                Workload::Random,
                Params {
                    lines: 8_000,
                    refs: Some(1_500_000),
                    seed: 3,
                    ..Params::default()
                },
            ),
        ),
        (
            "matmul-tiled",
            synthetic(
                Workload::MatmulTiled,
                Params {
                    n: 80,
                    tile: 20,
                    ..Params::default()
                },
            ),
        ),
        (
            "stencil",
            synthetic(
                Workload::Stencil,
                Params {
                    n: 40,
                    ..Params::default()
                },
            ),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    common::write_numbers(dir.path());
    let real: [(&str, &[&str]); 2] = [
        ("sort", &["sort", "-n", "numbers.txt"]),
        ("awk", &["awk", "{s += $1} END {print s}", "numbers.txt"]),
    ];
    for (name, program) in real {
        match record(dir.path(), name, program) {
            Some(m) => traces.push((name, m)),
            // Skipped, saying so (a failure where Valgrind is required).
            None => break,
        }
    }
    // Relative and absolute errors, fully associative [0] and 8-way [1].
    let mut rel = [Vec::new(), Vec::new()];
    let mut abs = [Vec::new(), Vec::new()];
    for i in 0..traces.len() {
        for j in i + 1..traces.len() {
            let (a, b) = (&traces[i].1, &traces[j].1);
            let lines = ((a.len().min(b.len())) / 200).clamp(1 << 9, 1 << 15);
            let sets = (lines / 8).next_power_of_two();
            for g in [
                Geometry::fully_associative(sets * 8 * 64, 64).unwrap(),
                Geometry::new(sets * 8 * 64, 8, 64).unwrap(),
            ] {
                let sim = corun::simulate(
                    &mut [a.clone(), b.clone()],
                    &[1.0, 1.0],
                    g,
                    Options::default(),
                )
                .unwrap();
                let programs = [
                    profile(a.prefix(sim[0].refs), 1.0),
                    profile(b.prefix(sim[1].refs), 1.0),
                ];
                let pred = corun::predict(&programs, g).unwrap();
                for (k, (s, p)) in sim.iter().zip(&pred).enumerate() {
                    let (want, got) = (s.miss_ratio(), p.miss_ratio.unwrap());
                    let name = traces[if k == 0 { i } else { j }].0;
                    let other = traces[if k == 0 { j } else { i }].0;
                    println!(
                        "{name:>12} with {other:<12} {:>6} sets × {:>5} ways: simulated {want:.4}, predicted {got:.4} (share {:.0} lines)",
                        g.sets(),
                        g.assoc(),
                        p.share_lines
                    );
                    let kind = usize::from(g.sets() > 1);
                    abs[kind].push((got - want).abs());
                    rel[kind].push((got - want).abs() / want);
                }
            }
        }
    }
    assert!(traces.len() >= 4);
    for (kind, bound) in [(0, 0.05), (1, 0.05)] {
        let (rel, abs) = (&mut rel[kind], &mut abs[kind]);
        rel.sort_by(f64::total_cmp);
        abs.sort_by(f64::total_cmp);
        let (median, worst) = (rel[rel.len() / 2], rel[rel.len() - 1]);
        println!(
            "{} {} predictions: relative error median {median:.4}, worst {worst:.3}; \
             absolute error median {:.5}, worst {:.4}",
            rel.len(),
            ["fully associative", "8-way"][kind],
            abs[abs.len() / 2],
            abs[abs.len() - 1]
        );
        assert!(median < bound, "median relative error {median}");
    }
}
