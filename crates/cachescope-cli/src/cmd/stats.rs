//! `cachescope stats`.

use crate::args::heading;
use std::fmt::Write as _;

use anyhow::Result;
use cachescope::parallel::{Both, PerThreadPlan, StatsPlan};
use cachescope::pass::Plan;
use cachescope::stats::StatsReport;
use cachescope::units::{Precision, format_bytes, thousands};
use clap::Args;

use super::{drive, open_chunked};
use crate::args::{InputArgs, RunArgs};
use crate::output::{self, Format, Output, csv_field};

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object instead of a table.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print a CSV header and one row.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(args: StatsArgs) -> Result<()> {
    let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
        return Ok(());
    };
    let plan = StatsPlan {
        line_size: args.run.line_size,
    };
    // The trace and each of its threads, in one pass.
    let both = Both(plan, PerThreadPlan(plan));
    let (stats, threads) = drive(&mut trace, Plan(&both), &args.run)?;
    let report = StatsReport::new(&trace, stats, &threads);
    output::emit(&report, Format::from_flags(args.json, args.csv))
}

impl Output for StatsReport {
    fn table(&self) -> String {
        render(self)
    }

    fn json(&self) -> Result<String> {
        output::json(self)
    }

    fn csv(&self) -> Result<String> {
        Ok(render_csv(self))
    }
}

/// The human-readable table.
pub fn render(r: &StatsReport) -> String {
    let s = &r.stats;
    let mut o = String::new();
    let compression = if r.compression == "none" {
        String::new()
    } else {
        format!(", {}", r.compression)
    };
    let _ = writeln!(
        o,
        "trace              {} ({}{compression})",
        r.source, r.format
    );
    for note in &r.notes {
        let _ = writeln!(o, "assumed            {note}");
    }
    let _ = writeln!(o, "line size          {} B", s.line_size);
    let _ = writeln!(
        o,
        "data refs          {}  (loads {}, stores {}, modifies {})",
        thousands(s.refs),
        thousands(s.loads),
        thousands(s.stores),
        thousands(s.modifies)
    );
    let _ = writeln!(o, "instruction fetches {}", thousands(s.instructions));
    let _ = writeln!(
        o,
        "distinct lines     {}  ({} touched)",
        thousands(s.distinct_lines),
        format_bytes(s.bytes_touched, Precision::ThreeDigits)
    );
    let _ = writeln!(
        o,
        "instruction lines  {}",
        thousands(s.distinct_instruction_lines)
    );
    let _ = writeln!(o, "straddling refs    {}", thousands(s.straddling_refs));
    if let (Some(lo), Some(hi)) = (&s.address_min, &s.address_max) {
        let _ = writeln!(o, "address range      {lo} .. {hi}");
    }
    if r.skipped_lines > 0 {
        let _ = writeln!(o, "skipped lines      {}", thousands(r.skipped_lines));
    }
    if r.threads.len() > 1 {
        render_threads(&mut o, r);
    }
    o
}

/// The per-thread table, for a trace with more than one thread.
fn render_threads(o: &mut String, r: &StatsReport) {
    let _ = writeln!(o, "threads            {}", r.threads.len());
    let _ = writeln!(
        o,
        "  {:>6}  {:>14}  {:>7}  {:>14}  {:>12}",
        "thread", "data refs", "share", "instr fetches", "lines"
    );
    for t in &r.threads {
        let share = t.refs as f64 / r.stats.refs.max(1) as f64;
        let _ = writeln!(
            o,
            "  {:>6}  {:>14}  {:>6.1}%  {:>14}  {:>12}",
            t.thread,
            thousands(t.refs),
            100.0 * share,
            thousands(t.instructions),
            thousands(t.distinct_lines)
        );
    }
}

/// A header and one row: the numeric fields of `--json`.
pub fn render_csv(r: &StatsReport) -> String {
    let s = &r.stats;
    format!(
        "source,format,line_size,refs,loads,stores,modifies,instructions,distinct_lines,\
         distinct_instruction_lines,bytes_touched,data_bytes_accessed,straddling_refs,skipped_lines\n\
         {},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(&r.source),
        r.format,
        s.line_size,
        s.refs,
        s.loads,
        s.stores,
        s.modifies,
        s.instructions,
        s.distinct_lines,
        s.distinct_instruction_lines,
        s.bytes_touched,
        s.data_bytes_accessed,
        s.straddling_refs,
        r.skipped_lines
    )
}
