//! `simulate --cores N`: the multi-core model (`cachescope::sim::MultiCore`) over the trace,
//! its threads first re-interleaved (`cachescope::interleave`) unless `--quantum 0`.
//!
//! The levels come from the flags single-core simulation has, plus `--L1`: one `--cache`
//! (a private data cache), or `--L1` (unified, fed the data references) or `--I1` with
//! `--D1` (a split L1: fetches go to L1I), each over `--L2` and `--LL` (the last level: the
//! L3 after `--L2`) or `--L3`. `--shared` names levels by these names (`LL` the last).

use std::num::NonZeroU64;

use anyhow::{Result, bail};
use cachescope::interleave::{DEFAULT_QUANTUM, Interleaver};
use cachescope::pass::Analyses;
use cachescope::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig, Policy};
use cachescope::trace::Trace;

use super::multicore_table::MultiCoreRun;
use super::{InclusionArg, SimulateArgs};
use crate::cmd::{drive, drive_again};

/// Runs the multi-core model; `(l2, l3)` are the lower levels --L2, --LL and --L3 give.
pub fn run(
    args: &SimulateArgs,
    policy: Policy,
    l2: Option<Geometry>,
    l3: Option<Geometry>,
    tlbs: Option<cachescope::tlb::TlbConfig>,
    open: &mut super::Opener<'_>,
) -> Result<MultiCoreRun> {
    let cores = args.cores.expect("called with --cores");
    if args.cachegrind {
        bail!("--cachegrind is Cachegrind's single-core model: drop --cores or --cachegrind");
    }
    if policy == Policy::Opt {
        bail!("--policy opt needs the future of one cache; --cores simulates online policies");
    }
    if args.inclusion != InclusionArg::NonInclusive {
        bail!("--cores simulates non-inclusive levels: drop --inclusion");
    }
    if args.straddle {
        bail!("--cores maps each reference to the line of its first byte: drop --straddle");
    }
    let (l1i, levels) = levels(args, l2, l3)?;
    let levels = share(levels, &args.shared, l1i.is_some())?;
    for &(thread, core) in &args.pins {
        if core >= cores {
            bail!(
                "--pin {thread}:{core}: there is no core {core}; --cores {cores} numbers its \
                 cores 0 to {}",
                cores - 1
            );
        }
    }
    let mut config = MultiCoreConfig::new(cores, levels);
    config.l1i = l1i;
    config.policy = policy;
    config.pins = args.pins.clone();
    config.writes = super::hardware::writes(args);
    let mut sim = MultiCore::new(&config)?;

    let quantum = args.quantum.unwrap_or(DEFAULT_QUANTUM);
    let mut trace = open(&args.input, args.run.line_size)?;
    // Each thread has TLBs of its own (docs/tlb.md), in front of the caches.
    let tlb = match &tlbs {
        Some(c) => {
            let pages = args.tlb.page_map(&args.input, args.run.quiet)?;
            Some(cachescope::tlb::TlbSim::new(c, pages, true)?)
        }
        None => None,
    };
    let no_walks = args.tlb.no_walks;
    let (unit, tlb) = match NonZeroU64::new(quantum) {
        None => {
            let tlb = super::tlb::multicore_pass(&mut sim, tlb, no_walks, |a| {
                drive(&mut trace, Analyses(a), &args.run)
            })?;
            (None, tlb)
        }
        Some(q) => {
            let mut split = Interleaver::new(q);
            drive(&mut trace, Analyses(&mut [&mut split]), &args.run)?;
            let merged = split.finish()?;
            let unit = merged.unit();
            let mut again = Trace::from_reader(Box::new(merged), trace.source().clone());
            let tlb = super::tlb::multicore_pass(&mut sim, tlb, no_walks, |a| {
                drive_again(&mut again, Analyses(a), &args.run)
            })?;
            (Some(unit), tlb)
        }
    };
    let report = sim.finish();
    if !args.run.quiet {
        for &(thread, core) in &args.pins {
            if !report.placement.iter().any(|p| p.thread == thread) {
                eprintln!("note: --pin {thread}:{core}: thread {thread} made no reference");
            }
        }
    }
    Ok(MultiCoreRun {
        quantum,
        quantum_unit: unit,
        report,
        tlb,
    })
}

/// Fails when a multi-core flag comes without `--cores`.
pub fn refuse_without_cores(args: &SimulateArgs) -> Result<()> {
    if args.l1.is_some() {
        bail!(
            "--L1 is each core's unified first level in the multi-core model: add --cores N \
             (--cores 1 for one core); a single-core hierarchy splits it: --I1 and --D1"
        );
    }
    for (given, flag) in [
        (!args.shared.is_empty(), "--shared"),
        (!args.pins.is_empty(), "--pin"),
        (args.quantum.is_some(), "--quantum"),
    ] {
        if given {
            bail!("{flag} applies to the multi-core model: add --cores N");
        }
    }
    Ok(())
}

/// The split L1's instruction side, if any, and the levels top down (all private).
fn levels(
    args: &SimulateArgs,
    l2: Option<Geometry>,
    l3: Option<Geometry>,
) -> Result<(Option<Geometry>, Vec<LevelSpec>)> {
    let firsts = usize::from(!args.caches.is_empty())
        + usize::from(args.l1.is_some())
        + usize::from(args.i1.is_some() || args.d1.is_some());
    if firsts > 1 {
        bail!("--cores takes one first level: --cache, --L1, or --I1 with --D1");
    }
    let lower = |mut levels: Vec<LevelSpec>| {
        if l3.is_some() && l2.is_none() {
            bail!("--L3 needs --L2 above it");
        }
        levels.extend(l2.map(|g| LevelSpec::private("L2", g)));
        levels.extend(l3.map(|g| LevelSpec::private("L3", g)));
        Ok(levels)
    };
    if let Some(l1) = args.l1 {
        return Ok((None, lower(vec![LevelSpec::private("L1", l1)])?));
    }
    match (args.i1, args.d1) {
        (Some(i1), Some(d1)) => return Ok((Some(i1), lower(vec![LevelSpec::private("L1D", d1)])?)),
        (None, None) => {}
        _ => bail!("a split L1 needs both --I1 and --D1 (or one unified --L1)"),
    }
    match args.caches.as_slice() {
        [] => bail!(
            "--cores needs levels: --cache SPEC (one private cache), --L1 SPEC [--L2 SPEC] \
             [--LL SPEC], or --I1 SPEC --D1 SPEC [--L2 SPEC] [--LL SPEC]"
        ),
        [cache] if l2.is_none() => Ok((None, vec![LevelSpec::private("cache", *cache)])),
        [_] => bail!("--cache is a level on its own; for a hierarchy give --L1 with --L2 or --LL"),
        _ => bail!(
            "--cores simulates one machine: give one --cache (each core's cache), or levels \
             --L1, --L2, --LL"
        ),
    }
}

/// `levels` with the ones `names` (`--shared`) calls for marked shared.
fn share(mut levels: Vec<LevelSpec>, names: &[String], split: bool) -> Result<Vec<LevelSpec>> {
    for name in names {
        let wanted = name.trim();
        let k = if wanted.eq_ignore_ascii_case("LL") {
            levels.len() - 1
        } else if let Some(k) = levels
            .iter()
            .position(|l| l.name.eq_ignore_ascii_case(wanted))
        {
            k
        } else {
            let have: Vec<&str> = levels.iter().map(|l| l.name.as_str()).collect();
            if split
                && ["L1", "L1I", "L1D", "I1", "D1"]
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(wanted))
            {
                bail!("--shared {wanted}: the split L1 is private to each core");
            }
            bail!(
                "--shared {wanted}: there is no such level; the levels are {}{}",
                have.join(", "),
                if have.len() > 1 {
                    " (or LL, the last)"
                } else {
                    " (or LL)"
                }
            );
        };
        if split && k == 0 {
            bail!("--shared {wanted}: the split L1 is private to each core");
        }
        levels[k].shared = true;
    }
    if let Some(w) = levels.windows(2).find(|w| w[0].shared && !w[1].shared) {
        bail!(
            "--shared {}: {} below it would be private, and a private cache cannot sit below a \
             shared one; share {} too",
            w[0].name,
            w[1].name,
            w[1].name
        );
    }
    Ok(levels)
}
