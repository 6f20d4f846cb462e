//! `cachescope simulate`: exact cache simulation — independent caches, a hierarchy, or
//! Valgrind Cachegrind's I1/D1/LL model — all fed by one pass over the trace; or, with
//! `--cores`, a multi-core machine (`multicore.rs`).

use crate::args::heading;
use anyhow::{Result, bail};
use cachescope::analysis::Analysis;
use cachescope::pass::{Analyses, Independent};
use cachescope::sim::{
    CachegrindSim, Geometry, HierarchyConfig, LineMapping, Policy, PrefetchPolicy, SimAnalysis,
    SimOptions, SimReport,
};
use clap::Args;

use super::drive;
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs, YesNo, values};
use crate::input;
use crate::output::{self, Format};

mod hardware;
mod multicore;
pub mod multicore_table;
mod sampled;
mod table;
mod tlb;
pub use table::Simulations;

use cachescope::trace::Trace;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// A cache SIZE,ASSOC,LINE fed the data references, e.g. 32K,8,64 (ASSOC `full` for fully
    /// associative). Repeat it to simulate several caches in the same pass.
    #[arg(help_heading = heading::CACHE, long = "cache", value_name = "SPEC", value_parser = values::geometry)]
    pub caches: Vec<Geometry>,
    /// Replacement policy: lru, fifo, random (seeded by --seed), plru (tree pseudo-LRU), or
    /// RRIP (Jaleel et al. 2010, M = 2): srrip, brrip (ε = 1/32, seeded by --seed) or drrip
    /// (32 leader sets per policy, 10-bit PSEL); or opt (Belady's MIN, --cache only).
    #[arg(help_heading = heading::CACHE, long, default_value = "lru", value_parser = values::policy)]
    pub policy: Policy,
    /// Valgrind Cachegrind's model, reference for reference: needs --I1, --D1 and --LL.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub cachegrind: bool,
    /// L1 instruction cache of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "I1", value_name = "SPEC", value_parser = values::geometry)]
    pub i1: Option<Geometry>,
    /// L1 data cache of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "D1", value_name = "SPEC", value_parser = values::geometry)]
    pub d1: Option<Geometry>,
    /// Unified L2 of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "L2", value_name = "SPEC", value_parser = values::geometry)]
    pub l2: Option<Geometry>,
    /// The last level (SIZE,ASSOC,LINE): the L2 when --L2 is not given, the L3 after --L2
    /// (so not with --L3).
    #[arg(help_heading = heading::CACHE, long = "LL", value_name = "SPEC", value_parser = values::geometry)]
    pub ll: Option<Geometry>,
    /// Optional unified L3 (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "L3", value_name = "SPEC", value_parser = values::geometry)]
    pub l3: Option<Geometry>,
    /// Simulate N cores (docs/threads.md): each has private copies of the levels, the ones
    /// named by --shared aside, kept coherent; misses in four classes (cold, capacity,
    /// conflict, coherence). Levels: --cache SPEC, or --L1 SPEC [--L2 SPEC] [--LL SPEC], or
    /// --I1 SPEC --D1 SPEC [--L2 SPEC] [--LL SPEC].
    #[arg(help_heading = heading::CACHE, long, value_name = "N", value_parser = values::cores)]
    pub cores: Option<u32>,
    /// Unified first level of each core (SIZE,ASSOC,LINE; --cores only), fed the data
    /// references as --cache is.
    #[arg(help_heading = heading::CACHE, long = "L1", value_name = "SPEC", value_parser = values::geometry)]
    pub l1: Option<Geometry>,
    /// Levels all cores share (--cores only), comma separated or repeated: cache, L1, L2, L3,
    /// or LL for the last level. A level below a shared one must be shared too.
    #[arg(help_heading = heading::CACHE, long, value_name = "LEVEL", value_delimiter = ',')]
    pub shared: Vec<String>,
    /// Run thread THREAD on core CORE (--cores only; cores from 0, threads as recorded, from
    /// 1); repeatable. Other threads go round-robin by first appearance.
    #[arg(help_heading = heading::CACHE, long = "pin", value_name = "THREAD:CORE", value_parser = values::pin)]
    pub pins: Vec<(cachescope::ThreadId, u32)>,
    /// The slice each core runs in turn (--cores only; docs/threads.md): in cycles of
    /// modelled time with --interleave time (default 100), in instructions with --interleave
    /// instructions (default 100; references when the trace has no instruction fetch); 0
    /// keeps the recorded order.
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "N", value_parser = values::count)]
    pub quantum: Option<u64>,
    /// How the threads are re-interleaved (--cores only): time (the core whose modelled clock
    /// is lowest runs next, each core's clock advanced by its instructions and its references'
    /// latencies: a contended line moves at the rate they allow) or instructions (round-robin,
    /// --quantum instructions each) [default: time].
    #[arg(help_heading = heading::ANALYSIS, long, value_enum)]
    pub interleave: Option<InterleaveArg>,
    /// A latency of the model's clocks in cycles (--cores only), NAME=CYCLES, comma separated or
    /// repeated: a level (L1, L1I, L1D, L2, L3, LL, cache), memory, transfer (a line another
    /// core holds modified), invalidate (a write taking a line from other cores) or
    /// instruction. Defaults: Skylake's (docs/threads.md, "Latencies").
    #[arg(help_heading = heading::CACHE, long = "latency", value_name = "NAME=CYCLES", value_delimiter = ',')]
    pub latencies: Vec<String>,
    /// How hierarchy levels share lines.
    #[arg(help_heading = heading::CACHE, long, value_enum, default_value = "non-inclusive")]
    pub inclusion: InclusionArg,
    /// Classify misses as cold, capacity or conflict (3C).
    #[arg(help_heading = heading::ANALYSIS, long = "3c")]
    pub three_c: bool,
    /// Track dirty lines: every level reports `writebacks` (dirty lines it evicted, written to
    /// the next level or memory) and `writebacks_received` (written into it from above; not
    /// demand references); with --cores a read of a line another core holds modified also
    /// writes it back. Not with --cachegrind or --policy opt; a hierarchy must be
    /// non-inclusive (docs/hardware.md).
    #[arg(long)]
    pub writebacks: bool,
    /// Whether a store that misses fills its line: yes (write-allocate, the default) or no
    /// (no-write-allocate: the store goes on to the next level; implies --writebacks).
    #[arg(
        long = "write-allocate",
        value_enum,
        default_value = "yes",
        value_name = "yes|no"
    )]
    pub write_allocate: YesNo,
    /// A prefetcher (docs/hardware.md): none (the default), next-line (tagged: on a miss and on
    /// the first use of a prefetched line) or stride (per instruction). A bare KIND is for
    /// --cache caches and a hierarchy's L1D; LEVEL=KIND (L1I, L1D, L2, L3) for one level of a
    /// hierarchy; repeatable. Levels report `prefetches`, `useful_prefetches` and
    /// `useless_prefetches`. With --cores each core's copy of a level has its own
    /// (docs/threads.md); LEVEL may then also be L1 or cache. Not with --cachegrind or
    /// --policy opt.
    #[arg(long = "prefetch", value_name = "[LEVEL=]KIND")]
    pub prefetch: Vec<String>,
    /// Track line utilization (Callgrind's --cacheuse idea): every level reports
    /// `used_bytes` (bytes of its fetched lines a reference touched while they were resident),
    /// `fetched_bytes` and `utilization` (their ratio, 0-1); with --cores every core's copy of
    /// a level too. Not with --cachegrind or --policy opt (docs/hardware.md).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub utilization: bool,
    /// Lines each prefetch trigger fetches.
    #[arg(long = "prefetch-degree", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub prefetch_degree: u32,
    /// How many strides ahead of the demand address the stride prefetcher's first line is.
    #[arg(long = "prefetch-distance", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub prefetch_distance: u32,
    /// An access that straddles a line boundary also touches the next line (Cachegrind's
    /// convention); by default a reference touches the line of its first byte.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub straddle: bool,
    #[command(flatten)]
    pub tlb: tlb::SimTlbArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    #[command(flatten)]
    pub rate: SampledRateArgs,
    /// Print JSON.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV, one row per simulated level (not with --cachegrind).
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "cachegrind")]
    pub csv: bool,
}

/// How `--cores` re-interleaves the threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InterleaveArg {
    /// In modelled time: the core whose clock is lowest runs next (the default).
    Time,
    /// Round-robin, --quantum instructions each.
    Instructions,
}

impl From<InterleaveArg> for cachescope::cores::Interleave {
    fn from(a: InterleaveArg) -> Self {
        match a {
            InterleaveArg::Time => Self::Time,
            InterleaveArg::Instructions => Self::Instructions,
        }
    }
}

/// How the levels of a hierarchy share lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InclusionArg {
    /// Each level fills on its own misses (Cachegrind's model).
    NonInclusive,
    /// Lower levels hold everything above them.
    Inclusive,
    /// A line lives in one level at a time.
    Exclusive,
}

impl From<InclusionArg> for cachescope::sim::Inclusion {
    fn from(a: InclusionArg) -> Self {
        match a {
            InclusionArg::NonInclusive => Self::NonInclusive,
            InclusionArg::Inclusive => Self::Inclusive,
            InclusionArg::Exclusive => Self::Exclusive,
        }
    }
}

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
