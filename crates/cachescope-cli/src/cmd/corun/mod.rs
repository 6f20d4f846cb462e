//! `cachescope corun`: each program's miss ratio in a shared cache, predicted from solo
//! footprints (HOTL §4.5), optionally checked against an interleaved simulation.

use crate::args::heading;
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cachescope::AccessKind;
use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::models::hotl::{
    FootprintAnalysis, FootprintCurve,
    corun::{CorunPrediction, CorunProgram},
};
use cachescope::pass::Analyses;
use cachescope::reuse::Options;
use cachescope::sim::Geometry;
use cachescope::units::size_label;
use clap::Args;

use super::{drive, drive_again};
use crate::args::{ReadArgs, RunArgs, values};
use crate::input;
use crate::output::{self, Format, Output};

mod simulate;
use simulate::{Prefix, simulate};

#[derive(Debug, Args)]
pub struct CorunArgs {
    /// Each program: a trace, or a footprint saved by `cachescope footprint --json` (two or
    /// more; one trace with --split-threads).
    #[arg(value_name = "PROFILE_OR_TRACE", required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// The threads of one trace share the cache: each thread is a program, its rate its data
    /// references per instruction (every core runs instructions at the same pace), or equal
    /// rates for a trace without instruction fetches (docs/threads.md).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub split_threads: bool,
    /// The shared cache's size (e.g. 8MiB).
    #[arg(help_heading = heading::CACHE, long, value_parser = values::size)]
    pub cache: u64,
    /// Ways of the shared cache [default: fully associative].
    #[arg(help_heading = heading::CACHE, long)]
    pub ways: Option<u32>,
    /// Access rates (references per unit time), one per program [default: all equal].
    #[arg(help_heading = heading::ANALYSIS, long, value_delimiter = ',')]
    pub rates: Option<Vec<f64>>,
    /// Also simulate the programs interleaved in proportion to their rates in the shared cache
    /// (traces only), and print the prediction's error.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub simulate: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per program, the JSON's fields (`predicted_miss_ratio`, …).
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

#[derive(serde::Serialize)]
struct Row {
    program: String,
    rate: f64,
    share_lines: f64,
    predicted: CorunPrediction,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated: Option<Simulated>,
}

#[derive(serde::Serialize)]
struct Simulated {
    refs: u64,
    miss_ratio: f64,
    miss_ratio_warm: f64,
    /// The prediction from the footprint of exactly the simulated prefix.
    predicted_for_prefix: CorunPrediction,
    relative_error: f64,
}

/// A program of the co-run: a trace or saved footprint, or one thread of a trace.
#[derive(Clone, Debug)]
struct Input {
    path: PathBuf,
    thread: Option<cachescope::ThreadId>,
}

impl Input {
    fn name(&self) -> String {
        match self.thread {
            Some(t) => format!("{} thread {t}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    fn open(&self, read: &ReadArgs) -> Result<cachescope::trace::Trace> {
        let mut trace = input::open_path(&self.path, read)?;
        if let Some(t) = self.thread {
            trace.only_thread(t);
        }
        Ok(trace)
    }
}

/// The programs the arguments name, and their default rates: each input, or with
/// --split-threads each thread of the one trace (rate: its data references per instruction).
fn inputs(args: &CorunArgs) -> Result<(Vec<Input>, Vec<f64>)> {
    if !args.split_threads {
        if args.inputs.len() < 2 {
            bail!("co-running needs two programs or more (or one trace with --split-threads)");
        }
        let all = args.inputs.iter().map(|p| Input {
            path: p.clone(),
            thread: None,
        });
        return Ok((all.collect(), vec![1.0; args.inputs.len()]));
    }
    let [path] = args.inputs.as_slice() else {
        bail!("--split-threads takes one trace, whose threads share the cache");
    };
    let plan = cachescope::parallel::PerThreadPlan(cachescope::parallel::StatsPlan {
        line_size: args.run.line_size,
    });
    let mut trace = input::open_path(path, &args.read)?;
    let threads = drive(&mut trace, cachescope::pass::Plan(&plan), &args.run)?;
    if threads.len() < 2 {
        bail!(
            "{} has one thread: nothing shares the cache",
            path.display()
        );
    }
    let timed = threads.iter().all(|(_, s)| s.instructions > 0);
    let rates = threads
        .iter()
        .map(|(_, s)| {
            if timed {
                s.refs.max(1) as f64 / s.instructions as f64
            } else {
                1.0
            }
        })
        .collect();
    let all = threads.iter().map(|&(t, _)| Input {
        path: path.clone(),
        thread: Some(t),
    });
    Ok((all.collect(), rates))
}

pub fn run(args: CorunArgs) -> Result<()> {
    let line = args.run.line_size;
    let cache = match args.ways {
        Some(w) => Geometry::new(args.cache, w, line.bytes())?,
        None => Geometry::fully_associative(args.cache, line.bytes())?,
    };
    let (sources, default_rates) = inputs(&args)?;
    let rates = match &args.rates {
        Some(r) if r.len() != sources.len() => bail!(
            "{} rates for {} programs: give one rate per program",
            r.len(),
            sources.len()
        ),
        Some(r) => r.clone(),
        None => default_rates,
    };
    let options = Options {
        line_size: line,
        ..Options::default()
    };
    let mut programs = Vec::new();
    for (src, &rate) in sources.iter().zip(&rates) {
        let footprint = match saved_footprint(&src.path)? {
            Some(curve) => curve,
            None => profile(src, options, &args, None)?,
        };
        if footprint.line_size != line.bytes() {
            bail!(
                "{}: a footprint of {}-byte lines; this run uses {} (--line-size)",
                src.path.display(),
                footprint.line_size,
                line.bytes()
            );
        }
        programs.push(CorunProgram { footprint, rate });
    }
    let predicted = cachescope::models::hotl::corun::predict(&programs, cache)?;
    let mut rows: Vec<Row> = sources
        .iter()
        .zip(&rates)
        .zip(predicted)
        .map(|((p, &rate), pred)| Row {
            program: p.name(),
            rate,
            share_lines: pred.share_lines,
            predicted: pred,
            simulated: None,
        })
        .collect();
    if args.simulate {
        simulate(&args, &sources, options, cache, &rates, &mut rows)?;
    }
    let out = Table { cache, rows };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

/// Each program's prediction in the shared cache.
struct Table {
    cache: Geometry,
    rows: Vec<Row>,
}

impl Output for Table {
    fn json(&self) -> Result<String> {
        output::json(&serde_json::json!({ "cache": self.cache.to_string(), "programs": self.rows }))
    }

    /// One row per program, the JSON's fields (`predicted_miss_ratio`, …).
    fn csv(&self) -> Result<String> {
        let records = self
            .rows
            .iter()
            .map(serde_json::to_value)
            .collect::<serde_json::Result<Vec<_>>>()?;
        Ok(output::csv_records(&records))
    }

    fn table(&self) -> String {
        let Table { cache, rows } = self;
        let mut o = format!(
            "# co-run in a shared {} LRU cache ({}): miss ratios per reference of each program, \
         cold misses included (warm: left out)\n",
            size_label(cache.size_bytes()),
            cache
        );
        let _ = writeln!(
            o,
            "{:<28} {:>6} {:>12} {:>11} {:>11} {:>24} {:>10}",
            "program",
            "rate",
            "share lines",
            "predicted",
            "warm",
            "simulated vs predicted",
            "rel. err"
        );
        for r in rows {
            let (sim, err) = match &r.simulated {
                Some(s) => (
                    format!("{:.6}", s.miss_ratio),
                    format!("{:+.1}%", 100.0 * s.relative_error),
                ),
                None => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                o,
                "{:<28} {:>6} {:>12.1} {:>11} {:>11.6} {:>24} {:>10}",
                r.program,
                // Given rates print as given; measured ones (--split-threads) to 4 places.
                format!("{:.4}", r.rate)
                    .trim_end_matches('0')
                    .trim_end_matches('.'),
                r.share_lines,
                r.predicted
                    .miss_ratio
                    .map_or("-".into(), |m| format!("{m:.6}")),
                r.predicted.miss_ratio_warm,
                sim,
                err
            );
        }
        if rows.iter().any(|r| r.simulated.is_some()) {
            o += "# the simulation stops when the first program ends: it is compared with the \
              prediction from the footprints of the prefixes it ran\n";
        }
        o
    }
}

/// A footprint saved by `cachescope footprint --json`, told from a trace by its first byte.
fn saved_footprint(path: &Path) -> Result<Option<FootprintCurve>> {
    let mut head = [0u8; 1];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let n = f.read(&mut head)?;
    if n == 0 || head[0] != b'{' {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)?;
    let curve: FootprintCurve = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a footprint (expected the JSON of `cachescope footprint --json`)",
            path.display()
        )
    })?;
    curve.validate()?;
    Ok(Some(curve))
}

/// The footprint of a trace, or of its first `prefix` counted references.
fn profile(
    src: &Input,
    options: Options,
    args: &CorunArgs,
    prefix: Option<u64>,
) -> Result<FootprintCurve> {
    let mut fp = FootprintAnalysis::new(options, &[])?;
    let mut trace = src.open(&args.read)?;
    match prefix {
        Some(limit) => {
            let mut p = Prefix {
                inner: &mut fp,
                left: limit,
                options,
            };
            // A second read of a trace profiled already: its notes were printed then.
            drive_again(&mut trace, Analyses(&mut [&mut p]), &args.run)?;
        }
        None => {
            drive(&mut trace, Analyses(&mut [&mut fp]), &args.run)?;
        }
    }
    Ok(FootprintCurve::from_footprint(&fp.finish(), 256)?)
}
