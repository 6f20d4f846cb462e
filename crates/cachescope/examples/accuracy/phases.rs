//! Every phase-classification method's PoEC (and the SimPoint-style estimate) on every trace,
//! with two L2 geometries: the paper's ranking, measured.

use std::fmt::Write as _;

use cachescope::phases::{KChoice, PhaseAnalysis, PhaseOptions, PhaseReport, poec_table};
use cachescope::sim::Geometry;

use crate::common::{self, Input};

fn analyse(input: &Input, options: PhaseOptions) -> PhaseReport {
    let mut a = PhaseAnalysis::new(options).expect("valid options");
    common::run(input, &mut [&mut a]);
    let mut r = a.finish().expect("intervals");
    let mut sim = r.representative_simulation().expect("representatives");
    common::run(input, &mut [&mut sim]);
    r.apply_representatives(&sim.finish()).expect("same trace");
    r
}

pub fn table(inputs: &[Input]) -> String {
    let mut o = String::from(
        "# Phase classification: PoEC of every method\n\n\
         Real programs recorded with `cachescope record` (scripts/real-traces.sh with \
         `RECORDER=cachescope`). Intervals of 1 M instructions (real traces; 65 536 data \
         references for the synthetic \
         workloads, which have no instruction fetches), k = 2 (the paper's good and bad \
         intervals) and, with the 1 MiB L2, k = 3 (`planted`: examples/phases/planted.c, three \
         planted phases), ground truth the interval's hit rate in an exact LRU L2 fed every data \
         reference, warm across intervals. PoEC as docs/definitions.md reads it: 1 = the \
         phases match the hit-rate classes, 0 = chance; `–` = undefined (one class). The last \
         row is each method's mean.\n",
    );
    for (l2, k) in [("1M,16,64", 2), ("64K,8,64", 2), ("1M,16,64", 3)] {
        let mut reports = Vec::new();
        for input in inputs {
            eprintln!("accuracy phases: {} (L2 {l2}, k = {k})", input.name);
            let interval = if input.kind == "real" {
                1_000_000
            } else {
                65_536
            };
            let options = PhaseOptions {
                interval,
                k: KChoice::Fixed(k),
                l2: Geometry::parse(l2).expect("valid"),
                ..PhaseOptions::default()
            };
            reports.push((input.name.clone(), analyse(input, options)));
        }
        let _ = write!(o, "\n## L2 {l2}, k = {k}\n");
        for (kind, title) in [
            ("real", "Real programs"),
            ("synthetic", "Synthetic workloads"),
        ] {
            let rows: Vec<(&str, &PhaseReport)> = reports
                .iter()
                .zip(inputs)
                .filter(|(_, i)| i.kind == kind)
                .map(|((n, r), _)| (n.as_str(), r))
                .collect();
            if !rows.is_empty() {
                let _ = write!(o, "\n{title}:\n\n{}", poec_table(&rows));
            }
            if kind == "real" && !rows.is_empty() {
                let _ = writeln!(o, "\n{}", ranking(&rows));
            }
        }
        // Cost per data reference of each method's signature and clustering, averaged over
        // the traces (measured inside the one shared pass, so the shared decode is not in it).
        let _ = write!(
            o,
            "\nCost per data reference, mean over the traces (signature: its share of the one \
             pass; clustering: k-means with 10 restarts):\n\n| method | signature ns/ref | \
             clustering ns/ref |\n|---|---:|---:|\n"
        );
        if let Some((_, first)) = reports.first() {
            for m in &first.methods {
                let (mut sig, mut clu) = (0.0, 0.0);
                for (_, r) in &reports {
                    if let Some(x) = r.methods.iter().find(|x| x.name == m.name) {
                        sig += x.signature_ns_per_ref;
                        clu += x.clustering_ns_per_ref;
                    }
                }
                let n = reports.len() as f64;
                let _ = writeln!(o, "| {} | {:.2} | {:.3} |", m.name, sig / n, clu / n);
            }
            let gt: f64 = reports
                .iter()
                .map(|(_, r)| r.ground_truth_ns_per_ref)
                .sum::<f64>()
                / reports.len() as f64;
            let _ = writeln!(o, "| (ground truth: exact L2) | {gt:.2} | – |");
        }
        // Representative-interval simulation of the best method per trace.
        let _ = write!(
            o,
            "\nSimPoint-style estimate with setvector phases (one representative interval per \
             phase after one warm-up interval): L2 miss ratio, estimated vs actual.\n\n\
             | trace | intervals | actual | estimated | error (pp) | speed-up (intervals) |\n\
             |---|---:|---:|---:|---:|---:|\n"
        );
        for (name, r) in &reports {
            if let Some(sp) = r
                .methods
                .iter()
                .find(|m| m.name == "setvector")
                .and_then(|m| m.simpoint.as_ref())
            {
                let _ = writeln!(
                    o,
                    "| {name} | {} | {:.4} | {:.4} | {:+.3} | {:.1}x |",
                    r.intervals.len(),
                    sp.actual_miss_ratio,
                    sp.miss_ratio,
                    100.0 * sp.error,
                    sp.speedup
                );
            }
        }
    }
    o
}

/// The methods ranked by mean PoEC over `rows`, and whether setvectors come first (the paper's
/// claim).
fn ranking(rows: &[(&str, &PhaseReport)]) -> String {
    let mut means: Vec<(&str, f64)> = Vec::new();
    for m in &rows[0].1.methods {
        let v: Vec<f64> = rows
            .iter()
            .filter_map(|(_, r)| {
                r.methods
                    .iter()
                    .find(|x| x.name == m.name)
                    .and_then(|x| x.poec)
            })
            .collect();
        if !v.is_empty() {
            means.push((m.name, v.iter().sum::<f64>() / v.len() as f64));
        }
    }
    means.sort_by(|a, b| b.1.total_cmp(&a.1));
    let list: Vec<String> = means.iter().map(|(n, p)| format!("{n} {p:.3}")).collect();
    let verdict = match means.first() {
        Some((n, _)) if n.starts_with("setvector") => {
            "the paper's ranking holds: setvectors first".to_string()
        }
        Some((n, _)) => format!("the paper's ranking does not hold here: {n} first"),
        None => String::new(),
    };
    format!(
        "Ranking on the real programs by mean PoEC: {}; {verdict}.",
        list.join(", ")
    )
}
