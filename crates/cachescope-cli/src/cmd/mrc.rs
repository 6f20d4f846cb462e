//! `cachescope mrc`: a miss-ratio curve for many cache sizes from one pass over the trace.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::method::{self, MrcOptions, MrcRun};
use cachescope::reuse::{Mrc, Options};
use cachescope::sampling::{Cold, Profile, SamplerOptions};

use super::{Passes, open_chunked};
use crate::args::{MrcArgs, MrcMethod, OutputFormat, SamplingArgs};
use crate::{input, output};

/// The curve the flags ask for: the library's [`method::mrc`] decides the passes, [`Passes`]
/// runs them (progress bar, MPI ranks); a profile is modelled without a pass.
pub fn run(args: MrcArgs) -> Result<()> {
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let opts = MrcOptions {
        method: args.method,
        policy: args.policy,
        sizes: args.sizes.resolve()?,
        options,
        seed: args.input.params.seed,
        rate: args.sampling.rate,
        slot: args.sampling.slot,
        ways: args.ways,
        cold: if args.estimate_cold {
            Cold::Estimate
        } else {
            Cold::Exclude
        },
        mini_rate: args.mini_rate,
        mini_min_sets: args.mini_min_sets,
        threads: args.run.threads,
        hotl_variant: args.hotl_variant,
    };
    // Asking a model for another policy fails before any program runs.
    opts.policy()?;
    let run = if let Some(profile) = input::profile(&args.input)? {
        // A profile needs no pass: rank 0 alone models it under MPI.
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank() {
            return Ok(());
        }
        method::mrc_of_profile(profile, &opts)?
    } else {
        // Under MPI the exact LRU curve, the paper's HOTL curves and the sampled curves
        // distribute; exact simulation and time-local HOTL (one ordered pass) run on rank 0.
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank()
            && !match (args.method, opts.policy()?) {
                (MrcMethod::Exact, crate::args::ReplacementPolicy::Lru) => true,
                (MrcMethod::Hotl, _) => {
                    args.hotl_variant == cachescope::models::hotl::HotlVariant::Paper
                }
                (MrcMethod::HotlRt | MrcMethod::Statcache | MrcMethod::Statstack, _) => true,
                _ => false,
            }
        {
            return Ok(());
        }
        // A program sampled inside the tool: only the samples cross the pipe.
        let live = if opts.method.is_sampled() {
            crate::program::sample_in_tool(&args.input, opts.sampler(), args.run.quiet)?
        } else {
            None
        };
        match live {
            Some(profile) => method::mrc_of_profile(profile, &opts)?,
            None => {
                let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
                    return Ok(());
                };
                match method::mrc(&mut trace, &opts, &mut Passes(&args.run))? {
                    Some(run) => run,
                    None => return Ok(()), // another MPI rank: rank 0 prints
                }
            }
        }
    };
    let notes = notes(&run, &opts);
    output::print(&render(
        &run.mrc,
        args.output_format(),
        args.include_instructions,
        &notes,
    ))
}

/// The comment lines of the table: the samples behind a model, the miniatures' rate.
fn notes(run: &MrcRun, opts: &MrcOptions) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(p) = &run.profile {
        notes.push(sample_note(p));
    }
    if opts.method == MrcMethod::Mini {
        notes.push(format!(
            "miniature caches at rate {}, at least {} sets each",
            opts.mini_rate, opts.mini_min_sets
        ));
    }
    notes
}

/// The sampler settings of the flags; the seed is the run's `--seed`.
pub fn sampler_options(
    sampling: &SamplingArgs,
    params: &crate::args::WorkloadParams,
    options: &Options,
) -> SamplerOptions {
    SamplerOptions {
        rate: sampling.rate,
        seed: params.seed,
        slot_refs: sampling.slot,
        line_size: options.line_size,
        include_instructions: options.include_instructions,
    }
}

/// One comment line describing the samples behind a modelled curve.
fn sample_note(p: &Profile) -> String {
    format!(
        "from {} samples ({} reuses, {} dangling) of {} references at rate {}, {} time slots",
        super::thousands(p.samples().len() as u64),
        super::thousands(p.reuses()),
        super::thousands(p.dangling()),
        super::thousands(p.refs()),
        p.rate(),
        p.slot_count()
    )
}

/// The curve as a table, CSV or JSON; `notes` become comment lines of the table.
pub fn render(mrc: &Mrc, format: OutputFormat, unified: bool, notes: &[String]) -> String {
    match format {
        OutputFormat::Json => serde_json::to_string_pretty(mrc).expect("serializable") + "\n",
        OutputFormat::Csv => {
            let mut o = String::from("size_bytes,lines,miss_ratio,miss_ratio_warm\n");
            for p in &mrc.points {
                let _ = writeln!(
                    o,
                    "{},{},{},{}",
                    p.size_bytes,
                    p.lines,
                    p.miss_ratio.map(|r| r.to_string()).unwrap_or_default(),
                    p.miss_ratio_warm
                );
            }
            o
        }
        OutputFormat::Table => {
            let refs = if unified {
                "data and instruction"
            } else {
                "data"
            };
            let mut o = format!(
                "# {} {} miss-ratio curve, {}-B lines, per {refs} reference\n\
                 # miss_ratio counts cold (first-reference) misses; miss_ratio_warm leaves them out\n",
                mrc.method,
                mrc.policy.to_uppercase(),
                mrc.line_size
            );
            if mrc.points.iter().all(|p| p.miss_ratio.is_none()) {
                o += "# this model does not estimate cold misses (see --estimate-cold): miss_ratio is -\n";
            }
            for n in notes {
                let _ = writeln!(o, "# {n}");
            }
            let _ = writeln!(
                o,
                "{:>12} {:>12} {:>12} {:>16}",
                "size", "lines", "miss_ratio", "miss_ratio_warm"
            );
            for p in &mrc.points {
                let _ = writeln!(
                    o,
                    "{:>12} {:>12} {:>12} {:>16.6}",
                    human_size(p.size_bytes),
                    p.lines,
                    p.miss_ratio.map_or("-".into(), |r| format!("{r:.6}")),
                    p.miss_ratio_warm
                );
            }
            o
        }
    }
}

/// `32768` → `32K`, `1536` → `1.5K`, `100` → `100B`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let v = bytes as f64 / unit as f64;
            return if bytes % unit == 0 {
                format!("{}{name}", bytes / unit)
            } else {
                format!("{v:.2}{name}").replace(".00", "")
            };
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::human_size;

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(32768), "32K");
        assert_eq!(human_size(1536), "1.50K");
        assert_eq!(human_size(100), "100B");
        assert_eq!(human_size(64 << 20), "64M");
    }
}
