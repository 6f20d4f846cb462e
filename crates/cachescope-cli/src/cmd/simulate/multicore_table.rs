//! `simulate --cores`' output: every cache (each core's copy of a private level, each shared
//! level) and the per-level totals as a table, `--json` the whole report, `--csv` one row per
//! core and level.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::interleave::QuantumUnit;
use cachescope::sim::{CacheCounts, Geometry, MultiCoreReport};
use cachescope::units::{size_label, thousands};

use crate::output::{self, Output};

/// A multi-core run: the model's report and how the threads were interleaved. Field names
/// are a public contract (`--json`).
#[derive(serde::Serialize)]
pub struct MultiCoreRun {
    /// Instructions (or references) per turn; 0: the recorded order.
    pub quantum: u64,
    /// What the quantum counted (`None` with quantum 0).
    pub quantum_unit: Option<QuantumUnit>,
    #[serde(flatten)]
    pub report: MultiCoreReport,
    /// Each thread's TLBs (`tlbs`, `page_walks`, `walk_refs`, `tlb_threads`), when simulated.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub tlb: Option<cachescope::tlb::TlbReport>,
}

impl Output for MultiCoreRun {
    fn json(&self) -> Result<String> {
        output::json(self)
    }

    /// One row per cache: its level, its core (empty when shared), then its counts.
    fn csv(&self) -> Result<String> {
        let rows: Vec<serde_json::Value> = self
            .report
            .caches
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .chain(self.tlb.iter().flat_map(super::tlb::csv_rows))
            .collect();
        Ok(output::csv_records(&rows))
    }

    fn table(&self) -> String {
        let mut o = render(self);
        if let Some(t) = &self.tlb {
            o += &super::tlb::render(t);
        }
        o
    }
}

fn shape(g: &Geometry) -> String {
    let ways = if g.is_fully_associative() {
        "full".to_owned()
    } else {
        g.assoc().to_string()
    };
    format!(
        "{} {ways}-way {}B",
        size_label(g.size_bytes()),
        g.line_size().bytes()
    )
}

fn row(o: &mut String, level: &str, core: &str, shape: &str, c: &CacheCounts) {
    let _ = writeln!(
        o,
        "{level:<5} {core:<6} {shape:<18} {:>14} {:>12} {:>9.4}% {:>12} {:>12} {:>12} {:>12} \
         {:>13} {:>12}",
        thousands(c.refs),
        thousands(c.misses),
        c.miss_ratio() * 100.0,
        thousands(c.cold),
        thousands(c.capacity),
        thousands(c.conflict),
        thousands(c.coherence),
        thousands(c.invalidations),
        thousands(c.transfers),
    );
    // Write-back columns, when tracked.
    if let (Some(made), Some(received)) = (c.writebacks, c.writebacks_received) {
        o.pop();
        let _ = writeln!(o, " {:>12} {:>12}", thousands(made), thousands(received));
    }
}

fn render(run: &MultiCoreRun) -> String {
    let r = &run.report;
    let mut o = String::new();
    let order = match run.quantum_unit {
        None => "in the recorded order".to_owned(),
        Some(QuantumUnit::Instructions) => format!("{} instructions at a time", run.quantum),
        Some(QuantumUnit::References) => format!("{} references at a time", run.quantum),
    };
    let placed: Vec<String> = r
        .placement
        .iter()
        .map(|p| format!("{}→{}", p.thread, p.core))
        .collect();
    let _ = writeln!(
        o,
        "# {} core{}, {} policy, threads dealt {order}; thread→core: {}",
        r.cores,
        if r.cores == 1 { "" } else { "s" },
        r.policy.name(),
        if placed.is_empty() {
            "none".to_owned()
        } else {
            placed.join(" ")
        }
    );
    let _ = writeln!(
        o,
        "{:<5} {:<6} {:<18} {:>14} {:>12} {:>10} {:>12} {:>12} {:>12} {:>12} {:>13} {:>12}",
        "level",
        "core",
        "geometry",
        "refs",
        "misses",
        "miss rate",
        "cold",
        "capacity",
        "conflict",
        "coherence",
        "invalidations",
        "transfers"
    );
    if r.caches.iter().any(|c| c.counts.writebacks.is_some()) {
        o.pop();
        let _ = writeln!(o, " {:>12} {:>12}", "writebacks", "wb received");
    }
    for (level, total) in r.levels.iter().zip(&r.totals) {
        let shape = shape(&level.geometry);
        for cache in r.caches.iter().filter(|c| c.level == level.name) {
            let core = cache.core.map_or("shared".to_owned(), |c| c.to_string());
            row(&mut o, &level.name, &core, &shape, &cache.counts);
        }
        if !level.shared && r.cores > 1 {
            row(&mut o, &level.name, "all", &shape, &total.counts);
        }
    }
    o
}
