//! `cachescope l2`: local L2 miss ratios predicted from the L1 stack-distance histogram
//! (Ji, Ling & Liu), optionally beside an exact two-level simulation of the same pass.

use cachescope::units::size_label;
use std::fmt::Write as _;

use anyhow::{Result, bail};

use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::reuse::{Mrc, Options, StackDistanceAnalysis};
use cachescope::sim::Policy;

use super::{drive_chunked, drive_split, open_chunked};
use crate::args::{L2Args, L2Variant, ReplacementPolicy};
use crate::{input, output};
use cachescope::parallel::StackDistancePlan;

pub fn run(args: L2Args) -> Result<()> {
    let line = args.run.line_size;
    let l1_lines = args.l1 / line.bytes();
    if l1_lines == 0 {
        bail!(
            "--l1 {}: smaller than one {}-byte line",
            args.l1,
            line.bytes()
        );
    }
    let policy = match args.policy {
        ReplacementPolicy::Lru => Policy::Lru,
        ReplacementPolicy::Random => Policy::Random {
            seed: args.input.params.seed,
        },
        _ => bail!(
            "the L2 model covers LRU and random replacement; other policies' curves are mrc --policy"
        ),
    };
    let variant = match args.variant {
        L2Variant::Paper => Variant::Paper,
        L2Variant::Footprint => Variant::Footprint,
        L2Variant::Resident => Variant::FootprintResident,
        L2Variant::Fills => Variant::Fills,
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
            None => match drive_chunked(&mut trace, &StackDistancePlan { options }, &args.run)? {
                Some(d) => d,
                None => return Ok(()), // another MPI rank: rank 0 prints
            },
            // The two-level simulation does not split in time: side by side, one decode.
            Some(s) => {
                let mut sd = StackDistanceAnalysis::new(options);
                drive_split(&mut trace, &mut [&mut sd, s], &args.run)?;
                sd.finish()
            }
        };
        simulated = sim.map(|s| s.finish().mrc());
        L1Histogram::from_stack_distances(&distances)
    };
    let model = l2_mrc(&hist, l1_lines, &args.l2, policy, variant)?;
    let text = if args.json {
        let mut v = serde_json::to_value(&model)?;
        v["l1_lines"] = l1_lines.into();
        if let Some(s) = &simulated {
            v["simulated"] = serde_json::to_value(s)?;
        }
        serde_json::to_string_pretty(&v)? + "\n"
    } else if args.csv {
        let mut o =
            String::from("size_bytes,lines,miss_ratio,miss_ratio_warm,simulated_miss_ratio\n");
        for (i, p) in model.points.iter().enumerate() {
            let sim = simulated
                .as_ref()
                .and_then(|s| s.points[i].miss_ratio)
                .map(|r| r.to_string())
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "{},{},{},{},{sim}",
                p.size_bytes,
                p.lines,
                p.miss_ratio.map(|r| r.to_string()).unwrap_or_default(),
                p.miss_ratio_warm
            );
        }
        o
    } else {
        let mut o = format!(
            "# {} L2 miss ratios ({} replacement), L1 {} = {} lines fully-associative LRU, {}-B lines\n\
             # local ratios: L2 misses per L2 reference (per L1 miss); miss_ratio counts cold misses\n",
            model.method,
            model.policy,
            size_label(args.l1),
            l1_lines,
            line.bytes()
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
                mr.map_or("-".into(), |r| format!("{r:.6}")),
                p.miss_ratio_warm,
                sim.map_or("-".into(), |r| format!("{r:.6}")),
                match (mr, sim) {
                    (Some(a), Some(b)) => format!("{:+.2}", 100.0 * (a - b)),
                    _ => "-".into(),
                }
            );
        }
        o
    };
    output::print(&text)
}
