//! `simulate`'s flags: the caches, the machine, the policies and the interleaving of threads.

use crate::args::heading;
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs, YesNo, values};
use cachescope::sim::{Geometry, Policy};
use clap::Args;

use super::tlb;

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
