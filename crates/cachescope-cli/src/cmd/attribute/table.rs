//! `attribute`'s output: the terminal tables (Buck & Hollingsworth Tables 1-5), `--json`
//! and `--csv`.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::attribution::Report;
use cachescope::units::{size_label, thousands};

use crate::output::{self, Output};

/// The report and how many rows each terminal table shows (`--top`).
pub struct Table {
    pub report: Report,
    pub top: usize,
}

impl Output for Table {
    fn json(&self) -> Result<String> {
        output::json(&self.report)
    }

    /// One row per bucket (the JSON's `buckets`).
    fn csv(&self) -> Result<String> {
        let v = serde_json::to_value(&self.report)?;
        Ok(output::csv_records(
            v["buckets"].as_array().map_or(&[][..], Vec::as_slice),
        ))
    }

    fn table(&self) -> String {
        render(&self.report, self.top)
    }
}

fn pct_cell(rank: u32, pct: f64) -> String {
    if rank == 0 {
        format!("{:>5} {:>6}", "-", "-")
    } else {
        format!("{rank:>5} {pct:>6.1}")
    }
}

pub(super) fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_owned()
    } else {
        let t: String = s.chars().take(w - 1).collect();
        t + "…"
    }
}

/// The terminal tables.
fn render(r: &Report, top: usize) -> String {
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

    super::usage::render(&mut o, r, top, w);
    super::fields::render(&mut o, r, top);

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

    if let Some(t) = &r.tlb {
        o += &super::tlb::render(t, top);
    }

    if !r.notes.is_empty() {
        let _ = writeln!(o, "\nNotes:");
        for n in &r.notes {
            let _ = writeln!(o, "- {n}");
        }
    }
    o
}
