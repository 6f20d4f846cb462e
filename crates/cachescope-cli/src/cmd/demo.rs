//! `cachescope demo`: the README's first command. Generates a built-in workload, writes its
//! report (as `cachescope report --workload` would) and prints where it is.

use crate::args::heading;
use std::path::PathBuf;

use anyhow::Result;
use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Workload};
use clap::Args;

use super::report::{collect_options, make, print_summary};
use crate::args::{ReportOptions, RunArgs, WorkloadParams, values};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The built-in workload to generate (see `cachescope generate --list`).
    #[arg(help_heading = heading::INPUT, long, value_name = "NAME", default_value = "phases", value_parser = values::workload)]
    pub workload: Workload,
    /// The directory to write the report into.
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "DIR", default_value = "cachescope-demo")]
    pub output: PathBuf,
    #[command(flatten)]
    pub report: ReportOptions,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print what was written as one JSON object instead of the summary table.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary table as CSV.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(args: DemoArgs) -> Result<()> {
    let params = args.params.to_params(args.run.line_size);
    let generator = workloads::generator(args.workload, &params)?;
    let mut trace = Trace::from_reader(
        Box::new(generator),
        Source::Workload(args.workload.name().into()),
    );
    if args.report.per_structure {
        anyhow::bail!("--per-structure needs report --sampled and a recorded trace file");
    }
    let options = collect_options(&args.report, &args.params, &args.run, false);
    let (report, written) = make(
        &mut trace,
        (options, None),
        None,
        Default::default(),
        None,
        &args.output,
        &args.run,
    )?;
    print_summary(&report, &written, args.json, args.csv)
}
