//! Command-line flags: the subcommands and the one global flag. Each subcommand's arguments
//! live beside it (`cmd/NAME.rs`); flags many commands share are in [`shared`], flattened
//! into each; [`values`] turns each flag's text into a validated library value while clap
//! parses.

pub mod heading;
pub mod sampled;
pub mod shared;
pub mod tlb;
pub mod values;

use clap::{Parser, Subcommand};

pub use crate::cmd::advise::AdviseArgs;
pub use crate::cmd::attribute::AttributeArgs;
pub use crate::cmd::completions::{CompletionsArgs, ManArgs};
pub use crate::cmd::convert::ConvertArgs;
pub use crate::cmd::corun::CorunArgs;
pub use crate::cmd::demo::DemoArgs;
pub use crate::cmd::footprint::FootprintArgs;
pub use crate::cmd::generate::GenerateArgs;
pub use crate::cmd::hotl::HotlArgs;
pub use crate::cmd::l2::L2Args;
pub use crate::cmd::mrc::MrcArgs;
pub use crate::cmd::phases::PhasesArgs;
pub use crate::cmd::record::RecordArgs;
pub use crate::cmd::report::ReportArgs;
pub use crate::cmd::sample::SampleArgs;
pub use crate::cmd::sharing::SharingArgs;
pub use crate::cmd::simulate::SimulateArgs;
pub use crate::cmd::stats::StatsArgs;
pub use crate::cmd::whatif::WhatifArgs;
pub use sampled::{SampledArgs, SampledRateArgs};
pub use shared::{
    Backend, InputArgs, LiveArgs, ReadArgs, ReportOptions, RunArgs, SamplingArgs, SizeArgs,
    SummaryFormat, WorkloadParams, YesNo,
};
pub use tlb::TlbArgs;

/// Records which flags were given rather than defaulted, where a command must tell them apart
/// (`attribute --line-size`: the default is no request, an explicit one must match `--cache`).
pub fn note_explicit(cli: &mut Cli, matches: &clap::ArgMatches) {
    if let (Command::Attribute(a), Some(("attribute", m))) =
        (&mut cli.command, matches.subcommand())
    {
        a.line_size_given =
            m.value_source("line_size") == Some(clap::parser::ValueSource::CommandLine);
    }
}

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
    #[arg(long, global = true, value_name = "SIZE", value_parser = values::memory)]
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
    /// Exact cache simulation: caches, a hierarchy, Cachegrind's I1/D1/LL model, or a
    /// multi-core machine (--cores).
    #[command(after_help = "Examples:\n  \
        cachescope simulate trace.cst --cache 32K,8,64 --cache 1M,16,64 --3c\n  \
        cachescope simulate trace.cst --I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64 --inclusion inclusive\n  \
        cachescope simulate trace.txt --cachegrind --I1 32K,8,64 --D1 32K,8,64 --LL 8M,16,64\n  \
        cachescope simulate --workload matmul --cache 8K,2,64 --policy random --csv\n  \
        cachescope simulate t.cst --cores 4 --L1 32K,8,64 --L2 1M,16,64 --LL 32M,16,64 --shared LL\n  \
        cachescope simulate t.cst --cores 2 --cache 32K,8,64 --pin 3:0 --quantum 1000 --json")]
    Simulate(Box<SimulateArgs>),
    /// Lines threads share (one writes, another uses it): true or false sharing, the data
    /// structure, the code that writes it, the coherence misses it causes, the fix.
    #[command(after_help = "Examples:\n  \
        cachescope record -o t.cst -- ./threaded_program && cachescope sharing t.cst\n  \
        cachescope sharing --json t.cst --L1 48K,12,64 --LL 32M,16,64 --quantum 1000\n  \
        cachescope sharing -- ./threaded_program")]
    Sharing(SharingArgs),
    /// What a layout change would do: simulate's output for the trace as it is and for the
    /// trace with a structure split, reordered, padded, aligned, moved, given lines per thread
    /// or streamed past the caches (an address transform in front of the simulators).
    #[command(after_help = "Examples:\n  \
        cachescope record -o t.cst -- ./prog && cachescope whatif t.cst --change split:particles=x,y --cache 32K,8,64\n  \
        cachescope whatif t.cst --change pad-rows:grid=64 --I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64\n  \
        cachescope whatif t.cst --cores 4 --L1 32K,8,64 --LL 8M,16,64 --shared LL --change own-line:counters\n  \
        cachescope whatif t.cst --cache 32K,8,64 --change nontemporal:out --json\n  \
        cachescope whatif --cache 32K,8,64 --change split:p=x -- ./prog      records it first")]
    Whatif(Box<WhatifArgs>),
    /// What to change and what it gains: findings (split, pad, false-sharing,
    /// latent-false-sharing, block, prefetch, non-temporal) ranked by the misses their change
    /// saves, each predicted by simulating the changed trace, with the whatif command that
    /// reproduces it.
    #[command(after_help = "Examples:\n  \
        cachescope record -o t.cst -- ./prog && cachescope advise t.cst\n  \
        cachescope advise t.cst --I1 48K,12,64 --D1 48K,12,64 --L2 2M,16,64 --json\n  \
        cachescope advise t.cst --cores 4          false sharing, with each core's L1 over a shared LL\n  \
        cachescope advise --save t.cst -- ./prog    records it first, keeping the trace the whatif commands read")]
    Advise(Box<AdviseArgs>),
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
        cachescope hotl trace.cst --sample-period 1M                        footprint sampling")]
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
        cachescope l2 trace.cst --l1-size 32K --l2-sizes 256K,1M,4M\n  \
        cachescope l2 trace.cst --policy random --variant footprint --simulate\n  \
        cachescope sample trace.cst -o t.prof && cachescope l2 t.prof --l1-size 32K --l2-sizes 1M\n\n\
        Ratios are local: L2 misses per L2 reference (per L1 miss).")]
    L2(L2Args),
    /// Memory phases: cut the trace into intervals, classify them with setvectors and the
    /// methods they are compared with, and score each against the intervals' L2 hit rates.
    #[command(after_help = "Examples:\n  \
        cachescope phases trace.cst                         100K-instruction intervals, k = 2, every method\n  \
        cachescope phases trace.cst --k 2..8 --method setvector,reuse-distance\n  \
        cachescope phases --workload phases --lines 2048 --interval 4096 --k 3 --L2 64K,8,64\n  \
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
        cachescope attribute t.cst --cache 32K,8,64 --sample-period 2500 --json\n  \
        cachescope attribute lackey.txt --exe ./prog      a lackey trace of a non-PIE program, no events\n  \
        cachescope attribute t.cst --cachegrind-out t.cg && cg_annotate t.cg     misses on the source")]
    Attribute(Box<AttributeArgs>),
    /// Every analysis in one pass over a trace, a workload or a program, written as a
    /// self-contained HTML report with figures (SVG, PNG) and report.json.
    #[command(after_help = "Examples:\n  \
        cachescope report trace.cst -o trace-report          then open trace-report/report.html\n  \
        cachescope report --workload zipf --lines 65536 -o zipf-report\n  \
        cachescope report -o ls-report -- ls -l /usr/bin     reports on the program as it runs\n  \
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn only_workload_parameters_sit_under_their_heading() {
        // clap's headings are sticky: a flag declared after a flattened group takes the
        // group's heading unless it names its own. Every flag but the positionals, the
        // global ones and clap's own must have one, and only the workloads' under theirs.
        use clap::CommandFactory;
        let workload = [
            "seed",
            "refs",
            "lines",
            "stride",
            "n",
            "tile",
            "zipf_s",
            "instructions",
        ];
        let global = ["max_memory", "help", "version"];
        for sub in Cli::command().get_subcommands() {
            let name = sub.get_name();
            for arg in sub.get_arguments() {
                let id = arg.get_id().as_str();
                match arg.get_help_heading() {
                    Some(heading::WORKLOAD) => {
                        assert!(workload.contains(&id), "`{name} --{id}` under workloads")
                    }
                    Some(_) => assert!(!arg.is_positional(), "`{name} {id}` not an argument"),
                    None => assert!(
                        arg.is_positional() || global.contains(&id),
                        "`{name} --{id}` has no heading"
                    ),
                }
            }
        }
    }

    #[test]
    fn an_explicit_line_size_is_told_from_the_default() {
        use clap::{CommandFactory, FromArgMatches};
        let given = |argv: &[&str]| {
            let m = Cli::command().try_get_matches_from(argv).unwrap();
            let mut cli = Cli::from_arg_matches(&m).unwrap();
            note_explicit(&mut cli, &m);
            match cli.command {
                Command::Attribute(a) => a.line_size_given,
                _ => unreachable!(),
            }
        };
        assert!(given(&[
            "cachescope",
            "attribute",
            "t.cst",
            "--line-size",
            "64"
        ]));
        assert!(!given(&["cachescope", "attribute", "t.cst"]));
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
