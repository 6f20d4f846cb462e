//! `simulate --cores N`: the multi-core model (`cachescope::sim::MultiCore`) over the trace,
//! its threads first re-interleaved (`cachescope::interleave`, in modelled time by default)
//! unless `--quantum 0`.
//!
//! The levels come from the flags single-core simulation has, plus `--L1`: one `--cache`
//! (a private data cache), or `--L1` (unified, fed the data references) or `--I1` with
//! `--D1` (a split L1: fetches go to L1I), each over `--L2` and `--LL` (the last level: the
//! L3 after `--L2`) or `--L3`. `--shared` names levels by these names (`LL` the last).
//!
//! With TLBs (`--dtlb`, `--tlb`) each thread has its own, and its page walks are references
//! of its own stream, inserted before the reference that walked as the trace is read, before
//! the threads are dealt: the caches see them in every order (modelled time, round-robin, the
//! recorded order), and in modelled time they cost their latency on the core's clock.

use anyhow::{Result, bail};
use cachescope::cores::{Interleave, Schedule, Simulation};
use cachescope::pass::Analyses;
use cachescope::sim::{Geometry, Latencies, LevelSpec, MultiCoreConfig, Policy, PrefetchPolicy};

use super::multicore_table::MultiCoreRun;
use super::{InclusionArg, InterleaveArg, SimulateArgs};
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
    config.latencies = latencies(&config, &args.latencies)?;
    config.utilization = args.utilization;
    config.prefetch = prefetchers(args, &config)?;
    let interleave: Interleave = args.interleave.unwrap_or(InterleaveArg::Time).into();
    let schedule = match args.quantum {
        Some(quantum) => Schedule {
            interleave,
            quantum,
        },
        None => Schedule::with_default_quantum(interleave),
    };
    let mut sim = Simulation::new(&config, schedule)?;
    let mut trace = open(&args.input, args.run.line_size)?;
    // Each thread has TLBs of its own (docs/tlb.md), in front of the caches: its page walks
    // are references of its own stream, made before the reference that walked whatever order
    // the threads are dealt in, so they join the stream before it is split per thread.
    let tlb = match &tlbs {
        Some(c) => {
            let pages = args.tlb.page_map(&args.input, args.run.quiet)?;
            Some(cachescope::tlb::TlbSim::new(c, pages, true)?)
        }
        None => None,
    };
    let tlb = super::tlb::multicore_pass(&mut sim, tlb, args.tlb.no_walks, |a| {
        drive(&mut trace, Analyses(a), &args.run)
    })?;
    if let Some(mut dealt) = sim.dealt(&trace)? {
        drive_again(&mut dealt, Analyses(&mut []), &args.run)?;
    }
    let done = sim.finish();
    let report = done.report;
    note_unused_pins(args, &report);
    Ok(MultiCoreRun {
        interleave: (schedule.quantum > 0).then_some(schedule.interleave),
        quantum: schedule.quantum,
        quantum_unit: done.unit,
        report,
        tlb,
    })
}

/// Each machine level's prefetcher (`L1I` first when split), from `--prefetch`: a bare KIND
/// and `L1D=`, `L1=` or `cache=` name the first data level, `L2=`, `L3=` and `LL=` the
/// levels below it as a hierarchy's flags name them.
fn prefetchers(args: &SimulateArgs, config: &MultiCoreConfig) -> Result<Vec<PrefetchPolicy>> {
    let (_, by_level) = super::hardware::prefetchers(args)?;
    let none = PrefetchPolicy::None;
    if config.l1i.is_none() && by_level[0] != none {
        bail!("--prefetch L1I=…: the machine has no L1I (a split L1 needs --I1 and --D1)");
    }
    // Data levels: the first, then (L2, L3) of `by_level`; --LL maps to the last present.
    let data = &by_level[1..];
    if let Some(k) = (config.levels.len()..data.len()).find(|&k| data[k] != none) {
        bail!(
            "--prefetch: this machine has {} data level{} ({}), no level {} to prefetch into",
            config.levels.len(),
            if config.levels.len() == 1 { "" } else { "s" },
            config
                .levels
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            ["L1", "L2", "L3"][k]
        );
    }
    let data = &data[..config.levels.len()];
    Ok(config
        .l1i
        .map(|_| by_level[0])
        .into_iter()
        .chain(data.iter().copied())
        .collect())
}

/// A note for each `--pin` whose thread made no reference.
fn note_unused_pins(args: &SimulateArgs, report: &cachescope::sim::MultiCoreReport) {
    if args.run.quiet {
        return;
    }
    for &(thread, core) in &args.pins {
        if !report.placement.iter().any(|p| p.thread == thread) {
            eprintln!("cachescope: note: --pin {thread}:{core}: thread {thread} made no reference");
        }
    }
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
        (args.interleave.is_some(), "--interleave"),
        (!args.latencies.is_empty(), "--latency"),
    ] {
        if given {
            bail!("{flag} applies to the multi-core model: add --cores N");
        }
    }
    Ok(())
}

/// The latencies `config`'s machine runs with: the defaults, with `--latency NAME=CYCLES`
/// overrides (a level by its name, `LL` the last; memory, transfer, invalidate,
/// instruction). `None` when nothing is overridden.
fn latencies(config: &MultiCoreConfig, given: &[String]) -> Result<Option<Latencies>> {
    if given.is_empty() {
        return Ok(None);
    }
    let shared: Vec<bool> = config.levels.iter().map(|l| l.shared).collect();
    let mut t = Latencies::defaults(config.l1i.is_some(), &shared);
    let names: Vec<String> = config
        .l1i
        .iter()
        .map(|_| "L1I".to_owned())
        .chain(config.levels.iter().map(|l| l.name.clone()))
        .collect();
    for spec in given {
        let Some((name, value)) = spec.split_once('=') else {
            bail!("--latency {spec:?}: give NAME=CYCLES, e.g. --latency memory=300");
        };
        let cycles: u64 = value.trim().parse().map_err(|_| {
            anyhow::anyhow!("--latency {spec:?}: {value:?} is not a whole number of cycles")
        })?;
        let name = name.trim();
        match name.to_ascii_lowercase().as_str() {
            "memory" => t.memory = cycles,
            "transfer" => t.transfer = cycles,
            "invalidate" => t.invalidate = cycles,
            "instruction" => t.instruction = cycles,
            "ll" => *t.levels.last_mut().expect("levels") = cycles,
            _ => match names.iter().position(|n| n.eq_ignore_ascii_case(name)) {
                Some(k) => t.levels[k] = cycles,
                None => bail!(
                    "--latency {spec:?}: no level {name}; the levels are {} (or LL), besides \
                     memory, transfer, invalidate and instruction",
                    names.join(", ")
                ),
            },
        }
    }
    Ok(Some(t))
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
        // The level --LL gave is called LL, as the flag calls it.
        if args.ll.is_some() {
            if let Some(last) = levels.last_mut() {
                last.name = "LL".into();
            }
        }
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
