//! `cachescope sharing`: the lines threads share, true or false, ranked by the coherence misses
//! they cause in a multi-core model of the run (docs/threads.md).
//!
//! The two passes are the library's (`cachescope::sharing::Finder`, `Machine`), each with its
//! progress bar; this file has the flags and the printing.

use crate::args::heading;
use std::fmt::Write as _;
use std::num::NonZeroU64;
use std::path::PathBuf;

use anyhow::{Result, bail};
use cachescope::attribution::events::sidecar_path;
use cachescope::interleave::DEFAULT_QUANTUM;
use cachescope::pass::Analyses;
use cachescope::sharing::{Finder, Options, Sharing};
use cachescope::sim::Geometry;
use cachescope::units::thousands;
use clap::Args;

use super::{drive, drive_again};
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs, values};
use crate::input;
use crate::output::{self, Format, Output};

#[derive(Debug, Args)]
pub struct SharingArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Each core's private cache in the coherence model (SIZE,ASSOC,LINE); its line size is
    /// the line the sharing is measured on.
    #[arg(help_heading = heading::CACHE, long = "L1", value_name = "SPEC", default_value = "32K,8,64", value_parser = values::geometry)]
    pub l1: Geometry,
    /// The shared last level below the private caches (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "LL", value_name = "SPEC", default_value = "8M,16,64", value_parser = values::geometry)]
    pub ll: Geometry,
    /// Cores of the model [default: one per thread, up to 64].
    #[arg(help_heading = heading::CACHE, long)]
    pub cores: Option<u32>,
    /// Instructions each thread runs before the next one's turn (see `simulate --quantum`).
    #[arg(help_heading = heading::ANALYSIS, long, default_value_t = DEFAULT_QUANTUM)]
    pub quantum: u64,
    /// The event log naming structures and code [default: TRACE.events if present].
    #[arg(help_heading = heading::INPUT, long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Lines in the table (every line in --json and --csv).
    #[arg(help_heading = heading::OUTPUT, long, default_value_t = 20)]
    pub top: usize,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    #[command(flatten)]
    pub rate: SampledRateArgs,
    /// Print JSON: {"lines": [{"line", "kind", "structure", "threads", "writes", "coherence_misses", "code", "fix"}], ...}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV, one row per shared line.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(args: SharingArgs) -> Result<()> {
    let Some(quantum) = NonZeroU64::new(args.quantum) else {
        bail!("--quantum must be at least 1 instruction for the sharing model");
    };
    let options = Options {
        l1: args.l1,
        ll: args.ll,
        cores: args.cores,
        quantum,
    };
    let mut finder = Finder::new(options)?;
    let mut trace = input::open(&args.input, args.l1.line_size())?;
    // --sampled: the lines of the sample, every thread's references to each (docs/sampled.md).
    if let Some(spatial) =
        args.sampled
            .spatial(args.rate.rate, args.input.params.seed, args.l1.line_size())
    {
        trace.sampled(spatial, None)?;
    }
    drive(&mut trace, Analyses(&mut finder.analyses()), &args.run)?;
    let mut machine = finder.machine(&trace)?;
    drive_again(
        &mut machine.trace,
        Analyses(&mut [&mut machine.model]),
        &args.run,
    )?;
    let mut sharing = machine.finish();
    let log = args.events.clone().or_else(|| {
        let t = args.input.trace.as_deref()?;
        Some(sidecar_path(t)).filter(|p| p.exists())
    });
    sharing.name_from(&trace, log.as_deref(), args.l1.line_size().bytes())?;
    output::emit(
        &Printed {
            sharing,
            top: args.top,
        },
        Format::from_flags(args.json, args.csv),
    )
}

/// What `sharing` prints: the analysis, the table cut at `--top`.
struct Printed {
    sharing: Sharing,
    top: usize,
}

impl Output for Printed {
    fn json(&self) -> Result<String> {
        output::json(&self.sharing)
    }

    fn csv(&self) -> Result<String> {
        let s = &self.sharing;
        let mut o = String::from("line,kind,structure,threads,writes,coherence_misses,code\n");
        for l in &s.lines {
            let threads: Vec<String> = l.threads.iter().map(|t| t.thread.to_string()).collect();
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{}",
                l.line,
                l.kind,
                output::csv_field(&l.structure),
                threads.join(" "),
                l.writes,
                l.coherence_misses,
                output::csv_field(&l.code.join(" "))
            );
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let s = &self.sharing;
        let mut o = format!(
            "# {}: {} threads on {} cores, quantum {} instructions; {} coherence misses in all\n",
            s.source,
            s.threads,
            s.cores,
            s.quantum,
            thousands(s.coherence_misses)
        );
        for n in &s.notes {
            let _ = writeln!(o, "# {n}");
        }
        if s.lines.is_empty() {
            o += "no line is written by one thread and used by another\n";
            return o;
        }
        let _ = writeln!(
            o,
            "{:<18} {:<6} {:>10} {:>10}  {:<24} threads (reads/writes, bytes written)",
            "line", "kind", "coherence", "writes", "structure"
        );
        for l in s.lines.iter().take(self.top) {
            let threads: Vec<String> = l
                .threads
                .iter()
                .map(|t| {
                    format!(
                        "{}: {}/{} [{}]",
                        t.thread, t.reads, t.writes, t.written_bytes
                    )
                })
                .collect();
            let _ = writeln!(
                o,
                "{:<18} {:<6} {:>10} {:>10}  {:<24} {}",
                l.line,
                l.kind,
                thousands(l.coherence_misses),
                thousands(l.writes),
                l.structure,
                threads.join("; ")
            );
            if !l.code.is_empty() {
                // The four busiest writers; --json has them all.
                let code: Vec<&str> = l.code.iter().take(4).map(String::as_str).collect();
                let more = if l.code.len() > 4 { ", …" } else { "" };
                let _ = writeln!(o, "{:<18} written at {}{more}", "", code.join(", "));
            }
            if let Some(fix) = &l.fix {
                let _ = writeln!(o, "{:<18} fix: {fix}", "");
            }
        }
        if s.lines.len() > self.top {
            let _ = writeln!(
                o,
                "… {} more (--top N, or --json)",
                s.lines.len() - self.top
            );
        }
        o
    }
}
