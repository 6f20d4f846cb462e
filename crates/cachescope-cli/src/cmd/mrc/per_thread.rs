//! `mrc --per-thread`: a curve per thread from one pass, printed side by side.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::method::{self, MrcOptions, ThreadCurves};
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
        doc: ThreadCurves::new(&threads, opts)?,
        notes,
        page: args.page.is_some(),
    };
    output::emit(&curves, Format::from_flags(args.json, args.csv))
}

/// The curves of every thread, and the table's comment lines.
struct PerThreadCurves {
    doc: ThreadCurves,
    notes: Vec<String>,
    /// `--page`: the points keyed by entries and covered bytes too.
    page: bool,
}

impl Output for PerThreadCurves {
    fn json(&self) -> Result<String> {
        let mut doc = serde_json::to_value(&self.doc)?;
        if self.page {
            super::page::add_page_keys(&mut doc);
        }
        output::json(&doc)
    }

    fn csv(&self) -> Result<String> {
        let mut o = format!("thread,refs,{}\n", super::CSV_HEADER);
        for t in &self.doc.threads {
            for p in &t.points {
                let _ = writeln!(o, "{},{},{}", t.thread, t.refs, csv_cells(p));
            }
        }
        Ok(o)
    }

    /// One column of warm miss ratios per thread (cold-inclusive ones in `--json`).
    fn table(&self) -> String {
        let d = &self.doc;
        let mut o = format!(
            "# {} {} miss-ratio curve per thread, {}-B lines; miss_ratio_warm (cold misses \
             left out) per thread\n",
            d.method,
            d.policy.to_uppercase(),
            d.line_size
        );
        for n in &self.notes {
            let _ = writeln!(o, "# {n}");
        }
        let _ = write!(o, "{:>12} {:>12}", "size", "lines");
        for t in &d.threads {
            let _ = write!(o, " {:>12}", format!("thread {}", t.thread));
        }
        o.push('\n');
        let Some(first) = d.threads.first() else {
            return o;
        };
        for (i, p) in first.points.iter().enumerate() {
            let _ = write!(o, "{:>12} {:>12}", size_label(p.size_bytes), p.lines);
            for t in &d.threads {
                let warm = t.points.get(i).map(|p| p.miss_ratio_warm);
                let _ = write!(o, " {:>12}", ratio_cell(warm));
            }
            o.push('\n');
        }
        o
    }
}
