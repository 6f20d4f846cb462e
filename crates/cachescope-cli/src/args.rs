//! Command-line flags. Raw values are validated into library types ([`LineSize`], workload
//! parameters, formats) before any work starts.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cachescope::LineSize;
use cachescope::trace::FormatChoice;
use cachescope::workloads::{self, Workload};
use clap::{Args, Parser, Subcommand};

/// Cache-locality analysis of memory-access traces.
#[derive(Debug, Parser)]
#[command(
    name = "cachescope",
    version,
    about = "Cache-locality analysis of memory-access traces",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Memory limit for the tables that grow with the trace's distinct lines (e.g. 512M, 4G);
    /// a run that would pass it stops with an error instead of exhausting memory.
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reference counts by kind, distinct lines, bytes touched, address range, detected format.
    #[command(after_help = "Examples:\n  \
        cachescope stats trace.cst\n  \
        zstd -dc big.txt.zst | cachescope stats -\n  \
        cachescope stats --workload zipf --json\n  \
        cachescope stats trace.txt --csv --line-size 128")]
    Stats(StatsArgs),
    /// Convert a trace of any format to cachescope's native format (or another format).
    #[command(after_help = "Examples:\n  \
        cachescope convert trace.txt trace.cst            lackey text to native (~24x smaller)\n  \
        cachescope convert trace.cst trace.din --to din\n  \
        cachescope convert trace.cst trace.champsimtrace.xz --to champsim\n  \
        cachescope convert trace.cst - --to plain-hex | head")]
    Convert(ConvertArgs),
    /// Write a built-in synthetic workload as a trace.
    #[command(after_help = "Examples:\n  \
        cachescope generate --list\n  \
        cachescope generate zipf --lines 65536 --seed 7 -o zipf.cst\n  \
        cachescope generate stencil --n 32 --to lackey -o stencil.txt.zst")]
    Generate(GenerateArgs),
    /// Exact cache simulation: caches, a hierarchy, or Cachegrind's I1/D1/LL model.
    #[command(after_help = "Examples:\n  \
        cachescope simulate trace.cst --cache 32K,8,64 --cache 1M,16,64 --3c\n  \
        cachescope simulate trace.cst --I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64 --inclusion inclusive\n  \
        cachescope simulate trace.txt --cachegrind --I1 32K,8,64 --D1 32K,8,64 --LL 8M,16,64\n  \
        cachescope simulate --workload matmul --cache 8K,2,64 --policy random --csv")]
    Simulate(SimulateArgs),
    /// Miss-ratio curve for many cache sizes from one pass: exact (LRU stack distances, or
    /// random replacement simulated per size), or a model (StatCache, StatStack, HOTL).
    #[command(after_help = "Examples:\n  \
        cachescope mrc trace.cst                          exact LRU, 1K..1G every 1/8 octave\n  \
        cachescope mrc trace.cst --policy random --sizes 32K,256K,8M\n  \
        cachescope mrc trace.cst --method statstack       LRU from sampled reuse distances\n  \
        cachescope sample trace.cst -o t.prof && cachescope mrc t.prof --method statcache\n  \
        cachescope mrc --workload zipf --method hotl --json")]
    Mrc(MrcArgs),
    /// Sample reuse distances (StatCache's run-time part) into a profile that `mrc --method
    /// statcache|statstack` models without reading the trace again.
    #[command(
        after_help = "Examples:\n  cachescope sample trace.cst -o trace.prof\n  \
        cachescope sample trace.cst --rate 1e-3 --seed 7 -o trace.prof\n  \
        cachescope mrc trace.prof --method statcache --estimate-cold"
    )]
    Sample(SampleArgs),
    /// Average footprint fp(w) for every window length (HOTL, Xiang formula, one linear pass).
    #[command(after_help = "Examples:\n  \
        cachescope footprint trace.cst --json > trace.fp.json     256 windows per octave; also a co-run profile\n  \
        cachescope footprint trace.cst --windows 1000,1M          exact footprints of these windows")]
    Footprint(FootprintArgs),
    /// HOTL's five metrics per cache size: fill time, inter-miss time, miss ratio, reuse-distance
    /// probability; with diagnostics (reuse-window hypothesis, direct fill time, sampling).
    #[command(after_help = "Examples:\n  \
        cachescope hotl trace.cst --range 16K..64M --per-octave 256 --csv    the paper's 3073 sizes\n  \
        cachescope hotl trace.cst --reuse-windows                           where the conversion errs\n  \
        cachescope hotl trace.cst --direct-fill-time 64                     why Filmer's fill time\n  \
        cachescope hotl trace.cst --sample 1M                               footprint sampling")]
    Hotl(HotlArgs),
    /// Predict each program's miss ratio in a shared cache from solo footprints (HOTL §4.5).
    #[command(after_help = "Examples:\n  \
        cachescope corun a.cst b.cst --cache 8MiB\n  \
        cachescope footprint a.cst --json > a.fp.json; cachescope corun a.fp.json b.cst --cache 2M --ways 16\n  \
        cachescope corun a.cst b.cst --cache 1M --rates 2,1 --simulate     check against an interleaved simulation")]
    Corun(CorunArgs),
    /// L2 miss ratios predicted from the L1 stack-distance histogram (Ji, Ling & Liu), for a
    /// fully-associative LRU L1 and fully-associative L2s of several sizes.
    #[command(after_help = "Examples:\n  \
        cachescope l2 trace.cst --l1 32K --l2 256K,1M,4M\n  \
        cachescope l2 trace.cst --policy random --variant footprint --simulate\n  \
        cachescope sample trace.cst -o t.prof && cachescope l2 t.prof --l1 32K --l2 1M\n\n\
        Ratios are local: L2 misses per L2 reference (per L1 miss).")]
    L2(L2Args),
    /// Memory phases: cut the trace into intervals, classify them with setvectors and the
    /// methods they are compared with, and score each against the intervals' L2 hit rates.
    #[command(after_help = "Examples:\n  \
        cachescope phases trace.cst                         1M-instruction intervals, k = 2, every method\n  \
        cachescope phases trace.cst --k 2..8 --method setvector,reuse-distance\n  \
        cachescope phases --workload phases --lines 2048 --interval 4096 --k 3 --l2 64K,8,64\n  \
        cachescope phases trace.cst --json | jq '.methods[] | {name, poec}'")]
    Phases(PhasesArgs),
    /// Record a real program's memory references (under cachescope's Valgrind tool, or lackey)
    /// straight into a trace.
    #[command(
        after_help = "Examples:\n  cachescope record -o ls.cst -- ls -l /usr\n  \
                            cachescope record --to lackey -o sort.txt.zst -- sort data.txt\n\n\
                            The tool's binary records (or lackey's text, with --backend lackey) \
                            are decoded as they are written: no intermediate file. \
                            The program's stdin, stdout and stderr stay the terminal's."
    )]
    Record(RecordArgs),
    /// Misses and evictions by variable, heap allocation site and code line (Buck &
    /// Hollingsworth): an exact simulation beside a sampling hardware monitor's view, the
    /// monitor's cost per sampling rate, and a miss-ratio curve per bucket.
    #[command(after_help = "Examples:\n  \
        cachescope record -o t.cst -- ./prog && cachescope attribute t.cst     events from t.cst.events\n  \
        cachescope attribute t.cst --cache 32K,8,64 --sample 2500 --json\n  \
        cachescope attribute lackey.txt --exe ./prog      a lackey trace of a non-PIE program, no events\n  \
        cachescope attribute t.cst --cachegrind-out t.cg && cg_annotate t.cg     misses on the source")]
    Attribute(AttributeArgs),
    /// Every analysis in one pass over a trace, a workload or a program, written as a
    /// self-contained HTML report with figures (SVG, PNG) and report.json.
    #[command(after_help = "Examples:\n  \
        cachescope report trace.cst -o trace-report          then open trace-report/report.html\n  \
        cachescope report --workload zipf --lines 65536 -o zipf-report\n  \
        cachescope report -o ls-report -- ls -l /usr/bin     records the program under Valgrind first\n  \
        cachescope report trace.cst --interval 1M --rate 1e-4   longer phases, fewer samples\n\n\
        The page needs no network: figures are inline SVG; figures/ has each as SVG and PNG.")]
    Report(ReportArgs),
    /// The first command to run: generates a built-in workload and writes its report, then
    /// prints where it is.
    #[command(after_help = "Examples:\n  \
        cachescope demo                                 the phases workload into cachescope-demo/\n  \
        cachescope demo --workload matmul -o matmul-demo\n  \
        cachescope demo --json                          what was written, as JSON")]
    Demo(DemoArgs),
    /// Print a shell completion script generated from the command-line definition.
    #[command(after_help = "Examples:\n  \
        cachescope completions bash > ~/.local/share/bash-completion/completions/cachescope\n  \
        cachescope completions zsh > ~/.zfunc/_cachescope\n  \
        cachescope completions fish > ~/.config/fish/completions/cachescope.fish")]
    Completions(CompletionsArgs),
    /// Write man pages generated from the command-line definition: cachescope.1 and one per
    /// subcommand (cachescope-report.1, …); without -o, print cachescope.1.
    #[command(after_help = "Examples:\n  \
        cachescope man -o /usr/local/share/man/man1\n  \
        cachescope man | man -l -")]
    Man(ManArgs),
}

/// Where accesses come from: a trace file, stdin, a built-in workload, or a program run now.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The trace: a file, or `-` for stdin. Format and compression are detected from the content.
    #[arg(value_name = "TRACE", required_unless_present_any = ["workload", "program"])]
    pub trace: Option<PathBuf>,
    /// Analyse a built-in workload instead of a trace (see `cachescope generate --list`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["trace", "program"], value_parser = parse_workload)]
    pub workload: Option<Workload>,
    /// A program to run and analyse as it runs, after `--` (under cachescope's Valgrind tool,
    /// as `record` runs it, without writing a trace unless --save is given).
    #[arg(value_name = "PROGRAM", last = true, num_args = 1.., conflicts_with = "trace")]
    pub program: Vec<std::ffi::OsString>,
    /// With a program: also keep its trace in this native file (written as the references
    /// pass).
    #[arg(long, value_name = "TRACE", requires = "program")]
    pub save: Option<PathBuf>,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// How to read a trace file.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Trace format: auto, lackey, plain, plain-hex, plain-dec, din, binary, native, champsim.
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,
    /// Skip text lines that do not parse, warn once and report how many, instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

/// Parameters of the built-in workloads (each uses those that apply).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Workload parameters")]
pub struct WorkloadParams {
    /// Random seed: of the workload, and of anything random in the analysis (random
    /// replacement, sampling), so one seed fixes the whole run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of data references (default: the workload's natural length).
    #[arg(long)]
    pub refs: Option<u64>,
    /// Working set / loop length in lines.
    #[arg(long)]
    pub lines: Option<u64>,
    /// Stride in bytes (stride workload).
    #[arg(long)]
    pub stride: Option<u64>,
    /// Matrix or grid dimension (matmul, matmul-tiled, stencil).
    #[arg(long)]
    pub n: Option<u64>,
    /// Tile size (matmul-tiled).
    #[arg(long)]
    pub tile: Option<u64>,
    /// Zipf exponent (zipf).
    #[arg(long)]
    pub zipf_s: Option<f64>,
    /// Also emit instruction fetches, with pcs on data accesses.
    #[arg(long)]
    pub instructions: bool,
}

impl Default for WorkloadParams {
    /// The flags' defaults: seed 1, every other parameter the workload's own default.
    fn default() -> Self {
        WorkloadParams {
            seed: 1,
            refs: None,
            lines: None,
            stride: None,
            n: None,
            tile: None,
            zipf_s: None,
            instructions: false,
        }
    }
}

impl WorkloadParams {
    /// The library's parameters: defaults overridden by the flags given.
    pub fn to_params(&self, line_size: LineSize) -> workloads::Params {
        let d = workloads::Params::default();
        workloads::Params {
            seed: self.seed,
            refs: self.refs,
            lines: self.lines.unwrap_or(d.lines),
            line_size: line_size.bytes(),
            stride: self.stride.unwrap_or(d.stride),
            n: self.n.unwrap_or(d.n),
            tile: self.tile.unwrap_or(d.tile),
            zipf_s: self.zipf_s.unwrap_or(d.zipf_s),
            instructions: self.instructions,
        }
    }
}

/// Flags every analysing command takes.
#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// Cache line size in bytes, a power of two (e.g. 64, 128, 4K).
    #[arg(long, default_value = "64", value_parser = parse_line_size)]
    pub line_size: LineSize,
    /// Threads to use (default: all cores).
    #[arg(long, default_value_t = default_threads(), value_parser = parse_threads)]
    pub threads: usize,
    /// No progress bar, no warnings: only results and errors.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print a CSV header and one row.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The trace to convert: a file, or `-` for stdin.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Where to write (`-` for stdout). A `.gz`, `.zst` or `.xz` ending compresses text output.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(long, default_value = "native", value_parser = parse_output_format)]
    pub to: cachescope::trace::Format,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
}

/// How `convert`, `generate` and `record` print the summary of what they wrote.
#[derive(Debug, Args)]
pub struct SummaryFormat {
    /// Print the summary (records, data references, distinct lines, bytes written) as one
    /// JSON object; on stderr when the trace goes to stdout.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary as a CSV header and one row (stderr when the trace goes to stdout).
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct FootprintArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Exact footprints of these window lengths only (references, with K/M/G), comma separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_count)]
    pub windows: Option<Vec<u64>>,
    /// Windows per power of two on the logarithmic grid (a power of two up to 256).
    #[arg(long, default_value_t = 256)]
    pub per_octave: u64,
    /// Count instruction fetches too (a unified cache).
    #[arg(long)]
    pub include_instructions: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object: {"line_size", "refs", "distinct_lines", "points": [{"window", "footprint"}]}.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct HotlArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sizes: SizeArgs,
    /// Count instruction fetches too (a unified cache).
    #[arg(long)]
    pub include_instructions: bool,
    /// Also measure the footprint of reuse windows, rfp(l), against fp(l) (§2.7), sampling
    /// reuses at this rate (1 = every reuse).
    #[arg(long, value_name = "RATE", num_args = 0..=1, default_missing_value = "1")]
    pub reuse_windows: Option<f64>,
    /// Also measure the direct fill time of volumes 1..=N (Appendix A; quadratic in the
    /// trace's distinct lines at worst: keep N small), next to the Filmer fill time.
    #[arg(long, value_name = "N")]
    pub direct_fill_time: Option<usize>,
    /// Also run footprint sampling (§3) with one sample per this many references, each until
    /// it fills the largest size; prints its coverage and both designs' curves.
    #[arg(long, value_name = "PERIOD", value_parser = parse_count)]
    pub sample: Option<u64>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV (the per-size metrics).
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct CorunArgs {
    /// Each program: a trace, or a footprint saved by `cachescope footprint --json`.
    #[arg(value_name = "PROFILE_OR_TRACE", required = true, num_args = 2..)]
    pub inputs: Vec<PathBuf>,
    /// The shared cache's size (e.g. 8MiB).
    #[arg(long, value_parser = parse_size)]
    pub cache: u64,
    /// Ways of the shared cache [default: fully associative].
    #[arg(long)]
    pub ways: Option<u32>,
    /// Access rates (references per unit time), one per program [default: all equal].
    #[arg(long, value_delimiter = ',')]
    pub rates: Option<Vec<f64>>,
    /// Also simulate the programs interleaved in proportion to their rates in the shared cache
    /// (traces only), and print the prediction's error.
    #[arg(long)]
    pub simulate: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per program, the JSON's fields (`predicted_miss_ratio`, …).
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct L2Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// L1 size (fully-associative LRU).
    #[arg(long = "l1", default_value = "32K", value_parser = parse_size)]
    pub l1: u64,
    /// L2 sizes, comma separated (fully associative).
    #[arg(long = "l2", value_delimiter = ',', default_value = "128K,256K,512K,1M,2M", value_parser = parse_size)]
    pub l2: Vec<u64>,
    /// L2 replacement policy.
    #[arg(long, value_enum, default_value = "lru")]
    pub policy: ReplacementPolicy,
    /// Reading of the equations: `fills` (the default: `resident`'s epochs, and for a random
    /// L2 the survival averaged over the whole distribution of L2 fills between two uses of a
    /// line, counting only fills that evict; LRU as `resident`), `resident` (the corrected
    /// epoch-miss counts plus the misses while a line sits in the L1, 0.1 pp mean error for
    /// LRU on real programs; random through StatCache), `footprint` (the corrected counts
    /// alone), or `paper` (Eqs. 3-9 as the paper prints them, read as intended: several pp
    /// off; for comparison with the paper).
    #[arg(long, value_enum, default_value_t = L2Variant::Fills)]
    pub variant: L2Variant,
    /// Also simulate the two levels exactly in the same pass and print both (traces only).
    #[arg(long)]
    pub simulate: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON (the `points` shape; with --simulate also `simulated`).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct PhasesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Interval length, in instructions (data references when the trace has no instruction
    /// fetches; see --unit).
    #[arg(long, default_value_t = 1_000_000)]
    pub interval: u64,
    /// What the interval length counts: auto, instructions or data-refs.
    #[arg(long, default_value = "auto", value_parser = ["auto", "instructions", "data-refs"])]
    pub unit: String,
    /// Number of phases: a number (e.g. 4), or a range LO..HI chosen per method by BIC.
    #[arg(long, default_value = "2")]
    pub k: String,
    /// Methods, comma separated, or `all`: setvector, setvector-vector, activity,
    /// activity-magnitude, reuse-distance, wavelet, wavelet-dc, wavelet-svd.
    #[arg(long, default_value = "all")]
    pub method: String,
    /// The L2 (SIZE,ASSOC,LINE): the ground truth's cache and the setvectors' geometry.
    #[arg(long = "l2", default_value = "1M,16,64")]
    pub l2: String,
    /// An optional L1 (SIZE,ASSOC,LINE) in front of the L2; its misses feed the L2.
    #[arg(long = "l1")]
    pub l1: Option<String>,
    /// Setvector elements saturate at 2^BITS - 1 (1 to 8).
    #[arg(long, default_value_t = 8)]
    pub bits: u32,
    /// Skip the second pass that simulates one representative interval per phase.
    #[arg(long)]
    pub no_simpoint: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object: {"methods": [...], "intervals": [...], ...}.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per method (the JSON's `methods`, without their per-phase lists).
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where to write the trace (`-` for stdout) [default: PROGRAM.cst in the current directory].
    #[arg(short, long, value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(long, default_value = "native", value_parser = parse_output_format)]
    pub to: cachescope::trace::Format,
    /// Do not record allocation events: no TRACE.events (memory map, heap allocations and
    /// frees) beside the trace.
    #[arg(long)]
    pub no_events: bool,
    /// What records the references: `tool`, cachescope's own Valgrind tool (binary records,
    /// ~50-100x faster than lackey), or `lackey`, Valgrind's lackey with the LD_PRELOAD
    /// interposer (the fallback, with a printed reason, where the tool cannot run).
    #[arg(long, value_enum, default_value_t = Backend::Tool)]
    pub backend: Backend,
    /// Follow the programs the recorded one becomes with exec (a shell script's last
    /// command, say): their references continue the trace. Forked children are never
    /// recorded. Needs the tool backend.
    #[arg(long)]
    pub trace_children: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
    /// The program and its arguments, after `--`.
    #[arg(value_name = "PROGRAM", last = true, required = true, num_args = 1..)]
    pub command: Vec<std::ffi::OsString>,
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

/// What `record` runs the program under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// cachescope's own Valgrind tool.
    Tool,
    /// Valgrind's lackey (text), with the LD_PRELOAD allocation interposer.
    Lackey,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The workload (see --list).
    #[arg(value_name = "WORKLOAD", required_unless_present = "list", value_parser = parse_workload)]
    pub workload: Option<Workload>,
    /// List the workloads and their parameters.
    #[arg(long)]
    pub list: bool,
    /// Where to write (`-` for stdout).
    #[arg(short, long, value_name = "OUT", required_unless_present = "list")]
    pub output: Option<PathBuf>,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(long, default_value = "native", value_parser = parse_output_format)]
    pub to: cachescope::trace::Format,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// A cache SIZE,ASSOC,LINE fed the data references, e.g. 32K,8,64 (ASSOC `full` for fully
    /// associative). Repeat it to simulate several caches in the same pass.
    #[arg(long = "cache", value_name = "SPEC")]
    pub caches: Vec<String>,
    /// Replacement policy: lru, fifo, random (seeded by --seed), plru (tree pseudo-LRU), or
    /// RRIP (Jaleel et al. 2010, M = 2): srrip, brrip (ε = 1/32, seeded by --seed) or drrip
    /// (32 leader sets per policy, 10-bit PSEL); or opt (Belady's MIN, --cache only).
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Valgrind Cachegrind's model, reference for reference: needs --I1, --D1 and --LL.
    #[arg(long)]
    pub cachegrind: bool,
    /// L1 instruction cache of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(long = "I1", value_name = "SPEC")]
    pub i1: Option<String>,
    /// L1 data cache of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(long = "D1", value_name = "SPEC")]
    pub d1: Option<String>,
    /// Unified L2 / last-level cache of a hierarchy (SIZE,ASSOC,LINE).
    #[arg(long = "L2", visible_alias = "LL", value_name = "SPEC")]
    pub l2: Option<String>,
    /// Optional unified L3 (SIZE,ASSOC,LINE).
    #[arg(long = "L3", value_name = "SPEC")]
    pub l3: Option<String>,
    /// How hierarchy levels share lines.
    #[arg(long, value_enum, default_value = "non-inclusive")]
    pub inclusion: InclusionArg,
    /// Classify misses as cold, capacity or conflict (3C).
    #[arg(long = "3c")]
    pub three_c: bool,
    /// An access that straddles a line boundary also touches the next line (Cachegrind's
    /// convention); by default a reference touches the line of its first byte.
    #[arg(long)]
    pub straddle: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV, one row per simulated level (not with --cachegrind).
    #[arg(long, conflicts_with = "cachegrind")]
    pub csv: bool,
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

/// How a miss-ratio curve is obtained: the library's methods, taken by name.
pub use cachescope::method::Method as MrcMethod;

/// How sampled reuse distances are taken (`sample`, `mrc --method statcache|statstack`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Sampling")]
pub struct SamplingArgs {
    /// Probability that a reference is sampled, in (0, 1].
    #[arg(long, default_value_t = cachescope::sampling::DEFAULT_RATE)]
    pub rate: f64,
    /// References per time slot (the models solve each slot on its own).
    #[arg(long, default_value_t = cachescope::sampling::DEFAULT_SLOT_REFS)]
    pub slot: u64,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Sample instruction fetches too (a unified cache).
    #[arg(long)]
    pub include_instructions: bool,
    /// Where to write the profile (`-` for stdout).
    #[arg(short, long, value_name = "PROFILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print the summary as JSON (on stderr when the profile goes to stdout).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary as a CSV header and one row (stderr when the profile goes to stdout).
    #[arg(long)]
    pub csv: bool,
}

/// The replacement policy a curve models: the library's, taken by name.
pub use cachescope::method::CurvePolicy as ReplacementPolicy;

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// An aligned table for people.
    Table,
    /// One JSON object.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

/// Which cache sizes a curve is evaluated at.
#[derive(Debug, Args)]
pub struct SizeArgs {
    /// Cache sizes, comma separated, with units: 32K,256K,8MiB.
    #[arg(long, value_name = "LIST", conflicts_with = "range", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<u64>>,
    /// A range of sizes LO..HI (e.g. 4K..64M), `--per-octave` per power of two
    /// [default: 1K..1G].
    #[arg(long, value_name = "LO..HI", value_parser = parse_range)]
    pub range: Option<(u64, u64)>,
    /// Sizes per power of two in a range: a power of two from 1 to 256.
    #[arg(long, default_value_t = 8)]
    pub per_octave: u64,
}

impl SizeArgs {
    /// The sizes in bytes.
    pub fn resolve(&self) -> Result<Vec<u64>> {
        if let Some(list) = &self.sizes {
            if list.contains(&0) {
                bail!("a cache size of 0 bytes holds nothing; give sizes of at least one line");
            }
            return Ok(list.clone());
        }
        let (lo, hi) = self.range.unwrap_or((
            cachescope::reuse::mrc::DEFAULT_MIN_BYTES,
            cachescope::reuse::mrc::DEFAULT_MAX_BYTES,
        ));
        Ok(cachescope::reuse::sizes_log_range(lo, hi, self.per_octave)?)
    }
}

#[derive(Debug, Args)]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// How the curve is obtained.
    #[arg(long, value_enum, default_value = "exact")]
    pub method: MrcMethod,
    /// Replacement policy [default: lru; random for statcache]. StatCache models random
    /// replacement, StatStack and HOTL model LRU.
    #[arg(long, value_enum)]
    pub policy: Option<ReplacementPolicy>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Miniature simulation's sampling rate, in (0, 1] (`--method mini`).
    #[arg(long, default_value_t = 0.01)]
    pub mini_rate: f64,
    /// Miniature simulation with --ways: every miniature keeps at least this many sets
    /// (caches with no more are simulated whole); 1 scales every cache by --mini-rate alone.
    #[arg(long, default_value_t = cachescope::method::DEFAULT_MINI_MIN_SETS)]
    pub mini_min_sets: u64,
    /// Models: also estimate cold misses (StatCache/StatStack from the samples whose line is
    /// never referenced again), so `miss_ratio` is printed too.
    #[arg(long)]
    pub estimate_cold: bool,
    /// Set-associative caches of this many ways, estimated with Smith's formula from the
    /// stack-distance distribution (exact LRU or HOTL's), instead of fully associative ones.
    #[arg(long, value_name = "WAYS")]
    pub ways: Option<u32>,
    /// `--method hotl`'s reading. `local` (the default): each reuse's window footprint from
    /// the stretch of the trace it ends in, closer at the cliffs of programs in phases
    /// (docs/accuracy/hotl.md); `paper`: HOTL's conversion of the whole trace's footprint.
    #[arg(long, value_enum, default_value = "local")]
    pub hotl_variant: cachescope::models::hotl::HotlVariant,
    #[command(flatten)]
    pub sizes: SizeArgs,
    /// Count instruction fetches too (a unified cache).
    #[arg(long)]
    pub include_instructions: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object: {"method", "policy", "line_size", "points": [...]}.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
}

impl MrcArgs {
    /// Table, JSON or CSV.
    pub fn output_format(&self) -> OutputFormat {
        match (self.json, self.csv) {
            (true, _) => OutputFormat::Json,
            (_, true) => OutputFormat::Csv,
            _ => OutputFormat::Table,
        }
    }
}

/// What a report measures (`report`, `demo`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Report")]
pub struct ReportOptions {
    /// StatCache/StatStack sampling rate, in (0, 1].
    #[arg(long, default_value_t = 1e-3)]
    pub rate: f64,
    /// Phase interval: instructions when the trace has instruction fetches, data references
    /// otherwise (with K/M/G). Fewer than 4 intervals leave the phase timeline out.
    #[arg(long, default_value = "100K", value_parser = parse_count)]
    pub interval: u64,
    /// Ways of the set-associative caches of the 3C breakdown.
    #[arg(long, default_value_t = 8)]
    pub ways: u32,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The trace: a file, or `-` for stdin. Format and compression are detected from the content.
    #[arg(value_name = "TRACE", required_unless_present_any = ["workload", "program"])]
    pub trace: Option<PathBuf>,
    /// Report on a built-in workload instead of a trace (see `cachescope generate --list`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["trace", "program"], value_parser = parse_workload)]
    pub workload: Option<Workload>,
    /// The directory to write report.html, report.json and figures/ into (created if needed).
    #[arg(short, long, value_name = "DIR", default_value = "cachescope-report")]
    pub output: PathBuf,
    #[command(flatten)]
    pub report: ReportOptions,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print what was written as one JSON object instead of the summary table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary table as CSV.
    #[arg(long)]
    pub csv: bool,
    /// A program to record under Valgrind and report on, after `--`.
    #[arg(value_name = "PROGRAM", last = true, num_args = 1.., conflicts_with = "trace")]
    pub program: Vec<std::ffi::OsString>,
    /// With a program: what records it (`tool` or `lackey`, as `record --backend`).
    #[arg(long, value_enum, default_value_t = Backend::Tool)]
    pub backend: Backend,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The built-in workload to generate (see `cachescope generate --list`).
    #[arg(long, value_name = "NAME", default_value = "phases", value_parser = parse_workload)]
    pub workload: Workload,
    /// The directory to write the report into.
    #[arg(short, long, value_name = "DIR", default_value = "cachescope-demo")]
    pub output: PathBuf,
    #[command(flatten)]
    pub report: ReportOptions,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print what was written as one JSON object instead of the summary table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary table as CSV.
    #[arg(long)]
    pub csv: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write cachescope.1 and one page per subcommand into this directory (created if
    /// needed) instead of printing cachescope.1.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

fn parse_threads(s: &str) -> Result<usize> {
    match s.trim().parse::<usize>() {
        Ok(0) => bail!(
            "0 threads: give at least 1 (default: all {} cores)",
            default_threads()
        ),
        Ok(n) => Ok(n),
        Err(_) => bail!("{s:?} is not a number of threads; expected 1 or more"),
    }
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn parse_workload(s: &str) -> Result<Workload> {
    Workload::from_name(s).with_context(|| {
        let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
        format!(
            "unknown workload {s:?}; expected one of {}",
            names.join(", ")
        )
    })
}

fn parse_format(s: &str) -> Result<FormatChoice> {
    Ok(s.parse()?)
}

fn parse_output_format(s: &str) -> Result<cachescope::trace::Format> {
    use cachescope::trace::Format;
    match Format::from_name(s) {
        Some(f) => Ok(f),
        None => bail!(
            "{s:?} is not an output format; expected native, lackey, plain-hex, plain-dec, din, \
             binary or champsim"
        ),
    }
}

/// Parses a byte size: a number with an optional K, M or G (powers of 1024, optional `iB`/`B`).
pub fn parse_size(s: &str) -> Result<u64> {
    Ok(cachescope::units::parse_bytes(s, "size")?)
}

/// Parses a count: a number with an optional K, M or G (powers of 1000), e.g. 1M = 1000000.
pub fn parse_count(s: &str) -> Result<u64> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .with_context(|| format!("{s:?} is not a count; expected e.g. 1000, 64K or 2M"))?;
    n.checked_mul(mult)
        .with_context(|| format!("{s:?} is too large"))
}

/// Parses `LO..HI` sizes.
fn parse_range(s: &str) -> Result<(u64, u64)> {
    let (lo, hi) = s
        .split_once("..")
        .with_context(|| format!("{s:?} is not a range; expected LO..HI, e.g. 4K..64M"))?;
    let (lo, hi) = (parse_size(lo)?, parse_size(hi)?);
    if lo == 0 || lo > hi {
        bail!("{s:?}: expected 0 < LO <= HI");
    }
    Ok((lo, hi))
}

fn parse_memory(s: &str) -> Result<u64> {
    let n = parse_size(s)?;
    if n == 0 {
        bail!("{s:?}: the memory limit must be above 0, e.g. 512M or 4G");
    }
    Ok(n)
}

fn parse_line_size(s: &str) -> Result<LineSize> {
    Ok(LineSize::new(parse_size(s)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("64").unwrap(), 64);
        assert_eq!(parse_size("32K").unwrap(), 32 << 10);
        assert_eq!(parse_size("8MiB").unwrap(), 8 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn line_size_must_be_a_power_of_two() {
        assert!(parse_line_size("48").is_err());
        assert_eq!(parse_line_size("128").unwrap().bytes(), 128);
    }

    #[test]
    fn every_subcommand_help_has_examples() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let names: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .filter(|n| n != "help")
            .collect();
        assert!(names.len() >= 17, "{names:?}");
        for name in names {
            let sub = cli.find_subcommand_mut(&name).expect("listed");
            let help = sub.render_long_help().to_string();
            assert!(
                help.contains("Examples:\n  cachescope "),
                "`cachescope {name} --help` has no examples:\n{help}"
            );
            // Every example runs the subcommand it documents.
            assert!(help.contains(&format!("cachescope {name}")), "{name}");
        }
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

#[derive(Debug, Args)]
pub struct AttributeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The simulated cache, SIZE,ASSOC,LINE (LRU); the default is the paper's.
    #[arg(long, value_name = "SPEC", default_value = "64K,4,32")]
    pub cache: String,
    /// The monitor samples 1 in N misses on average (randomized intervals, seeded by --seed).
    #[arg(long, value_name = "N", default_value_t = 25_000)]
    pub sample: u64,
    /// The event log (memory map, allocations, frees) [default: TRACE.events if present].
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The program, for a trace without an event log: its variables are taken at their link
    /// addresses (right for a non-PIE executable) and its code lines resolve.
    #[arg(long, value_name = "PROGRAM")]
    pub exe: Option<PathBuf>,
    /// Cache lines the monitor's handler touches per sample (the cost model's footprint).
    #[arg(long, value_name = "K", default_value_t = 32)]
    pub handler_lines: u64,
    /// Rows per table on the terminal.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Skip the monitor-cost simulations (four more caches): `monitor_cost` stays empty.
    #[arg(long)]
    pub no_cost: bool,
    /// Skip the per-bucket miss-ratio curves (per-reference stack distances): `mrc` stays
    /// empty. With --no-cost, about three times faster: for repeated runs (several --seed).
    #[arg(long)]
    pub no_mrc: bool,
    /// Also write the counts per source line as a Cachegrind output file (events Ir, Dr,
    /// D1mr, Dw, D1mw and the sampled misses SD1mr, SD1mw) for `cg_annotate FILE` or
    /// KCachegrind.
    #[arg(long, value_name = "FILE")]
    pub cachegrind_out: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print JSON: buckets, evictions, lines, lines_by_misses, monitor_cost, mrc, notes.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per bucket (the JSON's `buckets`).
    #[arg(long)]
    pub csv: bool,
}
