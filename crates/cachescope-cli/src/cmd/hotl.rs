//! `cachescope hotl`: the Filmer metrics per cache size from one footprint pass, and the
//! diagnostics that explain them (reuse windows, direct fill time, footprint sampling).

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::analysis::Analysis;
use cachescope::models::hotl::{
    DirectFillTimeAnalysis, FillTimePoint, Filmer, FootprintAnalysis, FootprintSampler,
    ReuseWindowAnalysis, ReuseWindowCheck, SampledFootprint, SamplingOptions,
};
use cachescope::parallel::FootprintPlan;
use cachescope::pass::{Independent, Plan};
use cachescope::reuse::Options;
use cachescope::units::{size_label, thousands};
use clap::Args;

use super::{drive, open_chunked};
use crate::args::{InputArgs, RunArgs, SizeArgs, values};
use crate::output::{self, Format, Sourced, SourcedDocument};

#[derive(Debug, Args)]
pub struct HotlArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sizes: SizeArgs,
    /// Count instruction fetches too (a unified cache).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub include_instructions: bool,
    /// Also measure the footprint of reuse windows, rfp(l), against fp(l) (§2.7), sampling
    /// reuses at this rate (1 = every reuse).
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "RATE", num_args = 0..=1, default_missing_value = "1")]
    pub reuse_windows: Option<f64>,
    /// Also measure the direct fill time of volumes 1..=N (Appendix A; quadratic in the
    /// trace's distinct lines at worst: keep N small), next to the Filmer fill time.
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "N")]
    pub direct_fill_time: Option<usize>,
    /// Also run footprint sampling (§3) with one sample per this many references, each until
    /// it fills the largest size; prints its coverage and both designs' curves.
    #[arg(help_heading = heading::SAMPLING, long = "sample-period", visible_alias = "sample", value_name = "PERIOD", value_parser = values::count)]
    pub sample: Option<u64>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV (the per-size metrics).
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

/// One cache size's five metrics (sizes in lines, times in references).
#[derive(serde::Serialize)]
struct Point {
    size_bytes: u64,
    lines: u64,
    fill_time: f64,
    inter_miss_time: f64,
    miss_ratio: f64,
    miss_ratio_warm: f64,
    reuse_distance_probability: f64,
}

#[derive(serde::Serialize)]
struct Document {
    line_size: u64,
    refs: u64,
    distinct_lines: u64,
    points: Vec<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reuse_windows: Option<ReuseWindowCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    direct_fill_time: Option<Vec<FillTimePoint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampling: Option<SampledFootprint>,
}

pub fn run(args: HotlArgs) -> Result<()> {
    let sizes = args.sizes.resolve()?;
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let mut rw = args
        .reuse_windows
        .map(|rate| ReuseWindowAnalysis::new(options, rate))
        .transpose()?;
    let mut direct = args
        .direct_fill_time
        .map(|n| DirectFillTimeAnalysis::new(options, n))
        .transpose()?;
    let mut sampler = match args.sample {
        Some(0) => bail!("--sample-period 0: give a period of at least one reference"),
        Some(period) => Some(FootprintSampler::new(SamplingOptions {
            reuse: options,
            fill_lines: sizes.iter().max().copied().unwrap_or(0) / options.line_size.bytes(),
            period,
            max_sample_refs: period,
            seed: args.input.params.seed,
            sizes_bytes: sizes.clone(),
        })?),
        None => None,
    };
    let alone = rw.is_none() && direct.is_none() && sampler.is_none();
    // Under MPI only the footprint alone distributes; with the diagnostics rank 0 works alone.
    #[cfg(feature = "mpi")]
    if !alone && crate::mpi::is_secondary_rank() {
        return Ok(());
    }
    let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
        return Ok(());
    };
    let footprint = if alone {
        // The footprint alone merges exactly over chunks of the trace.
        let plan = FootprintPlan::new(options, &[])?;
        drive(&mut trace, Plan(&plan), &args.run)?
    } else {
        // With the diagnostics, which do not split in time: side by side, one decode.
        let mut fp = FootprintAnalysis::new(options, &[])?;
        let mut analyses: Vec<&mut (dyn Analysis + Send)> = vec![&mut fp];
        if let Some(a) = rw.as_mut() {
            analyses.push(a);
        }
        if let Some(a) = direct.as_mut() {
            analyses.push(a);
        }
        if let Some(a) = sampler.as_mut() {
            analyses.push(a);
        }
        drive(&mut trace, Independent(&mut analyses), &args.run)?;
        fp.finish()
    };
    let filmer = Filmer::new(&footprint);
    let line = options.line_size.bytes();
    let points = sizes
        .iter()
        .map(|&b| {
            let c = b / line;
            let cf = c as f64;
            Point {
                size_bytes: b,
                lines: c,
                fill_time: filmer.fill_time(cf),
                inter_miss_time: filmer.inter_miss_time(cf),
                miss_ratio: filmer.miss_ratio(cf),
                miss_ratio_warm: filmer.miss_ratio_warm(cf),
                reuse_distance_probability: filmer.reuse_distance_probability(c),
            }
        })
        .collect();
    let doc = Document {
        line_size: line,
        refs: footprint.refs,
        distinct_lines: footprint.distinct_lines,
        points,
        reuse_windows: rw.map(|a| a.finish().check(&footprint)),
        direct_fill_time: direct.map(|a| a.finish().compare(&filmer)),
        sampling: sampler.map(|s| s.finish()),
    };
    let out = Sourced {
        doc,
        source: trace.source().to_string(),
    };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

impl SourcedDocument for Document {
    fn csv(&self) -> Result<String> {
        let mut o = String::from(
            "size_bytes,lines,fill_time,inter_miss_time,miss_ratio,miss_ratio_warm,reuse_distance_probability\n",
        );
        for p in &self.points {
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{}",
                p.size_bytes,
                p.lines,
                p.fill_time,
                p.inter_miss_time,
                p.miss_ratio,
                p.miss_ratio_warm,
                p.reuse_distance_probability
            );
        }
        Ok(o)
    }

    fn table(&self, source: &str) -> String {
        table(self, source)
    }
}

fn table(doc: &Document, source: &str) -> String {
    let mut o = format!(
        "# HOTL metrics of {source} ({} references, {} distinct {}-B lines), LRU, fully associative\n\
         # fill_time: references to fill the cache; inter_miss_time: references between misses \
         once full;\n# miss_ratio: per reference, cold misses included (warm: left out); \
         P(rd=c): share of references with HOTL reuse distance c\n",
        thousands(doc.refs),
        thousands(doc.distinct_lines),
        doc.line_size
    );
    let _ = writeln!(
        o,
        "{:>10} {:>10} {:>14} {:>15} {:>11} {:>16} {:>11}",
        "size", "lines", "fill_time", "inter_miss_time", "miss_ratio", "miss_ratio_warm", "P(rd=c)"
    );
    for p in &doc.points {
        let _ = writeln!(
            o,
            "{:>10} {:>10} {:>14.1} {:>15.2} {:>11.6} {:>16.6} {:>11.3e}",
            size_label(p.size_bytes),
            p.lines,
            p.fill_time,
            p.inter_miss_time,
            p.miss_ratio,
            p.miss_ratio_warm,
            p.reuse_distance_probability
        );
    }
    if let Some(rw) = &doc.reuse_windows {
        let _ = writeln!(
            o,
            "\n# reuse-window check (§2.7, reuses sampled at rate {}): the conversion assumes a \
             reuse window holds fp(l) lines;\n# weighted relative divergence |rfp − fp| / fp = {:.4}",
            rw.rate, rw.weighted_relative_divergence
        );
        let _ = writeln!(
            o,
            "{:>14} {:>12} {:>12} {:>12} {:>11}",
            "window", "reuses", "rfp", "fp", "rfp − fp"
        );
        // Four rows per octave of window length (the JSON has every point).
        let mut last_row = i64::MIN;
        for p in &rw.points {
            let row = (p.window.max(1.0).log2() * 4.0).floor() as i64;
            if row == last_row {
                continue;
            }
            last_row = row;
            let _ = writeln!(
                o,
                "{:>14.0} {:>12} {:>12.2} {:>12.2} {:>11.4}",
                p.window, p.reuses, p.rfp, p.fp, p.divergence
            );
        }
    }
    if let Some(ft) = &doc.direct_fill_time {
        o += "\n# direct fill time (average length of the windows holding v lines) against \
              Filmer's (fp⁻¹); a direct time that falls with v would give a negative miss ratio\n";
        let _ = writeln!(o, "{:>8} {:>14} {:>14}", "volume", "direct", "filmer");
        let mut last = f64::NEG_INFINITY;
        for p in ft {
            let flag = match p.direct {
                Some(d) if d < last => "  <- shorter than v-1",
                _ => "",
            };
            if let Some(d) = p.direct {
                last = d;
            }
            let show = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.2}"));
            let _ = writeln!(
                o,
                "{:>8} {:>14} {:>14}{flag}",
                p.volume,
                show(p.direct),
                show(p.filmer)
            );
        }
    }
    if let Some(s) = &doc.sampling {
        let _ = writeln!(
            o,
            "\n# footprint sampling (§3): {} samples ({} filled the largest size), {} of {} \
             references analysed: coverage {:.2}%",
            s.samples,
            s.filled_samples,
            thousands(s.sampled_refs),
            thousands(s.refs),
            100.0 * s.coverage
        );
        let _ = writeln!(
            o,
            "{:>10} {:>22} {:>24}",
            "size", "per-sample mr averaged", "footprints averaged → mr"
        );
        for (a, b) in s.per_sample.points.iter().zip(&s.averaged.points) {
            let _ = writeln!(
                o,
                "{:>10} {:>22.6} {:>24.6}",
                size_label(a.size_bytes),
                a.miss_ratio_warm,
                b.miss_ratio_warm
            );
        }
    }
    o
}
