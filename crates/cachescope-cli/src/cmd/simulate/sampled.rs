//! `simulate --sampled`: each `--cache` cache as a miniature inside the sampled stream
//! (`cachescope::mini::MiniSim::of_sample`, docs/sampled.md), its misses over the references
//! the rate should keep (SHARDS's adjustment), reported as the full cache's counts.

use anyhow::{Result, bail};
use cachescope::analysis::Analysis;
use cachescope::mini::MiniSim;
use cachescope::pass::Analyses;
use cachescope::sim::{LevelReport, LineMapping, MissStats, Policy, SimReport};
use cachescope::spatial::SpatialOptions;

use super::{Opener, SimulateArgs, Simulated, Simulations};
use crate::cmd::drive;

/// Simulates every `--cache` of `args` under `policy` on the stream `spatial` samples, of the
/// trace `open` gives.
pub fn run(
    args: &SimulateArgs,
    policy: Policy,
    spatial: SpatialOptions,
    open: &mut Opener<'_>,
) -> Result<Simulated> {
    let hierarchy = [&args.i1, &args.d1, &args.l2, &args.ll, &args.l3]
        .iter()
        .any(|f| f.is_some());
    if hierarchy
        || args.cachegrind
        || args.cores.is_some()
        || args.three_c
        || args.straddle
        || args.utilization
        || !args.prefetch.is_empty()
        || super::hardware::writes(args).is_some()
        || policy == Policy::Opt
    {
        bail!(
            "--sampled simulates independent --cache caches of a replacement policy as \
             miniatures; hierarchies, --cachegrind, --cores, --3c, --straddle, --utilization, \
             --prefetch, --writebacks and --policy opt need every line"
        );
    }
    if args.caches.is_empty() {
        bail!("nothing to simulate: give --cache SIZE,ASSOC,LINE (repeatable)");
    }
    let line = spatial.line_size;
    let options = cachescope::reuse::Options {
        line_size: line,
        ..Default::default()
    };
    let mut minis = Vec::new();
    for g in &args.caches {
        if g.line_size() != line {
            bail!(
                "--sampled samples {}-byte lines (--line-size): give every --cache {}-byte lines",
                line.bytes(),
                line.bytes()
            );
        }
        let rate = spatial.rate;
        let mini = MiniSim::of_sample(
            options,
            &[policy],
            Some(g.assoc()),
            &[g.size_bytes()],
            rate,
            1,
            rate,
        )?;
        if mini.finish().points.is_empty() {
            bail!(
                "--cache {g} has {} sets: a sample at rate {rate} holds less than one of them; \
                 give a higher --rate",
                g.sets()
            );
        }
        minis.push(mini);
    }
    let mut trace = open(&args.input, args.run.line_size)?;
    trace.sampled(spatial, None)?;
    let mut analyses: Vec<&mut dyn Analysis> =
        minis.iter_mut().map(|m| m as &mut dyn Analysis).collect();
    drive(&mut trace, Analyses(&mut analyses), &args.run)?;
    let reports = args
        .caches
        .iter()
        .zip(&minis)
        .map(|(&geometry, mini)| {
            let refs = mini.all_refs();
            let ratio = mini.finish().points[0].miss_ratio.unwrap_or(0.0);
            let misses = (ratio * refs as f64).round() as u64;
            SimReport {
                mapping: LineMapping::FirstByte,
                inclusion: None,
                levels: vec![LevelReport {
                    name: "cache",
                    geometry,
                    policy,
                    stats: MissStats {
                        refs,
                        misses,
                        line_accesses: refs,
                        line_misses: misses,
                        ..MissStats::default()
                    },
                    walks: None,
                }],
            }
        })
        .collect();
    Ok(Simulated::Caches(Simulations(reports, None)))
}
