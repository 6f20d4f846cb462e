//! `cachescope sample TRACE -o PROFILE`: StatCache's run-time part, stored for the models.

use cachescope::units::thousands;
use std::io::Write;

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::reuse::Options;

use super::{drive_sampled, mrc::sampler_options, open_chunked};
use crate::args::SampleArgs;
use crate::output::{self, Pending};

pub fn run(args: SampleArgs) -> Result<()> {
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let opts = sampler_options(&args.sampling, &args.input.params, &options);
    let profile = match crate::program::sample_in_tool(&args.input, opts, args.run.quiet)? {
        Some(p) => p,
        None => {
            let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
                return Ok(());
            };
            let Some(profile) = drive_sampled(&mut trace, opts, &args.run)? else {
                return Ok(());
            };
            profile.with_source(trace.source().to_string())
        }
    };
    if args.output.as_os_str() == "-" {
        profile.write(std::io::stdout().lock(), &Source::Stdin)?;
    } else {
        let (pending, file) = Pending::create(&args.output)?;
        let mut w = std::io::BufWriter::new(file);
        profile.write(&mut w, &Source::File(args.output.clone()))?;
        w.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        pending.commit()?;
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
    if args.json || args.csv {
        let text = if args.json {
            serde_json::to_string_pretty(&summary)? + "\n"
        } else {
            output::csv_records(&[summary])
        };
        if args.output.as_os_str() == "-" {
            std::io::stderr().write_all(text.as_bytes())?;
            return Ok(());
        }
        return output::print(&text);
    }
    if !args.run.quiet {
        eprintln!(
            "cachescope: sampled {} of {} references ({} reuses, {} dangling) at rate {} into {}",
            thousands(profile.samples().len() as u64),
            thousands(profile.refs()),
            thousands(profile.reuses()),
            thousands(profile.dangling()),
            profile.rate(),
            args.output.display()
        );
    }
    Ok(())
}
