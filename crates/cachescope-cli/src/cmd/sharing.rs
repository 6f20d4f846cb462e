//! `cachescope sharing`: the lines threads share, true or false, ranked by the coherence misses
//! they cause in a multi-core model of the run (docs/threads.md).
//!
//! One pass reads the trace into the sharing analysis and splits it per thread; the threads are
//! then dealt back a quantum at a time (`interleave`) into a machine with a private L1 per core
//! over a shared last level, which counts each line's coherence misses.

use crate::args::heading;
use std::fmt::Write as _;
use std::num::NonZeroU64;
use std::path::PathBuf;

use anyhow::{Result, bail};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::interleave::{DEFAULT_QUANTUM, Interleaver};
use cachescope::pass::Analyses;
use cachescope::sharing::{self, SharedLine, SharingAnalysis};
use cachescope::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig};
use cachescope::trace::Trace;
use cachescope::units::thousands;
use clap::Args;

use super::{drive, drive_again};
use crate::args::{InputArgs, RunArgs, values};
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
    /// Print JSON: {"lines": [{"line", "kind", "structure", "threads", "writes", "coherence_misses", "code", "fix"}], ...}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV, one row per shared line.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(args: SharingArgs) -> Result<()> {
    if args.l1.line_size() != args.ll.line_size() {
        bail!("--L1 and --LL must have the same line size");
    }
    let Some(quantum) = NonZeroU64::new(args.quantum) else {
        bail!("--quantum must be at least 1 instruction for the sharing model");
    };
    let mut trace = input::open(&args.input, args.l1.line_size())?;
    let mut found = SharingAnalysis::new(args.l1.line_size());
    let mut split = Interleaver::new(quantum);
    drive(
        &mut trace,
        Analyses(&mut [&mut found, &mut split]),
        &args.run,
    )?;
    let threads = split.threads().len() as u32;
    let mut lines = found.finish();
    let cores = args.cores.unwrap_or(threads.clamp(1, 64));
    let mut config = MultiCoreConfig::new(
        cores,
        vec![
            LevelSpec::private("L1", args.l1),
            LevelSpec::shared("LL", args.ll),
        ],
    );
    config.by_line = true;
    let mut machine = MultiCore::new(&config)?;
    let mut again = Trace::from_reader(Box::new(split.finish()?), trace.source().clone());
    drive_again(&mut again, Analyses(&mut [&mut machine]), &args.run)?;
    let shift = args.l1.line_size().shift();
    let by_line: std::collections::HashMap<u64, u64> = machine
        .coherence_by_line()
        .unwrap_or_default()
        .into_iter()
        .collect();
    for l in &mut lines {
        l.coherence_misses = by_line.get(&(l.addr >> shift)).copied().unwrap_or(0);
    }
    let total: u64 = by_line.values().sum();
    let mut notes = Vec::new();
    name(&mut lines, &args, &trace, &mut notes)?;
    sharing::rank(&mut lines);
    let report = Sharing {
        source: trace.source().to_string(),
        threads,
        cores,
        quantum: args.quantum,
        coherence_misses: total,
        lines,
        notes,
        top: args.top,
    };
    output::emit(&report, Format::from_flags(args.json, args.csv))
}

/// Names structures and code from the event log, when there is one.
fn name(
    lines: &mut [SharedLine],
    args: &SharingArgs,
    trace: &Trace,
    notes: &mut Vec<String>,
) -> Result<()> {
    let path = args.events.clone().or_else(|| {
        let t = args.input.trace.as_deref()?;
        Some(sidecar_path(t)).filter(|p| p.exists())
    });
    let Some(path) = path else {
        notes.push(
            "no event log (record the program with `cachescope record` first): structures are \
             `other` and code is instruction addresses"
                .into(),
        );
        return Ok(());
    };
    let log = EventReader::open(&path)?;
    if let Some(warning) = cachescope::attribution::run_id::check(trace, &log.header, &path)? {
        notes.push(warning);
    }
    sharing::name(lines, log, None, args.l1.line_size().bytes())?;
    Ok(())
}

/// What `sharing` prints.
#[derive(serde::Serialize)]
struct Sharing {
    source: String,
    threads: u32,
    cores: u32,
    quantum: u64,
    /// Coherence misses of the whole model.
    coherence_misses: u64,
    lines: Vec<SharedLine>,
    notes: Vec<String>,
    #[serde(skip)]
    top: usize,
}

impl Output for Sharing {
    fn json(&self) -> Result<String> {
        output::json(self)
    }

    fn csv(&self) -> Result<String> {
        let mut o = String::from("line,kind,structure,threads,writes,coherence_misses,code\n");
        for l in &self.lines {
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
        let mut o = format!(
            "# {}: {} threads on {} cores, quantum {} instructions; {} coherence misses in all\n",
            self.source,
            self.threads,
            self.cores,
            self.quantum,
            thousands(self.coherence_misses)
        );
        for n in &self.notes {
            let _ = writeln!(o, "# {n}");
        }
        if self.lines.is_empty() {
            o += "no line is written by one thread and used by another\n";
            return o;
        }
        let _ = writeln!(
            o,
            "{:<18} {:<6} {:>10} {:>10}  {:<24} threads (reads/writes, bytes written)",
            "line", "kind", "coherence", "writes", "structure"
        );
        for l in self.lines.iter().take(self.top) {
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
        if self.lines.len() > self.top {
            let _ = writeln!(
                o,
                "… {} more (--top N, or --json)",
                self.lines.len() - self.top
            );
        }
        o
    }
}
