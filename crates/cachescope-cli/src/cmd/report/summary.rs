//! The short terminal summary `report` prints: the miss ratios at five sizes, or CSV, or what
//! was written as JSON.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::report::sampled::{MIN_SAMPLED_LINES, shards_serves};
use cachescope::units::{self, Precision, format_bytes, size_label, thousands};
use cachescope_report::Report;
use cachescope_report::write::Written;

use crate::output::{self, Format, Output};

/// Sizes of the terminal summary: L1-, L2- and LLC-like.
const SIZES: [u64; 5] = [4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20];

/// The short terminal summary (table, CSV, or what was written as JSON).
pub fn print_summary(report: &Report, written: &Written, json: bool, csv: bool) -> Result<()> {
    output::emit(&Summary { report, written }, Format::from_flags(json, csv))
}

/// A report and the files it was written into.
struct Summary<'a> {
    report: &'a Report,
    written: &'a Written,
}

impl Output for Summary<'_> {
    /// What was written.
    fn json(&self) -> Result<String> {
        let Summary { report, written } = self;
        let v = serde_json::json!({
            "source": report.source,
            "html": written.html,
            "json": written.json,
            "figures": written.figures,
            "refs": report.stats.refs,
            "distinct_lines": report.stats.distinct_lines,
            "elapsed_seconds": report.elapsed_seconds,
        });
        output::json(&v)
    }

    /// The miss ratios at the summary's sizes.
    fn csv(&self) -> Result<String> {
        let report = self.report;
        let mut o = String::from("method,policy,size_bytes,miss_ratio\n");
        for m in &report.mrc {
            for p in m.points.iter().filter(|p| SIZES.contains(&p.size_bytes)) {
                let _ = writeln!(
                    o,
                    "{},{},{},{}",
                    m.method,
                    m.policy,
                    p.size_bytes,
                    p.miss_ratio.unwrap_or(p.miss_ratio_warm)
                );
            }
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let Summary { report, written } = self;
        // A sampled report's SHARDS point from too few sampled lines, which the combined
        // curve does not take (docs/sampled.md): shown in brackets, with a note under the
        // table, rather than beside the others as if it were as good.
        let unserved = |method: &str, size: u64| {
            report.sampled.as_ref().is_some_and(|s| {
                method == "shards" && !shards_serves(size / report.line_size, s.final_rate)
            })
        };
        let mut bracketed = false;
        let rows: Vec<(String, Vec<Option<String>>)> = report
            .mrc
            .iter()
            .map(|m| {
                let at = SIZES
                    .iter()
                    .map(|&s| {
                        let p = m.points.iter().find(|p| p.size_bytes == s)?;
                        let v = 100.0 * p.miss_ratio.unwrap_or(p.miss_ratio_warm);
                        Some(if unserved(&m.method, s) {
                            bracketed = true;
                            format!("({v:.3})")
                        } else {
                            format!("{v:.3}")
                        })
                    })
                    .collect();
                (format!("{} {}", m.method, m.policy), at)
            })
            .collect();
        let s = &report.stats;
        let mut o = format!(
            "{}: {} data references, {} distinct {}-B lines ({}), analysed in {:.1} s ({})\n\n\
         {:<20}",
            report.source,
            thousands(s.refs),
            thousands(s.distinct_lines),
            report.line_size,
            format_bytes(s.bytes_touched, Precision::ThreeDigits),
            report.elapsed_seconds,
            units::rate(s.refs, report.elapsed_seconds),
            "miss ratio (%)"
        );
        for size in SIZES {
            let _ = write!(o, " {:>8}", size_label(size));
        }
        o.push('\n');
        for (name, values) in rows {
            let _ = write!(o, "{name:<20}");
            for v in values {
                let _ = write!(o, " {:>8}", v.as_deref().unwrap_or("-"));
            }
            o.push('\n');
        }
        if bracketed {
            let _ = writeln!(
                o,
                "(in brackets: SHARDS from under {MIN_SAMPLED_LINES} sampled lines in the cache, \
                 too few to read; the combined curve takes StatStack's point there, from 100 reuse \
                 samples)"
            );
        }
        let _ = writeln!(
            o,
            "\nWrote {} ({} figures as SVG and PNG in {}, data in {}).",
            written.html.display(),
            written.figures.len() / 2,
            written.html.parent().map_or_else(
                || "figures".into(),
                |d| d.join("figures").display().to_string()
            ),
            written.json.display()
        );
        let _ = writeln!(
            o,
            "Open it in a browser: xdg-open {}",
            written.html.display()
        );
        o
    }
}
