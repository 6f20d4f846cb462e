//! `cachescope mrc`: a miss-ratio curve for many cache sizes from one pass over the trace.

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::Result;
use cachescope::method::{self, MrcOptions, MrcRun};
use cachescope::reuse::{Mrc, MrcPoint, Options};
use cachescope::sampling::{Cold, Profile, SamplerOptions};
use cachescope::units::{size_label, thousands};
use clap::Args;

use super::{open_chunked, passes};
use crate::args::{InputArgs, RunArgs, SampledArgs, SamplingArgs, SizeArgs, values};
use crate::input;
use crate::output::{self, Format, Output};

mod page;
mod per_thread;

/// The replacement policy a curve models: the library's, taken by name.
pub use cachescope::method::CurvePolicy as ReplacementPolicy;
/// How a miss-ratio curve is obtained: the library's methods, taken by name.
pub use cachescope::method::Method as MrcMethod;

#[derive(Debug, Args)]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// How the curve is obtained.
    #[arg(help_heading = heading::ANALYSIS, long, value_enum, default_value = "exact")]
    pub method: MrcMethod,
    /// Replacement policy [default: lru; random for statcache]. StatCache models random
    /// replacement, StatStack and HOTL model LRU.
    #[arg(help_heading = heading::ANALYSIS, long, value_enum)]
    pub policy: Option<ReplacementPolicy>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    /// Miniature simulation's sampling rate, in (0, 1] (`--method mini`).
    #[arg(help_heading = heading::SAMPLING, long, default_value_t = 0.01)]
    pub mini_rate: f64,
    /// Miniature simulation with --ways: every miniature keeps at least this many sets
    /// (caches with no more are simulated whole); 1 scales every cache by --mini-rate alone.
    #[arg(help_heading = heading::SAMPLING, long, default_value_t = cachescope::method::DEFAULT_MINI_MIN_SETS)]
    pub mini_min_sets: u64,
    /// Miniature simulation's plain estimate (misses over the references kept, as published)
    /// instead of the default, misses over the references the rate should keep (SHARDS's
    /// adjustment: a few hot lines kept or not no longer move it; docs/accuracy/mini.md).
    #[arg(help_heading = heading::SAMPLING, long)]
    pub mini_unadjusted: bool,
    /// Models: also estimate cold misses (StatCache/StatStack from the samples whose line is
    /// never referenced again), so `miss_ratio` is printed too.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub estimate_cold: bool,
    /// Set-associative caches of this many ways, estimated with Smith's formula from the
    /// stack-distance distribution (exact LRU or HOTL's), instead of fully associative ones.
    #[arg(help_heading = heading::CACHE, long, value_name = "WAYS")]
    pub ways: Option<u32>,
    /// `--method hotl`'s reading. `local` (the default): each reuse's window footprint from
    /// the stretch of the trace it ends in, closer at the cliffs of programs in phases
    /// (docs/accuracy/hotl.md); `paper`: HOTL's conversion of the whole trace's footprint.
    /// With `--sampled`, `local` is StatStack's time-local model on the reuse samples (its
    /// estimate of a reuse's distance is the time-local reading's: docs/sampled.md) and
    /// `paper` converts the sampled lines' footprint.
    #[arg(help_heading = heading::ANALYSIS, long, value_enum, default_value = "local")]
    pub hotl_variant: cachescope::models::hotl::HotlVariant,
    #[command(flatten)]
    pub sizes: SizeArgs,
    /// Count instruction fetches too (a unified cache).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub include_instructions: bool,
    /// A curve per thread of the trace, in the same single pass (every method); each equals
    /// the curve `--thread ID` gives.
    #[arg(help_heading = heading::ANALYSIS, long, conflicts_with = "thread")]
    pub per_thread: bool,
    /// Page-level locality (docs/tlb.md): the curve of pages of SIZE (4K, 2M), each cache a
    /// fully associative TLB; points keyed by `entries` and the `covered_bytes` they map too.
    /// Replaces --line-size; without --sizes or --range, 1 to 65536 entries. Every method.
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "SIZE", value_parser = values::page)]
    pub page: Option<cachescope::LineSize>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object: {"method", "policy", "line_size", "points": [...]}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

/// The curve the flags ask for: the library's [`method::mrc`] decides the passes, [`passes`]
/// runs them (progress bar, MPI ranks); a profile is modelled without a pass.
pub fn run(args: MrcArgs) -> Result<()> {
    let options = Options {
        line_size: args.page.unwrap_or(args.run.line_size),
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let sizes = match args.page {
        Some(page) if args.sizes.sizes.is_none() && args.sizes.range.is_none() => {
            let max = cachescope::tlb::MAX_ENTRIES;
            cachescope::tlb::entry_sizes(page, 1, max, args.sizes.per_octave)?
        }
        _ => args.sizes.resolve()?,
    };
    let opts = MrcOptions {
        method: args.method,
        policy: args.policy,
        sizes,
        options,
        seed: args.input.params.seed,
        // Under --sampled, --rate is the lines' share and the sampler keeps its default.
        rate: args
            .sampling
            .rate
            .filter(|_| !args.sampled.sampled)
            .unwrap_or(cachescope::sampling::DEFAULT_RATE),
        slot: args.sampling.slot,
        ways: args.ways,
        cold: if args.estimate_cold {
            Cold::Estimate
        } else {
            Cold::Exclude
        },
        mini_rate: args.mini_rate,
        mini_min_sets: args.mini_min_sets,
        mini_unadjusted: args.mini_unadjusted,
        threads: args.run.threads,
        hotl_variant: args.hotl_variant,
    };
    // Asking a model for another policy fails before any program runs.
    opts.policy()?;
    // Under --page the sample keeps whole pages (hashed by page), so each sampled page keeps
    // every reference to it, as SHARDS keeps whole lines.
    if let Some(spatial) = args.sampled.spatial(
        args.sampling.rate,
        args.input.params.seed,
        args.page.unwrap_or(args.run.line_size),
    ) {
        return sampled(&args, &opts, spatial);
    }
    if args.per_thread {
        return per_thread::run(&args, &opts);
    }
    let run = if let Some(profile) = input::profile(&args.input)? {
        // A profile needs no pass: rank 0 alone models it under MPI.
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank() {
            return Ok(());
        }
        method::mrc_of_profile(profile, &opts)?
    } else {
        // Under MPI the passes that distribute (exact LRU, the paper's HOTL, reuse times, the
        // samples) run on every rank; simulations and time-local HOTL (one ordered pass) run on
        // rank 0, which alone reports an error.
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank()
            && !opts
                .measure()
                .is_ok_and(cachescope::method::Measure::is_distributed)
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
                method::mrc(&mut trace, &opts, &mut passes(&args.run))?
            }
        }
    };
    if run.refs == 0 {
        super::note_nothing_counted(args.run.quiet, args.include_instructions, true);
    }
    let notes = notes(&run, &opts);
    if args.page.is_some() {
        let curve = page::PageOutput {
            curve: cachescope::tlb::PageCurve::from(&run.mrc),
            notes,
        };
        return output::emit(&curve, Format::from_flags(args.json, args.csv));
    }
    let curve = Curve {
        mrc: &run.mrc,
        unified: args.include_instructions,
        notes,
    };
    output::emit(&curve, Format::from_flags(args.json, args.csv))
}

/// `mrc --sampled`: the curve of the trace read as a sampled stream (docs/sampled.md).
fn sampled(
    args: &MrcArgs,
    opts: &MrcOptions,
    spatial: cachescope::spatial::SpatialOptions,
) -> Result<()> {
    if args.per_thread {
        anyhow::bail!(
            "--per-thread is not available with --sampled; give --thread ID for one thread"
        );
    }
    if input::profile(&args.input)?.is_some() {
        anyhow::bail!("--sampled reads a trace, a workload or a program, not a profile");
    }
    // A program runs under the tool's line filter (and StatCache's sampler, for a profile).
    let reuse = (opts.measure()? == cachescope::method::Measure::Profile).then(|| opts.sampler());
    let (mut trace, _) = input::open_sampled(
        &args.input,
        args.run.line_size,
        (spatial, reuse),
        false,
        args.run.quiet,
    )?;
    let run = method::mrc_sampled(&mut trace, opts, spatial, &mut passes(&args.run))?;
    let format = Format::from_flags(args.json, args.csv);
    // The `# sampled (…)` line and, in JSON, the `sampled` object with the rate.
    if args.page.is_some() {
        let curve = page::PageOutput {
            curve: cachescope::tlb::PageCurve::from(&run.mrc),
            notes: notes(&run, opts),
        };
        return output::emit_sampled(&curve, format, Some(spatial), &run.mrc.method);
    }
    let curve = Curve {
        mrc: &run.mrc,
        unified: args.include_instructions,
        notes: notes(&run, opts),
    };
    output::emit_sampled(&curve, format, Some(spatial), &run.mrc.method)
}

/// The comment lines of the table: the samples behind a model, the miniatures' rate.
pub(super) fn notes(run: &MrcRun, opts: &MrcOptions) -> Vec<String> {
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
        rate: sampling.rate.unwrap_or(cachescope::sampling::DEFAULT_RATE),
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
        thousands(p.samples().len() as u64),
        thousands(p.reuses()),
        thousands(p.dangling()),
        thousands(p.refs()),
        p.rate(),
        p.slot_count()
    )
}

/// A curve as the three outputs: `notes` become comment lines of the table; `unified` says
/// instruction fetches were counted.
pub struct Curve<'a> {
    pub mrc: &'a Mrc,
    pub unified: bool,
    pub notes: Vec<String>,
}

impl Output for Curve<'_> {
    fn json(&self) -> Result<String> {
        output::json(self.mrc)
    }

    fn csv(&self) -> Result<String> {
        let mut o = format!("{CSV_HEADER}\n");
        for p in &self.mrc.points {
            let _ = writeln!(o, "{}", csv_cells(p));
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let mrc = self.mrc;
        let refs = if self.unified {
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
        for n in &self.notes {
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
                size_label(p.size_bytes),
                p.lines,
                ratio_cell(p.miss_ratio),
                p.miss_ratio_warm
            );
        }
        o
    }
}

/// The CSV columns of a curve's point ([`csv_cells`]); `l2` adds its simulated ratio after them.
pub(super) const CSV_HEADER: &str = "size_bytes,lines,miss_ratio,miss_ratio_warm";

/// A point's [`CSV_HEADER`] cells, a miss ratio not estimated left empty: `mrc` and `l2` print
/// curves' points alike.
pub(super) fn csv_cells(p: &MrcPoint) -> String {
    let cold = p.miss_ratio.map(|r| r.to_string()).unwrap_or_default();
    format!("{},{},{cold},{}", p.size_bytes, p.lines, p.miss_ratio_warm)
}

/// A miss ratio in a table: six decimals, `-` where it is not estimated (or not simulated).
pub(super) fn ratio_cell(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.6}"))
}
