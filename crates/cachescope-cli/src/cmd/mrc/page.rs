//! `mrc --page`: a page-level curve printed by TLB entries and the bytes they cover
//! (docs/tlb.md); with `--per-thread`, the same keys added to every thread's points.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::tlb::PageCurve;
use cachescope::units::size_label;

use super::ratio_cell;
use crate::output::{self, Output};

/// A page-level curve and the table's comment lines.
pub struct PageOutput {
    pub curve: PageCurve,
    pub notes: Vec<String>,
}

/// The CSV columns of a page-level point.
const CSV_HEADER: &str = "entries,covered_bytes,size_bytes,lines,miss_ratio,miss_ratio_warm";

impl Output for PageOutput {
    fn json(&self) -> Result<String> {
        output::json(&self.curve)
    }

    fn csv(&self) -> Result<String> {
        let mut o = format!("{CSV_HEADER}\n");
        for p in &self.curve.points {
            let cold = p.miss_ratio.map(|r| r.to_string()).unwrap_or_default();
            let _ = writeln!(
                o,
                "{},{},{},{},{cold},{}",
                p.entries, p.covered_bytes, p.size_bytes, p.lines, p.miss_ratio_warm
            );
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let c = &self.curve;
        let mut o = format!(
            "# {} {} page-level miss-ratio curve, {} pages: a fully associative TLB of each \
             entry count, per data reference\n\
             # miss_ratio counts cold (first-reference) misses; miss_ratio_warm leaves them out\n",
            c.method,
            c.policy.to_uppercase(),
            size_label(c.page_size)
        );
        for n in &self.notes {
            let _ = writeln!(o, "# {n}");
        }
        let _ = writeln!(
            o,
            "{:>10} {:>12} {:>12} {:>16}",
            "entries", "covers", "miss_ratio", "miss_ratio_warm"
        );
        for p in &c.points {
            let _ = writeln!(
                o,
                "{:>10} {:>12} {:>12} {:>16.6}",
                p.entries,
                size_label(p.covered_bytes),
                ratio_cell(p.miss_ratio),
                p.miss_ratio_warm
            );
        }
        o
    }
}

/// `--per-thread --page`'s JSON: `page_size` beside `line_size`, and each point's `entries`
/// and `covered_bytes`, as a single page-level curve has them.
pub fn add_page_keys(doc: &mut serde_json::Value) {
    let page = doc["line_size"].as_u64().unwrap_or(0);
    doc["page_size"] = page.into();
    for t in doc["threads"].as_array_mut().into_iter().flatten() {
        for p in t["points"].as_array_mut().into_iter().flatten() {
            let lines = p["lines"].as_u64().unwrap_or(0);
            p["entries"] = lines.into();
            p["covered_bytes"] = (lines * page).into();
        }
    }
}
