//! `cachescope phases`: phase ids per interval, per-phase summaries, a timeline, and every
//! method's PoEC / CoV / weighted σ against the intervals' L2 hit rates.

use cachescope::units::thousands;
use std::fmt::Write as _;

use anyhow::Result;
use cachescope::phases::{IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions, PhaseReport};
use cachescope::sim::Geometry;

use super::{drive, drive_again};
use crate::args::PhasesArgs;
use crate::{input, output};

pub fn run(args: PhasesArgs) -> Result<()> {
    let options = PhaseOptions {
        interval: args.interval,
        unit: match args.unit.as_str() {
            "instructions" => IntervalUnit::Instructions,
            "data-refs" => IntervalUnit::DataRefs,
            _ => IntervalUnit::Auto,
        },
        k: KChoice::parse(&args.k)?,
        methods: Method::parse_list(&args.method)?,
        l2: Geometry::parse(&args.l2)?,
        l1: args.l1.as_deref().map(Geometry::parse).transpose()?,
        setvector_bits: args.bits,
        seed: args.input.params.seed,
        ..PhaseOptions::default()
    };
    let mut analysis = PhaseAnalysis::new(options)?;
    let mut trace = input::open_twice(&args.input, args.l2_line_size()?)?;
    drive(&mut trace, &mut [&mut analysis], &args.run)?;
    let source = trace.source().to_string();
    let mut report = analysis.finish()?;
    // The second pass needs the trace again: a file or a workload, not stdin.
    let reopenable = args
        .input
        .trace
        .as_deref()
        .is_none_or(|p| p.as_os_str() != "-");
    if !args.no_simpoint && reopenable {
        let mut reps = report.representative_simulation()?;
        let mut again = input::open(&args.input, args.l2_line_size()?)?;
        drive_again(&mut again, &mut [&mut reps], &args.run)?;
        report.apply_representatives(&reps.finish())?;
    }
    if args.json {
        return output::print(&(serde_json::to_string_pretty(&report)? + "\n"));
    }
    if args.csv {
        let v = serde_json::to_value(&report)?;
        return output::print(&output::csv_records(
            v["methods"].as_array().map_or(&[][..], Vec::as_slice),
        ));
    }
    output::print(&render(&report, &source))
}

impl PhasesArgs {
    /// The line size the trace is read at: the L2's.
    fn l2_line_size(&self) -> Result<cachescope::LineSize> {
        Ok(Geometry::parse(&self.l2)?.line_size())
    }
}

/// The table, per-phase summaries of the best method, and the timeline.
fn render(r: &PhaseReport, source: &str) -> String {
    let s = &r.settings;
    let mut o = format!(
        "# phases of {source}: {} intervals of {} {}; L2 {} {}, hit rate {:.2}% over its accesses\n",
        r.intervals.len(),
        thousands(s.interval),
        unit_name(s),
        s.l2,
        s.policy.name().to_uppercase(),
        100.0 * (1.0 - r.l2_miss_ratio)
    );
    o += "# PoEC: agreement with the L2 hit-rate classes (1 = perfect, 0 = chance); CoV and \
          weighted sigma: spread of the hit rate inside phases (lower is better)\n";
    let _ = writeln!(
        o,
        "{:<19} {:>3} {:>7} {:>8} {:>8} {:>10} {:>11} {:>13} {:>9}",
        "method",
        "k",
        "PoEC",
        "CoV",
        "sigma_w",
        "sig ns/ref",
        "cluster ms",
        "simpoint err",
        "speed-up"
    );
    for m in &r.methods {
        let (err, speedup) = match &m.simpoint {
            Some(e) => (format!("{:+.5}", e.error), format!("{:.1}x", e.speedup)),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            o,
            "{:<19} {:>3} {:>7} {:>8.4} {:>8.4} {:>10.2} {:>11.2} {:>13} {:>9}",
            m.name,
            m.k,
            m.poec.map_or("-".into(), |p| format!("{p:.3}")),
            m.cov,
            m.sigma_weighted,
            m.signature_ns_per_ref,
            m.clustering_ms,
            err,
            speedup
        );
    }
    // The first method with the highest PoEC (ties keep the earlier, cheaper method).
    let best = r.methods.iter().reduce(|a, b| {
        if b.poec.unwrap_or(-1.0) > a.poec.unwrap_or(-1.0) {
            b
        } else {
            a
        }
    });
    if let Some(best) = best {
        let _ = writeln!(o, "\n# phases found by {} (highest PoEC)", best.name);
        let _ = writeln!(
            o,
            "{:>5} {:>9} {:>7} {:>14} {:>13} {:>14}",
            "phase", "intervals", "share", "mean L2 hit %", "std L2 hit %", "representative"
        );
        for p in &best.phases {
            let _ = writeln!(
                o,
                "{:>5} {:>9} {:>6.1}% {:>14.3} {:>13.3} {:>14}",
                p.id,
                p.intervals,
                100.0 * p.share,
                100.0 * p.mean_l2_hit_rate,
                100.0 * p.std_l2_hit_rate,
                p.representative
            );
        }
    }
    o += &timeline(r);
    o
}

fn unit_name(s: &cachescope::phases::PhaseSettings) -> &'static str {
    match s.unit {
        cachescope::phases::Unit::Instructions => "instructions",
        cachescope::phases::Unit::DataRefs => "data references",
    }
}

/// Width of the timeline in characters.
const WIDTH: usize = 96;

/// Phases against the L2 hit rate over time, one character per group of intervals: the hit
/// rate as a bar from ▁ (lowest in the trace) to █ (highest), each method's phase as a digit
/// (the most frequent in the group).
fn timeline(r: &PhaseReport) -> String {
    let n = r.intervals.len();
    if n == 0 {
        return String::new();
    }
    let per = n.div_ceil(WIDTH);
    let groups: Vec<&[cachescope::phases::IntervalReport]> = r.intervals.chunks(per).collect();
    let rates: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().map(|i| i.l2_hit_rate).sum::<f64>() / g.len() as f64)
        .collect();
    let (lo, hi) = rates
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let mut o = format!(
        "\n# timeline: one column per {} interval(s); L2 hit rate from {:.2}% (▁) to {:.2}% (█)\n",
        per,
        100.0 * lo,
        100.0 * hi
    );
    let bar: String = rates
        .iter()
        .map(|&x| {
            let t = if hi > lo { (x - lo) / (hi - lo) } else { 1.0 };
            BARS[((t * 7.0).round() as usize).min(7)]
        })
        .collect();
    let _ = writeln!(o, "{:<19} {bar}", "L2 hit rate");
    for m in &r.methods {
        let row: String = groups
            .iter()
            .map(|g| {
                let mut counts = [0usize; 64];
                for i in g.iter() {
                    counts[i.phases[m.name].min(63)] += 1;
                }
                let id = (0..64)
                    .max_by_key(|&k| (counts[k], std::cmp::Reverse(k)))
                    .unwrap_or(0);
                char::from_digit(id as u32 % 36, 36).unwrap_or('?')
            })
            .collect();
        let _ = writeln!(o, "{:<19} {row}", m.name);
    }
    o
}
