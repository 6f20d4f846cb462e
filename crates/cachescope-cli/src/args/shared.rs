//! Flags shared by many subcommands, flattened into each command's arguments: where the
//! accesses come from (`InputArgs`), how a program given after `--` runs (`LiveArgs`: every
//! command that takes one), how a trace is read, the workload parameters, the run
//! (`--line-size`, `--threads`, `--quiet`), the cache sizes of a curve, sampling, and what a
//! report measures.

use std::path::PathBuf;

use anyhow::{Result, bail};
use cachescope::LineSize;
use cachescope::record::ProgramOutput;
use cachescope::trace::FormatChoice;
use cachescope::workloads::{self, Workload};
use clap::Args;

use super::{heading, values};
use crate::output::Format;

/// Where accesses come from: a trace file, stdin, a built-in workload, or a program run now.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::INPUT)]
pub struct InputArgs {
    /// The trace: a file, or `-` for stdin. Format and compression are detected from the content.
    #[arg(value_name = "TRACE", help_heading = heading::ARGUMENTS, required_unless_present_any = ["workload", "program"])]
    pub trace: Option<PathBuf>,
    /// Analyse a built-in workload instead of a trace (see `cachescope generate --list`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["trace", "program"], value_parser = values::workload)]
    pub workload: Option<Workload>,
    /// A program to run and analyse as it runs, after `--` (under cachescope's Valgrind tool,
    /// as `record` runs it, without writing a trace unless --save is given).
    #[arg(value_name = "PROGRAM", last = true, num_args = 1.., conflicts_with = "trace",
          help_heading = heading::ARGUMENTS)]
    pub program: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub live: LiveArgs,
    /// Analyse the references of this thread alone (thread ids as `stats` lists them; 1 is
    /// the program's first thread and the one thread of a single-stream format).
    #[arg(long, value_name = "ID", help_heading = heading::INPUT)]
    pub thread: Option<cachescope::ThreadId>,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// How a program given after `--` runs: the flags of every command that takes one (`record`,
/// `report` and every analysing command), so each means the same everywhere.
#[derive(Clone, Debug, Args)]
#[command(next_help_heading = heading::PROGRAM)]
pub struct LiveArgs {
    /// Keep the program's trace in this native file (with its event log beside it, where the
    /// command records one: record, report, attribute); written under a temporary name and
    /// renamed when complete. For `record`, the same as -o.
    #[arg(long, value_name = "TRACE", requires = "program")]
    pub save: Option<PathBuf>,
    /// What records the references: `tool`, cachescope's own Valgrind tool (binary records,
    /// ~40x faster than lackey on gzip), or `lackey`, Valgrind's lackey with the LD_PRELOAD
    /// interposer [default: the tool, or lackey with a printed reason where the tool cannot
    /// run; `--backend tool` given is an error there instead].
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Follow the programs the recorded one becomes with exec (a shell script's last
    /// command, a pyenv shim's interpreter): their references continue the trace. Forked
    /// children are never recorded. Needs the tool backend.
    #[arg(long)]
    pub trace_children: bool,
    /// Do not record allocation events: no TRACE.events (memory map, heap allocations and
    /// frees) beside the trace, and no data-structure attribution from them.
    #[arg(long)]
    pub no_events: bool,
    /// Do not record call events (each thread's calls and returns, which `attribute
    /// --callgraph` and the report's function table need; docs/callgraph.md). Without them the
    /// trace gives self costs per function only.
    #[arg(long)]
    pub no_calls: bool,
    /// Record from the start (`yes`), or only between the program's CACHESCOPE_START() and
    /// CACHESCOPE_STOP() (`no`; include/cachescope.h, Callgrind's flag name). Needs the tool.
    #[arg(long, value_enum, value_name = "yes|no", default_value_t = YesNo::Yes)]
    pub collect_atstart: YesNo,
    /// Record only while FUNCTION is on the stack (Callgrind's flag; wildcards `*` and `?`,
    /// as Valgrind matches names; repeat it for several). Needs the tool.
    #[arg(long, value_name = "FUNCTION")]
    pub toggle_collect: Vec<String>,
    /// Where the program's standard output goes: `stdout`, `stderr`, `null` (discarded), or
    /// a file (`./stderr` for a file of that name) [default: stderr, so that cachescope's own
    /// output stays apart; `record -o FILE` leaves it on stdout].
    #[arg(long, value_name = "WHERE", value_parser = values::program_output)]
    pub program_output: Option<ProgramOutput>,
}

impl InputArgs {
    /// The trace when it is a file (not `-`, standard input): what a command can open again
    /// and find an event log beside.
    pub fn trace_file(&self) -> Option<&std::path::Path> {
        self.trace.as_deref().filter(|p| p.as_os_str() != "-")
    }

    /// True when the input reads the same stream however often it is opened: a trace file or
    /// a workload (standard input reads once; a program runs once unless recorded first).
    pub fn reads_again(&self) -> bool {
        self.program.is_empty() && (self.workload.is_some() || self.trace_file().is_some())
    }
}

impl LiveArgs {
    /// Where the program's output goes: `--program-output`, else `default`.
    pub fn output(&self, default: ProgramOutput) -> ProgramOutput {
        self.program_output.clone().unwrap_or(default)
    }
}

/// What runs a program to record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// cachescope's own Valgrind tool.
    Tool,
    /// Valgrind's lackey (text), with the LD_PRELOAD allocation interposer.
    Lackey,
}

/// How to read a trace file.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::INPUT)]
pub struct ReadArgs {
    /// Trace format: auto, lackey, plain, plain-hex, plain-dec, din, binary, native, champsim.
    #[arg(long, default_value = "auto", value_parser = values::input_format)]
    pub format: FormatChoice,
    /// Skip text lines that do not parse, warn once and report how many, instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

/// Parameters of the built-in workloads (each uses those that apply).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = heading::WORKLOAD)]
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
#[command(next_help_heading = heading::RUN)]
pub struct RunArgs {
    /// Cache line size in bytes, a power of two (e.g. 64, 128, 4K).
    #[arg(long, default_value = "64", value_parser = values::line_size)]
    pub line_size: LineSize,
    #[arg(long, default_value_t = values::default_threads(), value_parser = values::threads,
          hide_default_value = true, help = values::threads_help())]
    pub threads: usize,
    /// No progress bar, no warnings: only results and errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How `convert`, `generate` and `record` print the summary of what they wrote.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::OUTPUT)]
pub struct SummaryFormat {
    /// Print the summary (records, data references, distinct lines, bytes written) as one
    /// JSON object; on stderr when the trace goes to stdout.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary as a CSV header and one row (stderr when the trace goes to stdout).
    #[arg(long)]
    pub csv: bool,
}

impl SummaryFormat {
    /// Whether a machine-readable summary was asked for (it needs the distinct lines).
    pub fn wanted(&self) -> bool {
        self.json || self.csv
    }

    /// The summary's form.
    pub fn format(&self) -> Format {
        Format::from_flags(self.json, self.csv)
    }
}

/// Which cache sizes a curve is evaluated at.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::SIZES)]
pub struct SizeArgs {
    /// Cache sizes, comma separated, with units: 32K,256K,8MiB.
    #[arg(long, value_name = "LIST", conflicts_with = "range", value_delimiter = ',', value_parser = values::size)]
    pub sizes: Option<Vec<u64>>,
    /// A range of sizes LO..HI (e.g. 4K..64M), `--per-octave` per power of two
    /// [default: 1K..1G].
    #[arg(long, value_name = "LO..HI", value_parser = values::size_range)]
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

/// How sampled reuse distances are taken (`sample`, `mrc --method statcache|statstack`).
#[derive(Debug, Args)]
#[command(next_help_heading = heading::SAMPLING)]
pub struct SamplingArgs {
    /// Probability that a reference is sampled, in (0, 1] (default 1e-4); with --sampled,
    /// the share of cache lines sampled (default 0.01; StatCache's rate stays 1e-4).
    #[arg(long)]
    pub rate: Option<f64>,
    /// References per time slot (the models solve each slot on its own).
    #[arg(long, default_value_t = cachescope::sampling::DEFAULT_SLOT_REFS)]
    pub slot: u64,
}

/// What a report measures (`report`, `demo`).
#[derive(Debug, Args)]
#[command(next_help_heading = heading::REPORT)]
pub struct ReportOptions {
    /// StatCache/StatStack sampling rate, in (0, 1] (default 0.001); with --sampled, the
    /// share of cache lines sampled (default 0.01; StatCache's rate stays 0.001).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Phase interval: instructions when the trace has instruction fetches, data references
    /// otherwise (with K/M/G), `phases`' default too. Fewer than 4 intervals leave the phase
    /// timeline out.
    #[arg(long, default_value_t = cachescope::phases::DEFAULT_INTERVAL, value_parser = values::count)]
    pub interval: u64,
    /// Ways of the set-associative caches of the 3C breakdown.
    #[arg(long, default_value_t = 8)]
    pub ways: u32,
    /// Add a "What to change" section: `advise`'s top findings on its default machine (a
    /// recorded trace file with its event log; more passes over the trace, docs/advice.md).
    #[arg(long)]
    pub advise: bool,
    /// With --sampled on a trace file with its event log: the attribution section from a
    /// per-structure line sample (each structure's first lines at rate 1, within a budget) of
    /// the full trace, which the sampled stage hands to it beside the sampled pass: closer on
    /// small structures, slower (docs/accuracy/sampled.md). Without it the uniform line
    /// sample's.
    #[arg(long)]
    pub per_structure: bool,
}

/// A yes-or-no flag value (`--write-allocate`, `--collect-atstart`), as Valgrind's tools spell
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum YesNo {
    /// Yes.
    Yes,
    /// No.
    No,
}
