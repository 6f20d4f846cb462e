//! `cachescope attribute`: misses and evictions by stat bucket and code line, exact beside
//! sampled (Buck & Hollingsworth Tables 1–5), the monitor's cost, per-bucket curves.

use cachescope::units::{size_label, thousands};
use std::fmt::Write as _;

use anyhow::{Context, Result};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{Attribution, CostModel, EventSource, Options, Report};
use cachescope::sim::Geometry;

use super::drive;
use crate::args::AttributeArgs;
use crate::{input, output};

pub fn run(mut args: AttributeArgs) -> Result<()> {
    let geometry =
        Geometry::parse(&args.cache).with_context(|| format!("--cache {}", args.cache))?;
    if args.sample == 0 {
        anyhow::bail!("--sample N needs N ≥ 1 (1 samples every miss)");
    }
    // Created before the run, so an unwritable path fails at once; renamed into place at the
    // end, removed if anything fails.
    let cachegrind_out = match &args.cachegrind_out {
        Some(p) => Some(output::Pending::create(p).context("--cachegrind-out")?),
        None => None,
    };
    // What the file's `cmd:` line names: the program's command line, else the trace.
    let cmd = if args.input.program.is_empty() {
        match (&args.input.trace, &args.input.workload) {
            (Some(t), _) => t.display().to_string(),
            (None, Some(w)) => format!("workload {w}"),
            (None, None) => "-".into(),
        }
    } else {
        args.input
            .program
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A program: recorded first, with its allocation events (which the attribution reads
    // from the start of the pass, before the program could produce them), into --save's file
    // or a temporary one; then attributed like any recorded trace.
    let _recorded = if args.input.program.is_empty() {
        None
    } else {
        let dir = tempfile::tempdir()?;
        let path = match &args.input.save {
            Some(p) => p.clone(),
            None => dir.path().join("program.cst"),
        };
        let capture = super::record::Capture {
            backend: crate::args::Backend::Tool,
            trace_children: false,
            stdout_to_stderr: true,
        };
        let format = cachescope::trace::Format::Native;
        super::record::record(
            &args.input.program,
            &path,
            format,
            &args.run,
            true,
            false,
            capture,
        )?;
        args.input.program.clear();
        args.input.save = None;
        args.input.trace = Some(path);
        Some(dir)
    };
    // The event log: --events, else TRACE.events beside a trace file.
    let events_path = args.events.clone().or_else(|| {
        let trace = args
            .input
            .trace
            .as_deref()
            .filter(|p| p.as_os_str() != "-")?;
        Some(sidecar_path(trace)).filter(|p| p.exists())
    });
    let events: Option<EventSource<'static>> = match &events_path {
        Some(p) => Some(Box::new(EventReader::open(p)?)),
        None => None,
    };
    let opts = Options {
        geometry,
        sample_every: args.sample,
        seed: args.input.params.seed,
        cost: (!args.no_cost).then(|| CostModel {
            handler_lines: args.handler_lines,
            ..CostModel::default()
        }),
        mrc: !args.no_mrc,
        exe: args.exe.clone(),
        per_instruction: cachegrind_out.is_some(),
    };
    let mut attribution = Attribution::new(opts, events)?;
    let mut trace = input::open(&args.input, args.run.line_size)?;
    drive(&mut trace, &mut [&mut attribution], &args.run)?;
    let mut report = attribution.finish().with_context(|| match &events_path {
        Some(p) => format!("reading the event log {}", p.display()),
        None => "attributing".into(),
    })?;
    if events_path.is_none() {
        report.notes.insert(
            0,
            "no event log (TRACE.events): no memory map and no allocation events".into(),
        );
    }
    if let (Some((pending, mut file)), Some(path)) = (cachegrind_out, &args.cachegrind_out) {
        use std::io::Write as _;
        let text = cachescope::attribution::cachegrind_out::render(&report, &cmd);
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))?;
        drop(file);
        pending.commit()?;
    }
    if args.json {
        output::print(&(serde_json::to_string_pretty(&report)? + "\n"))
    } else if args.csv {
        let v = serde_json::to_value(&report)?;
        output::print(&output::csv_records(
            v["buckets"].as_array().map_or(&[][..], Vec::as_slice),
        ))
    } else {
        output::print(&render(&report, args.top))
    }
}

fn pct_cell(rank: u32, pct: f64) -> String {
    if rank == 0 {
        format!("{:>5} {:>6}", "-", "-")
    } else {
        format!("{rank:>5} {pct:>6.1}")
    }
}

fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_owned()
    } else {
        let t: String = s.chars().take(w - 1).collect();
        t + "…"
    }
}

/// The terminal tables.
pub fn render(r: &Report, top: usize) -> String {
    let mut o = String::new();
    let g = &r.cache;
    let _ = writeln!(
        o,
        "cache {} {}-way {}B LRU · {} data refs · {} misses ({:.2}%) · 1 in {} misses sampled: {} samples",
        size_label(g.size_bytes()),
        if g.is_fully_associative() {
            "full".to_string()
        } else {
            g.assoc().to_string()
        },
        g.line_size().bytes(),
        thousands(r.data_refs),
        thousands(r.misses),
        if r.data_refs > 0 {
            100.0 * r.misses as f64 / r.data_refs as f64
        } else {
            0.0
        },
        thousands(r.sample_every),
        thousands(r.samples)
    );

    let w = r
        .buckets
        .iter()
        .take(top)
        .map(|b| b.name.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 48);
    let _ = writeln!(
        o,
        "\nMisses by stat bucket{:>pad$}",
        "actual       sampled",
        pad = w + 30
    );
    let _ = writeln!(
        o,
        "{:<w$} {:<6} {:>12} {:>5} {:>6} {:>5} {:>6}",
        "bucket", "kind", "misses", "rank", "%", "rank", "%"
    );
    let shown: Vec<_> = r
        .buckets
        .iter()
        .filter(|b| b.misses > 0 || b.sampled > 0)
        .take(top)
        .collect();
    for b in &shown {
        let kind = serde_json::to_value(b.kind).unwrap_or_default();
        let _ = writeln!(
            o,
            "{:<w$} {:<6} {:>12} {} {}",
            cut(&b.name, w),
            kind.as_str().unwrap_or("?"),
            thousands(b.misses),
            pct_cell(b.actual_rank, b.actual_pct),
            pct_cell(b.sampled_rank, b.sampled_pct)
        );
    }

    // Which loads and stores miss: the top code lines by misses, with their main bucket.
    let _ = writeln!(
        o,
        "\nMisses by code line (the bucket most of them are on){:>pad$}",
        "actual       sampled",
        pad = w + 8
    );
    let _ = writeln!(
        o,
        "{:<36} {:<w$} {:>12} {:>5} {:>6} {:>5} {:>6}",
        "code line", "bucket", "misses", "rank", "%", "rank", "%"
    );
    for l in r.lines_by_misses.iter().take(top) {
        let _ = writeln!(
            o,
            "{:<36} {:<w$} {:>12} {} {}",
            cut(&l.location, 36),
            cut(&l.bucket, w),
            thousands(l.misses),
            pct_cell(l.actual_rank, l.actual_pct),
            pct_cell(l.sampled_rank, l.sampled_pct)
        );
    }

    // Evicted-by: for the top buckets, their evictors with at least 1 % (paper: Table 2).
    let victims: Vec<&str> = shown.iter().take(5).map(|b| b.name.as_str()).collect();
    let _ = writeln!(
        o,
        "\nEvictions: share of each bucket's evictions caused by each evictor (≥ 1 %)"
    );
    let _ = writeln!(
        o,
        "{:<w$} {:<w$} {:>12} {:>5} {:>6} {:>5} {:>6}",
        "bucket", "evicted by", "evictions", "rank", "%", "rank", "%"
    );
    for v in &victims {
        let mut first = true;
        for e in r
            .evictions
            .iter()
            .filter(|e| e.victim == *v && (e.actual_pct >= 1.0 || e.sampled_pct >= 1.0))
        {
            let _ = writeln!(
                o,
                "{:<w$} {:<w$} {:>12} {} {}",
                if first { cut(v, w) } else { String::new() },
                cut(&e.evictor, w),
                thousands(e.evictions),
                pct_cell(e.actual_rank, e.actual_pct),
                pct_cell(e.sampled_rank, e.sampled_pct)
            );
            first = false;
        }
    }

    // By code line (Table 4): the five lines with the most evictions of each top bucket.
    let _ = writeln!(
        o,
        "\nEvictions by evictor and code line: share of each bucket's evictions (top 5)"
    );
    let _ = writeln!(
        o,
        "{:<w$} {:<w$} {:<36} {:>5} {:>6} {:>5} {:>6}",
        "bucket", "evicted by", "code line", "rank", "%", "rank", "%"
    );
    for v in &victims {
        for (i, l) in r
            .lines
            .iter()
            .filter(|l| l.victim == *v)
            .take(5)
            .enumerate()
        {
            let _ = writeln!(
                o,
                "{:<w$} {:<w$} {:<36} {} {}",
                if i == 0 { cut(v, w) } else { String::new() },
                cut(&l.evictor, w),
                cut(&l.location, 36),
                pct_cell(l.actual_rank, l.actual_pct),
                pct_cell(l.sampled_rank, l.sampled_pct)
            );
        }
    }

    if !r.monitor_cost.is_empty() {
        let _ = writeln!(
            o,
            "\nMonitor cost (handler footprint injected at each sample)"
        );
        let _ = writeln!(
            o,
            "{:>10} {:>10} {:>14} {:>14} {:>10}",
            "1 in", "samples", "extra misses", "miss increase", "overhead"
        );
        for c in &r.monitor_cost {
            let _ = writeln!(
                o,
                "{:>10} {:>10} {:>14} {:>13.3}% {:>9.3}%",
                thousands(c.sample_every),
                thousands(c.samples),
                c.extra_misses,
                c.miss_increase_pct,
                c.overhead_pct
            );
        }
    }

    if !r.mrc.is_empty() {
        const SIZES: [u64; 9] = [
            1 << 10,
            4 << 10,
            16 << 10,
            64 << 10,
            256 << 10,
            1 << 20,
            4 << 20,
            16 << 20,
            64 << 20,
        ];
        let _ = writeln!(
            o,
            "\nMiss ratio per bucket (own misses per own reference, fully-associative LRU)"
        );
        let mut head = format!("{:<w$}", "bucket");
        for s in SIZES {
            let _ = write!(head, " {:>6}", size_label(s));
        }
        let _ = writeln!(o, "{head}");
        for c in r.mrc.iter().take(top) {
            let mut row = format!("{:<w$}", cut(&c.name, w));
            for s in SIZES {
                match c.points.iter().find(|p| p.size_bytes == s) {
                    Some(p) => {
                        let _ = write!(row, " {:>6.3}", p.miss_ratio);
                    }
                    None => row.push_str("      -"),
                }
            }
            let _ = writeln!(o, "{row}");
        }
    }

    if !r.notes.is_empty() {
        let _ = writeln!(o, "\nNotes:");
        for n in &r.notes {
            let _ = writeln!(o, "- {n}");
        }
    }
    o
}
