//! `report.html`: one self-contained page (inline SVG figures and CSS; no script, no fonts or
//! images fetched), rendered with minijinja from the [`Report`] and its figures.

use minijinja::value::{Serde, Value};
use minijinja::{Environment, context};
use serde::Serialize;

use cachescope::report::Report;
use cachescope::units::{axis_bytes, thousands};

use crate::error::{Error, Result};
use crate::figures::Figure;

static TEMPLATE: &str = include_str!("../templates/report.html");

#[derive(Serialize)]
struct FigureView<'a> {
    id: &'a str,
    title: &'a str,
    caption: &'a str,
    svg: &'a str,
}

#[derive(Serialize)]
struct MrcRow {
    name: String,
    values: Vec<String>,
}

#[derive(Serialize)]
struct MrcTable {
    sizes: Vec<String>,
    rows: Vec<MrcRow>,
}

/// The page for `report` with `figures` (from [`crate::figures::render_all`]).
pub fn render(report: &Report, figures: &[Figure]) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| Error::Template(e.to_string()))?;
    // Counts as the terminal prints them: 1,234,567.
    env.add_filter("count", |n: u64| thousands(n));
    let views: Vec<FigureView> = figures
        .iter()
        .map(|f| FigureView {
            id: &f.info.id,
            title: &f.info.title,
            caption: &f.info.caption,
            svg: inline_svg(&f.svg),
        })
        .collect();
    env.get_template("report.html")
        .and_then(|t| {
            t.render(context! {
                report => Value::from(Serde(report)),
                figures => Value::from(Serde(&views)),
                summary => Value::from(Serde(summary(report))),
                mrc_table => Value::from(Serde(mrc_table(report))),
                three_c_table => Value::from(Serde(three_c_table(report))),
                l2_table => Value::from(Serde(l2_table(report))),
            })
        })
        .map_err(|e| Error::Template(format!("{e:#}")))
}

/// The `<svg>` element of an SVG document (no XML prolog inside HTML).
fn inline_svg(doc: &str) -> &str {
    doc.find("<svg").map_or(doc, |i| &doc[i..])
}

fn summary(r: &Report) -> Vec<[String; 2]> {
    let s = &r.stats;
    let mut rows = Vec::new();
    if let Some(program) = &r.program {
        rows.push(["program".into(), program.clone()]);
    }
    rows.extend([
        [
            "data references".into(),
            format!(
                "{} (loads {}, stores {}, modifies {})",
                thousands(s.refs),
                thousands(s.loads),
                thousands(s.stores),
                thousands(s.modifies)
            ),
        ],
        ["instruction fetches".into(), thousands(s.instructions)],
        [
            "distinct lines".into(),
            format!(
                "{} ({} touched)",
                thousands(s.distinct_lines),
                axis_bytes(s.bytes_touched as f64)
            ),
        ],
        [
            "cold miss ratio".into(),
            format!(
                "{:.3}%",
                100.0 * s.distinct_lines as f64 / s.refs.max(1) as f64
            ),
        ],
    ]);
    if let Some(size) = fits_at(r) {
        rows.push([
            "smallest LRU cache with at most 1% warm misses".into(),
            axis_bytes(size as f64),
        ]);
    }
    rows.extend(threads_summary(r));
    rows.push([
        "analysis time".into(),
        format!("{:.2} s", r.elapsed_seconds),
    ]);
    rows
}

/// The threads rows of the summary: how many, their coherence misses, the costliest shared
/// line (the threads section has the rest).
fn threads_summary(r: &Report) -> Vec<[String; 2]> {
    let Some(t) = &r.threads else {
        return Vec::new();
    };
    let mut rows = vec![["threads".into(), t.ids.len().to_string()]];
    if let Some(sh) = &t.sharing {
        rows.push([
            "coherence misses".into(),
            format!(
                "{} (the threads section's machine: a private L1 per thread)",
                thousands(sh.coherence_misses)
            ),
        ]);
        if let Some(l) = sh.lines.first() {
            rows.push([
                "costliest shared line".into(),
                format!(
                    "{} {} ({}): {} coherence misses",
                    l.line,
                    l.structure,
                    if l.kind == "true" {
                        "true sharing"
                    } else {
                        "false sharing"
                    },
                    thousands(l.coherence_misses)
                ),
            ]);
        }
    }
    rows
}

/// The smallest size where exact LRU takes at most 1 % warm misses (per reference).
fn fits_at(r: &Report) -> Option<u64> {
    let lru = r.mrc.first()?;
    lru.points
        .iter()
        .find(|p| p.miss_ratio_warm <= 0.01)
        .map(|p| p.size_bytes)
}

/// Miss ratios (%) of every method at every power-of-two size of the exact curve.
fn mrc_table(r: &Report) -> MrcTable {
    let sizes: Vec<u64> = r
        .mrc
        .first()
        .map(|m| {
            m.points
                .iter()
                .map(|p| p.size_bytes)
                .filter(|s| s.is_power_of_two())
                .collect()
        })
        .unwrap_or_default();
    let step = sizes.len().div_ceil(12).max(1);
    let sizes: Vec<u64> = sizes.into_iter().step_by(step).collect();
    let rows = r
        .mrc
        .iter()
        .map(|m| MrcRow {
            name: format!("{} {}", m.method, m.policy.to_uppercase()),
            values: sizes
                .iter()
                .map(|&s| {
                    m.points
                        .iter()
                        .find(|p| p.size_bytes == s)
                        .map_or("-".into(), |p| {
                            format!("{:.2}", 100.0 * p.miss_ratio.unwrap_or(p.miss_ratio_warm))
                        })
                })
                .collect(),
        })
        .collect();
    MrcTable {
        sizes: sizes.iter().map(|&s| axis_bytes(s as f64)).collect(),
        rows,
    }
}

/// One row per L2 size: its label, the simulated ratio and each model's, in percent.
fn l2_table(r: &Report) -> Vec<Vec<String>> {
    let Some(l2) = &r.l2 else {
        return Vec::new();
    };
    let pct = |p: &cachescope::reuse::MrcPoint| {
        format!("{:.2}", 100.0 * p.miss_ratio.unwrap_or(p.miss_ratio_warm))
    };
    l2.simulated
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut row = vec![axis_bytes(p.size_bytes as f64), pct(p)];
            row.extend(
                l2.predicted
                    .iter()
                    .map(|m| m.points.get(i).map_or_else(|| "-".into(), pct)),
            );
            row
        })
        .collect()
}

fn three_c_table(r: &Report) -> Vec<Vec<String>> {
    r.three_c
        .points
        .iter()
        .map(|p| {
            let pct = |n: u64| format!("{:.3}%", 100.0 * n as f64 / p.refs.max(1) as f64);
            vec![
                format!("{} {}-way", axis_bytes(p.size_bytes as f64), r.three_c.ways),
                pct(p.misses),
                pct(p.cold),
                pct(p.capacity),
                pct(p.conflict),
                format!("{:.3}%", 100.0 * p.smith_miss_ratio),
            ]
        })
        .collect()
}
