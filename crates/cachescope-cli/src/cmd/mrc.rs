//! `cachescope mrc`: a miss-ratio curve for many cache sizes from one pass over the trace.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::models::{hotl, smith, statcache, statstack};
use cachescope::parallel::{FootprintPlan, ReuseTimePlan, StackDistancePlan};
use cachescope::reuse::{Mrc, Options, RandomReplacementAnalysis};
use cachescope::sampling::{Cold, Profile, SamplerOptions};

use super::{drive, drive_chunked, drive_sampled, open_chunked};
use crate::args::{MrcArgs, MrcMethod, OutputFormat, ReplacementPolicy, SamplingArgs};
use crate::{input, output};

pub fn run(args: MrcArgs) -> Result<()> {
    let sizes = args.sizes.resolve()?;
    let policy = policy_of(args.method, args.policy)?;
    let cold = if args.estimate_cold {
        Cold::Estimate
    } else {
        Cold::Exclude
    };
    let mut notes = Vec::new();
    if let Some(profile) = input::profile(&args.input)? {
        // A profile needs no pass: rank 0 alone models it under MPI.
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank() {
            return Ok(());
        }
        if !matches!(args.method, MrcMethod::Statcache | MrcMethod::Statstack) {
            bail!(
                "{} is a sampling profile: model it with --method statcache or --method statstack \
                 (the other methods need the trace)",
                profile.source()
            );
        }
        profile.expect_line_size(args.run.line_size)?;
        notes.push(sample_note(&profile));
        let mrc = model(args.method, &profile, &sizes, cold, args.run.threads)?;
        return output::print(&render(
            &mrc,
            args.output_format(),
            args.include_instructions,
            &notes,
        ));
    }
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let simulated = sim_policy(policy, args.input.params.seed);
    if args.ways.is_some()
        && simulated.is_none()
        && !matches!(
            (args.method, policy),
            (MrcMethod::Exact | MrcMethod::Hotl, ReplacementPolicy::Lru)
        )
    {
        bail!(
            "--ways (Smith's formula) needs an LRU stack-distance distribution: --method exact or hotl"
        );
    }
    // Under MPI the exact LRU curve, the HOTL curves and the sampled curves distribute; exact
    // random replacement runs on rank 0 alone.
    #[cfg(feature = "mpi")]
    if crate::mpi::is_secondary_rank()
        && !matches!(
            (args.method, policy),
            (MrcMethod::Exact, ReplacementPolicy::Lru)
                | (
                    MrcMethod::Hotl
                        | MrcMethod::HotlRt
                        | MrcMethod::Statcache
                        | MrcMethod::Statstack,
                    _
                )
        )
    {
        return Ok(());
    }
    // A program sampled inside the tool: only the samples cross the pipe.
    if matches!(args.method, MrcMethod::Statcache | MrcMethod::Statstack) {
        let opts = sampler_options(&args.sampling, &args.input.params, &options);
        if let Some(profile) = crate::program::sample_in_tool(&args.input, opts, args.run.quiet)? {
            notes.push(sample_note(&profile));
            let mrc = model(args.method, &profile, &sizes, cold, args.run.threads)?;
            return output::print(&render(
                &mrc,
                args.output_format(),
                args.include_instructions,
                &notes,
            ));
        }
    }
    let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
        return Ok(());
    };
    let mrc = match (args.method, policy) {
        (MrcMethod::Exact, ReplacementPolicy::Lru) => {
            let plan = StackDistancePlan { options };
            let Some(distances) = drive_chunked(&mut trace, &plan, &args.run)? else {
                return Ok(()); // another MPI rank: rank 0 prints
            };
            match args.ways {
                Some(ways) => smith::set_associative_mrc(
                    &smith::Distances::from_stack_distances(&distances),
                    ways,
                    &sizes,
                )?,
                None => distances.mrc(&sizes),
            }
        }
        (MrcMethod::Exact, ReplacementPolicy::Opt) => {
            let mut opt = cachescope::opt::OptAnalysis::new(options)?;
            drive(&mut trace, &mut [&mut opt], &args.run)?;
            opt.finish(&sizes)?
        }
        (MrcMethod::Exact, ReplacementPolicy::Random) if args.ways.is_none() => {
            if sizes.len() > 4096 {
                bail!(
                    "exact random replacement simulates one cache per size; {} sizes is too many \
                     (at most 4096)",
                    sizes.len()
                );
            }
            let mut rr = RandomReplacementAnalysis::new(options, &sizes, args.input.params.seed);
            drive(&mut trace, &mut [&mut rr], &args.run)?;
            rr.finish()
        }
        (MrcMethod::Statcache | MrcMethod::Statstack, _) => {
            let opts = sampler_options(&args.sampling, &args.input.params, &options);
            let Some(profile) = drive_sampled(&mut trace, opts, &args.run)? else {
                return Ok(());
            };
            let profile = profile.with_source(trace.source().to_string());
            notes.push(sample_note(&profile));
            model(args.method, &profile, &sizes, cold, args.run.threads)?
        }
        (MrcMethod::Hotl, _) => {
            let plan = FootprintPlan::new(options, &[])?;
            let Some(fp) = drive_chunked(&mut trace, &plan, &args.run)? else {
                return Ok(());
            };
            let filmer = hotl::Filmer::new(&fp);
            match args.ways {
                Some(ways) => smith::set_associative_mrc(&filmer.stack_distances(), ways, &sizes)?,
                None => filmer.mrc(&sizes),
            }
        }
        (MrcMethod::HotlRt, _) => {
            let Some(rt) = drive_chunked(&mut trace, &ReuseTimePlan { options }, &args.run)? else {
                return Ok(());
            };
            hotl::reuse_time_mrc(&rt, &sizes)
        }
        // Every other policy, set-associative curves, and miniatures: one cache per size.
        (MrcMethod::Exact | MrcMethod::Mini, _) => {
            let Some(p) = simulated else {
                bail!(
                    "--method mini simulates caches: OPT's exact curve is --method exact --policy opt"
                );
            };
            let rate = if args.method == MrcMethod::Mini {
                args.mini_rate
            } else {
                1.0
            };
            let mut mini = cachescope::mini::MiniSim::new(options, p, args.ways, &sizes, rate)?;
            drive(&mut trace, &mut [&mut mini], &args.run)?;
            let mut mrc = mini.finish();
            if args.method == MrcMethod::Exact {
                mrc.method = "exact".into();
            } else {
                notes.push(format!("miniature caches at rate {rate}"));
            }
            mrc
        }
    };
    output::print(&render(
        &mrc,
        args.output_format(),
        args.include_instructions,
        &notes,
    ))
}

/// The policy a method models; an error when the user asks a model for another one.
fn policy_of(method: MrcMethod, asked: Option<ReplacementPolicy>) -> Result<ReplacementPolicy> {
    let modelled = match method {
        MrcMethod::Exact | MrcMethod::Mini => return Ok(asked.unwrap_or(ReplacementPolicy::Lru)),
        MrcMethod::Statcache => ReplacementPolicy::Random,
        MrcMethod::Statstack | MrcMethod::Hotl | MrcMethod::HotlRt => ReplacementPolicy::Lru,
    };
    match asked {
        Some(p) if p != modelled => bail!(
            "--method {} models {} replacement only; use --method exact for {}",
            method_name(method),
            policy_name(modelled),
            policy_name(p)
        ),
        _ => Ok(modelled),
    }
}

fn method_name(m: MrcMethod) -> &'static str {
    match m {
        MrcMethod::Exact => "exact",
        MrcMethod::Statcache => "statcache",
        MrcMethod::Statstack => "statstack",
        MrcMethod::Hotl => "hotl",
        MrcMethod::HotlRt => "hotl-rt",
        MrcMethod::Mini => "mini",
    }
}

fn policy_name(p: ReplacementPolicy) -> &'static str {
    match p {
        ReplacementPolicy::Lru => "LRU",
        ReplacementPolicy::Random => "random",
        ReplacementPolicy::Opt => "OPT",
        ReplacementPolicy::Fifo => "FIFO",
        ReplacementPolicy::Plru => "tree-PLRU",
        ReplacementPolicy::Srrip => "SRRIP",
        ReplacementPolicy::Brrip => "BRRIP",
        ReplacementPolicy::Drrip => "DRRIP",
    }
}

/// The simulator policy of a curve's policy (`None` for OPT, which looks ahead).
fn sim_policy(p: ReplacementPolicy, seed: u64) -> Option<cachescope::sim::Policy> {
    use cachescope::sim::Policy;
    Some(match p {
        ReplacementPolicy::Lru => Policy::Lru,
        ReplacementPolicy::Random => Policy::Random { seed },
        ReplacementPolicy::Opt => return None,
        ReplacementPolicy::Fifo => Policy::Fifo,
        ReplacementPolicy::Plru => Policy::Plru,
        ReplacementPolicy::Srrip => Policy::Srrip,
        ReplacementPolicy::Brrip => Policy::Brrip { seed },
        ReplacementPolicy::Drrip => Policy::Drrip { seed },
    })
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

/// Runs a sampled model on a profile.
fn model(
    method: MrcMethod,
    profile: &Profile,
    sizes: &[u64],
    cold: Cold,
    threads: usize,
) -> Result<Mrc> {
    Ok(match method {
        MrcMethod::Statcache => statcache::mrc_on(profile, sizes, cold, threads)?,
        MrcMethod::Statstack => statstack::mrc(profile, sizes, cold)?,
        _ => unreachable!("only sampled models take a profile"),
    })
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
