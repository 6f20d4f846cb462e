//! `cachescope l2`: local L2 miss ratios predicted from the L1 stack-distance histogram
//! (Ji, Ling & Liu), optionally beside an exact two-level simulation of the same pass.

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::parallel::StackDistancePlan;
use cachescope::pass::{Independent, Plan};
use cachescope::reuse::{Mrc, Options, StackDistanceAnalysis};
use cachescope::sim::Policy;
use cachescope::units::size_label;
use clap::Args;

use super::mrc::{CSV_HEADER, csv_cells, ratio_cell};
use super::{drive, open_chunked};
use crate::args::{InputArgs, RunArgs, values};
use crate::input;
use crate::output::{self, Format, Output};

#[derive(Debug, Args)]
pub struct L2Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// L1 size (fully-associative LRU).
    #[arg(help_heading = heading::CACHE, long = "l1-size", visible_alias = "l1", value_name = "SIZE", default_value = "32K", value_parser = values::size)]
    pub l1: u64,
    /// L2 sizes, comma separated (fully associative); one level's geometry SIZE,ASSOC,LINE is
    /// `--L2` in `simulate` and `phases`.
    #[arg(help_heading = heading::CACHE, long = "l2-sizes", visible_alias = "l2", value_name = "LIST", value_delimiter = ',', default_value = "128K,256K,512K,1M,2M", value_parser = values::size)]
    pub l2: Vec<u64>,
    /// L2 replacement policy (the model covers these two; other policies' curves are
    /// `mrc --policy`).
    #[arg(help_heading = heading::CACHE, long, value_enum, default_value = "lru")]
    pub policy: L2Policy,
    /// Reading of the equations: `fills` (the default: `resident`'s epochs, and for a random
    /// L2 the survival averaged over the whole distribution of L2 fills between two uses of a
    /// line, counting only fills that evict; LRU as `resident`), `resident` (the corrected
    /// epoch-miss counts plus the misses while a line sits in the L1, 0.1 pp mean error for
    /// LRU on real programs; random through StatCache), `footprint` (the corrected counts
    /// alone), or `paper` (Eqs. 3-9 as the paper prints them, read as intended: several pp
    /// off; for comparison with the paper).
    #[arg(help_heading = heading::ANALYSIS, long, value_enum, default_value_t = L2Variant::Fills)]
    pub variant: L2Variant,
    /// Also simulate the two levels exactly in the same pass and print both (traces only).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub simulate: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON (the `points` shape; with --simulate also `simulated`).
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

/// The L2 replacement policies the model covers (`--policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum L2Policy {
    /// Least recently used
    Lru,
    /// Random replacement (seeded by --seed)
    Random,
}

/// The reading of Ji et al.'s L2 equations (`l2 --variant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum L2Variant {
    /// Eqs. 3-9 as printed, read as intended.
    Paper,
    /// Expected L1 misses per epoch from the fill-time argument.
    Footprint,
    /// `footprint` plus the misses while the line sits in the L1 before the epoch.
    Resident,
    /// `resident`, with random replacement over the whole distribution of L2 fills.
    Fills,
}

impl From<L2Variant> for Variant {
    fn from(v: L2Variant) -> Variant {
        match v {
            L2Variant::Paper => Variant::Paper,
            L2Variant::Footprint => Variant::Footprint,
            L2Variant::Resident => Variant::FootprintResident,
            L2Variant::Fills => Variant::Fills,
        }
    }
}

pub fn run(args: L2Args) -> Result<()> {
    let line = args.run.line_size;
    let l1_lines = args.l1 / line.bytes();
    if l1_lines == 0 {
        bail!(
            "--l1-size {}: smaller than one {}-byte line",
            args.l1,
            line.bytes()
        );
    }
    let policy = match args.policy {
        L2Policy::Lru => Policy::Lru,
        L2Policy::Random => Policy::Random {
            seed: args.input.params.seed,
        },
    };
    let mut simulated: Option<Mrc> = None;
    let profile = input::profile(&args.input)?;
    // Under MPI only the L1 histogram of a trace distributes (a profile needs no pass, and
    // the two-level simulation does not split in time): rank 0 does the rest alone.
    #[cfg(feature = "mpi")]
    if (profile.is_some() || args.simulate) && crate::mpi::is_secondary_rank() {
        return Ok(());
    }
    let hist = if let Some(profile) = profile {
        if args.simulate {
            bail!("--simulate needs the trace, not a sampling profile");
        }
        profile.expect_line_size(line)?;
        L1Histogram::from_profile(&profile)?
    } else {
        let options = Options {
            line_size: line,
            ..Options::default()
        };
        let mut sim = if args.simulate {
            Some(TwoLevelAnalysis::new(
                line.bytes(),
                l1_lines,
                &args.l2,
                policy,
            )?)
        } else {
            None
        };
        let Some(mut trace) = open_chunked(&args.input, line)? else {
            return Ok(());
        };
        let distances = match sim.as_mut() {
            // The histogram alone merges exactly over chunks of the trace.
            None => drive(&mut trace, Plan(&StackDistancePlan { options }), &args.run)?,
            // The two-level simulation does not split in time: side by side, one decode.
            Some(s) => {
                let mut sd = StackDistanceAnalysis::new(options);
                drive(&mut trace, Independent(&mut [&mut sd, s]), &args.run)?;
                sd.finish()
            }
        };
        simulated = sim.map(|s| s.finish().mrc());
        L1Histogram::from_stack_distances(&distances)
    };
    if hist.refs == 0.0 {
        super::note_nothing_counted(args.run.quiet, false, false);
    }
    let model = l2_mrc(&hist, l1_lines, &args.l2, policy, args.variant.into())?;
    let out = Prediction {
        model,
        simulated,
        l1: args.l1,
        l1_lines,
        line_size: line.bytes(),
    };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

/// The predicted curve, beside the simulated one with --simulate.
struct Prediction {
    model: Mrc,
    simulated: Option<Mrc>,
    l1: u64,
    l1_lines: u64,
    line_size: u64,
}

impl Output for Prediction {
    fn json(&self) -> Result<String> {
        let Prediction {
            model,
            simulated,
            l1_lines,
            ..
        } = self;
        let mut v = serde_json::to_value(model)?;
        v["l1_lines"] = (*l1_lines).into();
        if let Some(s) = simulated {
            v["simulated"] = serde_json::to_value(s)?;
        }
        output::json(&v)
    }

    fn csv(&self) -> Result<String> {
        let Prediction {
            model, simulated, ..
        } = self;
        let mut o = format!("{CSV_HEADER},simulated_miss_ratio\n");
        for (i, p) in model.points.iter().enumerate() {
            let sim = simulated
                .as_ref()
                .and_then(|s| s.points[i].miss_ratio)
                .map(|r| r.to_string())
                .unwrap_or_default();
            let _ = writeln!(o, "{},{sim}", csv_cells(p));
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let Prediction {
            model,
            simulated,
            l1_lines,
            ..
        } = self;
        let mut o = format!(
            "# {} L2 miss ratios ({} replacement), L1 {} = {} lines fully-associative LRU, {}-B lines\n\
             # local ratios: L2 misses per L2 reference (per L1 miss); miss_ratio counts cold misses\n",
            model.method,
            model.policy,
            size_label(self.l1),
            l1_lines,
            self.line_size
        );
        let _ = writeln!(
            o,
            "{:>10} {:>10} {:>12} {:>16} {:>12} {:>10}",
            "L2 size", "lines", "miss_ratio", "miss_ratio_warm", "simulated", "error pp"
        );
        for (i, p) in model.points.iter().enumerate() {
            let sim = simulated.as_ref().and_then(|s| s.points[i].miss_ratio);
            let mr = p.miss_ratio;
            let _ = writeln!(
                o,
                "{:>10} {:>10} {:>12} {:>16.6} {:>12} {:>10}",
                size_label(p.size_bytes),
                p.lines,
                ratio_cell(mr),
                p.miss_ratio_warm,
                ratio_cell(sim),
                match (mr, sim) {
                    (Some(a), Some(b)) => format!("{:+.2}", 100.0 * (a - b)),
                    _ => "-".into(),
                }
            );
        }
        o
    }
}
