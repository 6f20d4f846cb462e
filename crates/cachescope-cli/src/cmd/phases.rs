//! `cachescope phases`: phase ids per interval, per-phase summaries, a timeline, and every
//! method's PoEC / CoV / weighted σ against the intervals' L2 hit rates.

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::Result;
use cachescope::pass::Analyses;
use cachescope::phases::{IntervalUnit, KChoice, PhaseAnalysis, PhaseOptions, PhaseReport};
use cachescope::sim::Geometry;
use cachescope::units::thousands;
use clap::Args;

use super::{drive, drive_again};
use crate::args::values::{self, Methods};
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs};
use crate::input;
use crate::output::{self, Format, Sourced, SourcedDocument};

#[derive(Debug, Args)]
pub struct PhasesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Interval length, in instructions (data references when the trace has no instruction
    /// fetches; see --unit), with K/M/G; the report's default too.
    #[arg(help_heading = heading::ANALYSIS, long, default_value_t = cachescope::phases::DEFAULT_INTERVAL, value_parser = values::count)]
    pub interval: u64,
    /// What the interval length counts: auto, instructions or data-refs.
    #[arg(help_heading = heading::ANALYSIS, long, value_enum, default_value = "auto")]
    pub unit: UnitArg,
    /// Number of phases: a number (e.g. 4), or a range LO..HI chosen per method by BIC; the
    /// report's default too.
    #[arg(help_heading = heading::ANALYSIS, long, default_value_t = KChoice::default(), value_parser = values::k)]
    pub k: KChoice,
    /// Methods, comma separated, or `all`: setvector, setvector-vector, activity,
    /// activity-magnitude, reuse-distance, wavelet, wavelet-dc, wavelet-svd.
    #[arg(help_heading = heading::ANALYSIS, long, default_value = "all", value_parser = values::methods)]
    pub method: Methods,
    /// The L2 (SIZE,ASSOC,LINE): the ground truth's cache and the setvectors' geometry.
    #[arg(help_heading = heading::CACHE, long = "L2", visible_alias = "l2", value_name = "SPEC", default_value = "1M,16,64", value_parser = values::geometry)]
    pub l2: Geometry,
    /// An optional L1 (SIZE,ASSOC,LINE) in front of the L2; its misses feed the L2.
    #[arg(help_heading = heading::CACHE, long = "L1", visible_alias = "l1", value_name = "SPEC", value_parser = values::geometry)]
    pub l1: Option<Geometry>,
    /// Setvector elements saturate at 2^BITS - 1 (1 to 8).
    #[arg(help_heading = heading::ANALYSIS, long, default_value_t = 8)]
    pub bits: u32,
    /// Skip the second pass that simulates one representative interval per phase.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub no_simpoint: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    #[command(flatten)]
    pub rate: SampledRateArgs,
    /// Print one JSON object: {"methods": [...], "intervals": [...], ...}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per method (the JSON's `methods`, without their per-phase lists).
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

/// What `--interval` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UnitArg {
    Auto,
    Instructions,
    DataRefs,
}

impl From<UnitArg> for IntervalUnit {
    fn from(u: UnitArg) -> IntervalUnit {
        match u {
            UnitArg::Auto => IntervalUnit::Auto,
            UnitArg::Instructions => IntervalUnit::Instructions,
            UnitArg::DataRefs => IntervalUnit::DataRefs,
        }
    }
}

pub fn run(args: PhasesArgs) -> Result<()> {
    let spatial = args
        .sampled
        .spatial(args.rate.rate, args.input.params.seed, args.l2.line_size());
    // --sampled: the hit rates' caches as miniatures at the rate (docs/sampled.md).
    let mini = |g| match spatial {
        Some(s) => cachescope::report::sampled::miniature(g, s.rate),
        None => Ok(g),
    };
    let options = PhaseOptions {
        interval: args.interval,
        unit: args.unit.into(),
        k: args.k,
        methods: args.method.0.clone(),
        l2: mini(args.l2)?,
        l1: args.l1.map(mini).transpose()?,
        setvector_bits: args.bits,
        seed: args.input.params.seed,
        ..PhaseOptions::default()
    };
    let mut analysis = PhaseAnalysis::new(options)?;
    // --sampled: the setvectors' magnitudes without the sample's noise, as the report's.
    if let Some(s) = &spatial {
        analysis = analysis.sampled(s.rate);
    }
    let mut trace = match spatial {
        // A program runs under the tool's line filter; no second pass is made.
        Some(s) => {
            input::open_sampled(
                &args.input,
                args.l2.line_size(),
                (s, None),
                false,
                args.run.quiet,
            )?
            .0
        }
        None => input::open_twice(&args.input, args.l2.line_size())?,
    };
    drive(&mut trace, Analyses(&mut [&mut analysis]), &args.run)?;
    let source = trace.source().to_string();
    let mut report = analysis.finish_on(args.run.threads)?;
    // The second pass needs the trace again: a file, a workload or the program's recording
    // (`open_twice`), not stdin. The representatives' simulation needs every reference of them.
    let reopenable = args.input.reads_again() || !args.input.program.is_empty();
    if !args.no_simpoint && reopenable && spatial.is_none() {
        let mut reps = report.representative_simulation()?;
        let mut again = input::open(&args.input, args.l2.line_size())?;
        drive_again(&mut again, Analyses(&mut [&mut reps]), &args.run)?;
        report.apply_representatives(&reps.finish())?;
    }
    let out = Sourced {
        doc: report,
        source,
    };
    output::emit_sampled(
        &out,
        Format::from_flags(args.json, args.csv),
        spatial,
        "shards",
    )
}

impl SourcedDocument for PhaseReport {
    /// One row per method (the JSON's `methods`, without their per-phase lists).
    fn csv(&self) -> Result<String> {
        let v = serde_json::to_value(self)?;
        Ok(output::csv_records(
            v["methods"].as_array().map_or(&[][..], Vec::as_slice),
        ))
    }

    fn table(&self, source: &str) -> String {
        render(self, source)
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
