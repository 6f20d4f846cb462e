//! `cachescope generate WORKLOAD -o OUT`: a built-in synthetic workload written as a trace.

use crate::args::heading;
use std::path::PathBuf;

use anyhow::Result;
use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Workload};
use clap::Args;

use super::convert::{print_summary, write_trace};
use crate::args::{RunArgs, SummaryFormat, WorkloadParams, values};
use crate::output;

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The workload (see --list).
    #[arg(value_name = "WORKLOAD", required_unless_present = "list", value_parser = values::workload)]
    pub workload: Option<Workload>,
    /// List the workloads and their parameters.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub list: bool,
    /// Where to write (`-` for stdout).
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "OUT", required_unless_present = "list")]
    pub output: Option<PathBuf>,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(help_heading = heading::OUTPUT, long, default_value = "native", value_parser = values::output_format)]
    pub to: cachescope::trace::Format,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
}

pub fn run(args: GenerateArgs) -> Result<()> {
    if args.list {
        let mut text = String::new();
        for w in Workload::ALL {
            text += &format!("{:<13} {}\n", w.name(), w.describe());
        }
        return output::print(&text);
    }
    let w = args.workload.expect("clap requires WORKLOAD unless --list");
    let out = args
        .output
        .as_deref()
        .expect("clap requires -o unless --list");
    let params = args.params.to_params(args.run.line_size);
    let generator = workloads::generator(w, &params)?;
    let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
    let meta = vec![
        ("source".to_string(), format!("workload {}", w.name())),
        ("workload_params".to_string(), format!("{params:?}")),
    ];
    let summary = write_trace(
        &mut trace,
        out,
        args.to,
        &args.run,
        meta,
        args.summary.wanted(),
    )?;
    print_summary(&summary, &args.summary, &args.run)
}
