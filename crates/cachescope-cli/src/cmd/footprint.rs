//! `cachescope footprint`: fp(w) on the logarithmic grid or at listed windows.

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::models::hotl::FootprintPoint;
use cachescope::parallel::FootprintPlan;
use cachescope::pass::Plan;
use cachescope::reuse::Options;
use cachescope::units::thousands;
use clap::Args;

use super::{drive, open_chunked};
use crate::args::{InputArgs, RunArgs, values};
use crate::output::{self, Format, Sourced, SourcedDocument};

#[derive(Debug, Args)]
pub struct FootprintArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Exact footprints of these window lengths only (references, with K/M/G), comma separated.
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "LIST", value_delimiter = ',', value_parser = values::count)]
    pub windows: Option<Vec<u64>>,
    /// Windows per power of two on the logarithmic grid (a power of two up to 256).
    #[arg(help_heading = heading::ANALYSIS, long, default_value_t = 256)]
    pub per_octave: u64,
    /// Count instruction fetches too (a unified cache).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub include_instructions: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object: {"line_size", "refs", "distinct_lines", "points": [{"window", "footprint"}]}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

/// The JSON document: also a co-run profile (`cachescope corun`).
#[derive(serde::Serialize)]
struct Document {
    line_size: u64,
    refs: u64,
    distinct_lines: u64,
    points: Vec<FootprintPoint>,
}

pub fn run(args: FootprintArgs) -> Result<()> {
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let listed = args.windows.clone().unwrap_or_default();
    let plan = FootprintPlan::new(options, &listed)?;
    let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
        return Ok(());
    };
    let fp = drive(&mut trace, Plan(&plan), &args.run)?;
    if let Some(&w) = listed.iter().find(|&&w| w > fp.refs) {
        bail!(
            "--windows {w}: longer than the trace ({} counted references); a window holds 1 to \
             {} references",
            fp.refs,
            fp.refs
        );
    }
    let points = if args.windows.is_some() {
        fp.listed()
    } else {
        fp.points(args.per_octave)?
    };
    let doc = Document {
        line_size: fp.line_size,
        refs: fp.refs,
        distinct_lines: fp.distinct_lines,
        points,
    };
    let out = Sourced {
        doc,
        source: trace.source().to_string(),
    };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

impl SourcedDocument for Document {
    fn csv(&self) -> Result<String> {
        let mut o = String::from("window,footprint\n");
        for p in &self.points {
            let _ = writeln!(o, "{},{}", p.window, p.footprint);
        }
        Ok(o)
    }

    fn table(&self, source: &str) -> String {
        let mut o = format!(
            "# average footprint fp(w) of {}: distinct {}-B lines per window of w references \
             ({} references, {} distinct lines)\n{:>16} {:>16}\n",
            source,
            self.line_size,
            thousands(self.refs),
            thousands(self.distinct_lines),
            "window",
            "footprint"
        );
        for p in &self.points {
            let _ = writeln!(o, "{:>16} {:>16.3}", p.window, p.footprint);
        }
        o
    }
}
