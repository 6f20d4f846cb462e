//! `cachescope sample TRACE -o PROFILE`: StatCache's run-time part, stored for the models.

use crate::args::heading;
use std::path::PathBuf;

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::pass::Sampling;
use cachescope::reuse::Options;
use cachescope::units::thousands;
use clap::Args;

use super::{drive, mrc::sampler_options, open_chunked};
use crate::args::{InputArgs, RunArgs, SamplingArgs};
use crate::output::{self, Format, Output, Pending};

#[derive(Debug, Args)]
pub struct SampleArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Sample instruction fetches too (a unified cache).
    #[arg(help_heading = heading::SAMPLING, long)]
    pub include_instructions: bool,
    /// Where to write the profile (`-` for stdout).
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "PROFILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print the summary as JSON (on stderr when the profile goes to stdout).
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary as a CSV header and one row (stderr when the profile goes to stdout).
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(args: SampleArgs) -> Result<()> {
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let opts = sampler_options(&args.sampling, &args.input.params, &options);
    // Created before the run, so that a path that cannot be written fails before a program
    // runs; renamed into place at the end.
    let pending = if args.output.as_os_str() == "-" {
        None
    } else {
        Some(Pending::create(&args.output)?)
    };
    let profile = match crate::program::sample_in_tool(&args.input, opts, args.run.quiet)? {
        Some(p) => p,
        None => {
            let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
                return Ok(());
            };
            let profile = drive(&mut trace, Sampling(opts), &args.run)?;
            profile.with_source(trace.source().to_string())
        }
    };
    if let Some((pending, file)) = pending {
        let mut w = std::io::BufWriter::new(file);
        profile.write(&mut w, &Source::File(args.output.clone()))?;
        w.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        pending.commit()?;
    } else {
        profile.write(std::io::stdout().lock(), &Source::Stdin)?;
    }
    let summary = serde_json::json!({
        "profile": args.output.display().to_string(),
        "source": profile.source(),
        "refs": profile.refs(),
        "samples": profile.samples().len(),
        "reuses": profile.reuses(),
        "dangling": profile.dangling(),
        "rate": profile.rate(),
        "seed": profile.seed(),
        "slot_refs": profile.slot_refs(),
        "slots": profile.slot_count(),
        "line_size": profile.line_size().bytes(),
    });
    let note = format!(
        "cachescope: sampled {} of {} references ({} reuses, {} dangling) at rate {} into {}\n",
        thousands(profile.samples().len() as u64),
        thousands(profile.refs()),
        thousands(profile.reuses()),
        thousands(profile.dangling()),
        profile.rate(),
        args.output.display()
    );
    output::emit_summary(
        &Summary { summary, note },
        Format::from_flags(args.json, args.csv),
        args.output.as_os_str() == "-",
        args.run.quiet,
    )
}

/// What was sampled: the note on stderr (the table form), `--json`, `--csv`.
struct Summary {
    summary: serde_json::Value,
    note: String,
}

impl Output for Summary {
    fn table(&self) -> String {
        self.note.clone()
    }

    fn json(&self) -> Result<String> {
        output::json(&self.summary)
    }

    fn csv(&self) -> Result<String> {
        Ok(output::csv_records(std::slice::from_ref(&self.summary)))
    }
}
