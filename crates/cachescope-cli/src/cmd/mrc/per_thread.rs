//! `mrc --per-thread`: a curve per thread from one pass, printed side by side.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::method::{self, MrcOptions, ThreadRun};
use cachescope::reuse::MrcPoint;
use cachescope::units::{size_label, thousands};

use super::{MrcArgs, csv_cells, notes, ratio_cell};
use crate::cmd::{open_chunked, passes};
use crate::output::{self, Format, Output};

/// Runs the per-thread curves the flags ask for and prints them.
pub fn run(args: &MrcArgs, opts: &MrcOptions) -> Result<()> {
    if crate::input::profile(&args.input)?.is_some() {
        bail!("--per-thread needs a trace: a sampling profile has no threads");
    }
    let Some(mut trace) = open_chunked(&args.input, args.run.line_size)? else {
        return Ok(());
    };
    let threads = method::mrc_per_thread(&mut trace, opts, &mut passes(&args.run))?;
    let notes = threads
        .iter()
        .flat_map(|t| {
            let mut n = vec![format!(
                "thread {}: {} references",
                t.thread,
                thousands(t.refs)
            )];
            n.extend(notes(&t.run, opts).into_iter().map(|s| format!("  {s}")));
            n
        })
        .collect();
    let curves = PerThreadCurves {
        method: opts.method.name(),
        policy: opts.policy()?.name(),
        line_size: opts.options.line_size.bytes(),
        threads,
        notes,
    };
    output::emit(&curves, Format::from_flags(args.json, args.csv))
}

/// The curves of every thread.
struct PerThreadCurves {
    method: &'static str,
    policy: &'static str,
    line_size: u64,
    threads: Vec<ThreadRun>,
    notes: Vec<String>,
}

/// One thread's entry of the JSON: `mrc --json`'s points for that thread.
#[derive(serde::Serialize)]
struct ThreadEntry<'a> {
    thread: u32,
    refs: u64,
    points: &'a [MrcPoint],
}

impl Output for PerThreadCurves {
    fn json(&self) -> Result<String> {
        let threads: Vec<ThreadEntry> = self
            .threads
            .iter()
            .map(|t| ThreadEntry {
                thread: t.thread,
                refs: t.refs,
                points: &t.run.mrc.points,
            })
            .collect();
        output::json(&serde_json::json!({
            "method": self.threads.first().map_or(self.method, |t| t.run.mrc.method.as_str()),
            "policy": self.policy,
            "line_size": self.line_size,
            "threads": threads,
        }))
    }

    fn csv(&self) -> Result<String> {
        let mut o = format!("thread,refs,{}\n", super::CSV_HEADER);
        for t in &self.threads {
            for p in &t.run.mrc.points {
                let _ = writeln!(o, "{},{},{}", t.thread, t.refs, csv_cells(p));
            }
        }
        Ok(o)
    }

    /// One column of warm miss ratios per thread (cold-inclusive ones in `--json`).
    fn table(&self) -> String {
        let mut o = format!(
            "# {} {} miss-ratio curve per thread, {}-B lines; miss_ratio_warm (cold misses \
             left out) per thread\n",
            self.method,
            self.policy.to_uppercase(),
            self.line_size
        );
        for n in &self.notes {
            let _ = writeln!(o, "# {n}");
        }
        let _ = write!(o, "{:>12} {:>12}", "size", "lines");
        for t in &self.threads {
            let _ = write!(o, " {:>12}", format!("thread {}", t.thread));
        }
        o.push('\n');
        let Some(first) = self.threads.first() else {
            return o;
        };
        for (i, p) in first.run.mrc.points.iter().enumerate() {
            let _ = write!(o, "{:>12} {:>12}", size_label(p.size_bytes), p.lines);
            for t in &self.threads {
                let warm = t.run.mrc.points.get(i).map(|p| p.miss_ratio_warm);
                let _ = write!(o, " {:>12}", ratio_cell(warm));
            }
            o.push('\n');
        }
        o
    }
}
