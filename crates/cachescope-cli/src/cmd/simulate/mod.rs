//! `cachescope simulate`: exact cache simulation — independent caches, a hierarchy, or
//! Valgrind Cachegrind's I1/D1/LL model — all fed by one pass over the trace; or, with
//! `--cores`, a multi-core machine (`multicore.rs`).

use anyhow::{Result, bail};
use cachescope::analysis::Analysis;
use cachescope::pass::{Analyses, Independent};
use cachescope::sim::{
    CachegrindSim, Geometry, HierarchyConfig, LineMapping, Policy, PrefetchPolicy, SimAnalysis,
    SimOptions, SimReport,
};

use super::drive;
use crate::args::{InputArgs, values};
use crate::input;
use crate::output::{self, Format};

mod args;
mod hardware;
mod multicore;
pub mod multicore_table;
mod sampled;
mod table;
mod tlb;
pub use args::{InclusionArg, InterleaveArg, SimulateArgs};
pub use table::Simulations;

use cachescope::trace::Trace;

pub fn run(args: SimulateArgs) -> Result<()> {
    let simulated = simulate(&args, &mut |input, line_size| input::open(input, line_size))?;
    // --sampled: every output names its method and rate.
    let spatial = args
        .sampled
        .spatial(args.rate.rate, args.input.params.seed, args.run.line_size);
    let format = Format::from_flags(args.json, args.csv);
    output::emit_sampled(&simulated, format, spatial, "mini")
}

/// Opens the input a simulation reads (`whatif` opens it through its layout changes).
pub type Opener<'a> = dyn FnMut(&InputArgs, cachescope::LineSize) -> Result<Trace> + 'a;

/// What a simulation gives, as `simulate` prints it.
pub enum Simulated {
    /// `--cachegrind`.
    Cachegrind(cachescope::sim::CachegrindCounts),
    /// Independent caches and hierarchies (`--policy opt` too).
    Caches(Simulations),
    /// `--cores`.
    MultiCore(multicore_table::MultiCoreRun),
}

impl output::Output for Simulated {
    fn json(&self) -> Result<String> {
        match self {
            Simulated::Cachegrind(c) => c.json(),
            Simulated::Caches(c) => c.json(),
            Simulated::MultiCore(c) => c.json(),
        }
    }

    fn csv(&self) -> Result<String> {
        match self {
            Simulated::Cachegrind(c) => c.csv(),
            Simulated::Caches(c) => c.csv(),
            Simulated::MultiCore(c) => c.csv(),
        }
    }

    fn table(&self) -> String {
        match self {
            Simulated::Cachegrind(c) => c.table(),
            Simulated::Caches(c) => c.table(),
            Simulated::MultiCore(c) => c.table(),
        }
    }
}

/// The simulation `args` ask for, of the trace `open` gives.
pub fn simulate(args: &SimulateArgs, open: &mut Opener<'_>) -> Result<Simulated> {
    let seed = args.input.params.seed;
    let policy = values::seeded(args.policy, seed);
    let opts = SimOptions {
        mapping: if args.straddle {
            LineMapping::Straddle
        } else {
            LineMapping::FirstByte
        },
        three_c: args.three_c,
        writes: hardware::writes(args),
        prefetch: PrefetchPolicy::None,
        utilization: args.utilization,
    };
    let (single_prefetch, level_prefetch) = hardware::prefetchers(args)?;
    let opts = SimOptions {
        prefetch: single_prefetch,
        ..opts
    };
    let (l2, l3) = lower_levels(args)?;
    let prefetching = level_prefetch.iter().any(|&p| p != PrefetchPolicy::None);
    if (opts.writes.is_some() || prefetching) && (args.cachegrind || policy == Policy::Opt) {
        bail!(
            "--writebacks, --write-allocate no and --prefetch apply to --cache caches, \
             hierarchies and --cores, not to --cachegrind (Cachegrind models neither) or \
             --policy opt"
        );
    }
    if args.utilization && (args.cachegrind || policy == Policy::Opt) {
        bail!(
            "--utilization applies to --cache caches, hierarchies and --cores, not to \
             --cachegrind or --policy opt"
        );
    }
    if let Some(w) = opts.writes {
        if !w.allocate && args.three_c {
            bail!(
                "--3c classifies the misses of caches that fill on every miss: drop it with \
                 --write-allocate no"
            );
        }
    }
    let tlbs = args.tlb.config(seed)?;
    if tlbs.is_some() && (args.cachegrind || policy == Policy::Opt) {
        bail!(
            "TLBs are simulated beside --cache caches, hierarchies and --cores, not with \
             --cachegrind or --policy opt"
        );
    }
    if let Some(spatial) =
        args.sampled
            .spatial(args.rate.rate, args.input.params.seed, args.run.line_size)
    {
        if tlbs.is_some() {
            bail!(
                "--sampled samples cache lines, not pages, so it simulates no TLB: drop the \
                 TLB flags (--dtlb, --itlb, --stlb, --tlb)"
            );
        }
        return sampled::run(args, policy, spatial, open);
    }
    if args.cores.is_some() {
        return Ok(Simulated::MultiCore(multicore::run(
            args, policy, l2, l3, tlbs, open,
        )?));
    }
    multicore::refuse_without_cores(args)?;
    let hierarchy_flags = [&args.i1, &args.d1, &l2, &l3].iter().any(|f| f.is_some());

    // Validate every geometry before reading anything.
    if args.cachegrind {
        let (Some(i1), Some(d1), Some(ll)) = (&args.i1, &args.d1, &l2) else {
            bail!("--cachegrind needs --I1, --D1 and --LL, each SIZE,ASSOC,LINE (e.g. 32K,8,64)");
        };
        if l3.is_some() || !args.caches.is_empty() {
            bail!("--cachegrind simulates exactly I1, D1 and LL; drop --L3 and --cache");
        }
        let mut sim = CachegrindSim::new(*i1, *d1, *ll)?;
        let simulated = sim.geometries()[2];
        if simulated != *ll {
            // Valgrind warns the same way when it reshapes a detected LL.
            eprintln!(
                "cachescope: note: --LL {ll} has {} sets, not a power of two; simulated as Cachegrind \
                 simulates such an LL: {simulated}, {} sets (docs/cachegrind.md)",
                ll.sets(),
                simulated.sets()
            );
        }
        let mut trace = open(&args.input, args.run.line_size)?;
        drive(&mut trace, Analyses(&mut [&mut sim]), &args.run)?;
        return Ok(Simulated::Cachegrind(sim.finish()));
    }

    if policy == Policy::Opt {
        return run_opt(args, opts, open);
    }
    let mut sims: Vec<SimAnalysis> = Vec::new();
    if !hierarchy_flags && args.prefetch.iter().any(|p| p.contains('=')) {
        bail!("--prefetch LEVEL=KIND names a level of a hierarchy (--I1, --D1, --L2 [--L3])");
    }
    if hierarchy_flags {
        let (Some(i1), Some(d1), Some(l2)) = (&args.i1, &args.d1, &l2) else {
            bail!("a hierarchy needs --I1, --D1 and --L2 (or --LL); --L3 is optional");
        };
        let mut config = HierarchyConfig::new(*i1, *d1, *l2);
        config.l3 = l3;
        config.policy = policy;
        config.inclusion = args.inclusion.into();
        config.prefetch = level_prefetch;
        config.last_is_ll = args.ll.is_some();
        sims.push(SimAnalysis::hierarchy(&config, opts)?);
    }
    for &geometry in &args.caches {
        sims.push(SimAnalysis::cache(geometry, policy, opts)?);
    }
    if sims.is_empty() && tlbs.is_none() {
        bail!(
            "nothing to simulate: give --cache SIZE,ASSOC,LINE (repeatable), a hierarchy \
             (--I1, --D1, --L2 [--L3]), --cachegrind --I1 --D1 --LL, or TLBs (--dtlb, --tlb)"
        );
    }
    let mut trace = open(&args.input, args.run.line_size)?;
    let Some(config) = tlbs else {
        // Independent configurations: side by side on the threads, one decode.
        let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
            .iter_mut()
            .map(|s| s as &mut (dyn Analysis + Send))
            .collect();
        drive(&mut trace, Independent(&mut analyses), &args.run)?;
        let reports: Vec<SimReport> = sims.iter().map(SimAnalysis::finish).collect();
        return Ok(Simulated::Caches(Simulations(reports, None)));
    };
    let (reports, tlb) = tlb::simulate(&mut trace, sims, &config, args)?;
    Ok(Simulated::Caches(Simulations(reports, Some(tlb))))
}

/// The unified levels below the first: `(L2, L3)` from --L2, --LL and --L3. --LL is the last
/// level: the L2 alone, the L3 after --L2; with --L3 too it would name the third level twice.
fn lower_levels(args: &SimulateArgs) -> Result<(Option<Geometry>, Option<Geometry>)> {
    match (args.l2, args.ll, args.l3) {
        (_, Some(_), Some(_)) => bail!(
            "--LL and --L3 both name the third level (--LL is the last level: the L2 alone, \
             the L3 after --L2); give one of them"
        ),
        (None, Some(ll), None) => Ok((Some(ll), None)),
        (Some(l2), Some(ll), None) => Ok((Some(l2), Some(ll))),
        (l2, None, l3) => Ok((l2, l3)),
    }
}

/// `--policy opt`: every --cache under Belady's MIN, from one spilled pass (see cachescope::opt).
fn run_opt(args: &SimulateArgs, opts: SimOptions, open: &mut Opener<'_>) -> Result<Simulated> {
    if [&args.i1, &args.d1, &args.l2, &args.ll, &args.l3]
        .iter()
        .any(|f| f.is_some())
        || args.three_c
    {
        bail!("--policy opt simulates independent --cache caches only (no hierarchy, no --3c)");
    }
    if opts.mapping == LineMapping::Straddle {
        bail!("--policy opt maps each reference to the line of its first byte: drop --straddle");
    }
    let geometries = &args.caches;
    let Some(first) = geometries.first() else {
        bail!("nothing to simulate: give --cache SIZE,ASSOC,LINE (repeatable)");
    };
    let line_size = first.line_size();
    if geometries.iter().any(|g| g.line_size() != line_size) {
        bail!("--policy opt looks ahead over one line size: give every --cache the same line");
    }
    let options = cachescope::reuse::Options {
        line_size,
        ..Default::default()
    };
    let mut spill = cachescope::opt::NextUseSpill::new(options)?;
    let mut trace = open(&args.input, args.run.line_size)?;
    drive(&mut trace, Analyses(&mut [&mut spill]), &args.run)?;
    let refs = spill.refs();
    let misses = cachescope::opt::set_assoc_misses(&mut spill.finish()?, geometries)?;
    let reports: Vec<SimReport> = geometries
        .iter()
        .zip(misses)
        .map(|(&geometry, misses)| SimReport {
            mapping: LineMapping::FirstByte,
            inclusion: None,
            levels: vec![cachescope::sim::LevelReport {
                name: "cache",
                geometry,
                policy: Policy::Opt,
                stats: cachescope::sim::MissStats {
                    refs,
                    misses,
                    line_accesses: refs,
                    line_misses: misses,
                    ..Default::default()
                },
                walks: None,
            }],
        })
        .collect();
    Ok(Simulated::Caches(Simulations(reports, None)))
}
