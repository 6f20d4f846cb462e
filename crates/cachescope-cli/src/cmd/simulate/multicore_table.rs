//! `simulate --cores`' output: every cache (each core's copy of a private level, each shared
//! level) and the per-level totals as a table, `--json` the whole report, `--csv` one row per
//! core and level.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::cores::Interleave;
use cachescope::interleave::QuantumUnit;
use cachescope::sim::{CacheCounts, Geometry, MultiCoreReport};
use cachescope::units::{count_of, size_label, thousands};

use crate::output::{self, Output};

/// A multi-core run: the model's report and how the threads were interleaved. Field names
/// are a public contract (`--json`).
#[derive(serde::Serialize)]
pub struct MultiCoreRun {
    /// In modelled time or round-robin by instructions (`None`: the recorded order).
    pub interleave: Option<Interleave>,
    /// Cycles, instructions (or references) per turn; 0: the recorded order.
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

fn row(
    o: &mut String,
    (level, core): (&str, &str),
    shape: &str,
    c: &CacheCounts,
    prefetching: bool,
) {
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
    // Write-back columns, then utilization columns, when tracked.
    if let (Some(made), Some(received)) = (c.writebacks, c.writebacks_received) {
        o.pop();
        let _ = writeln!(o, " {:>12} {:>12}", thousands(made), thousands(received));
    }
    if let (Some(used), Some(fetched), Some(u)) = (c.used_bytes, c.fetched_bytes, c.utilization()) {
        o.pop();
        let _ = writeln!(
            o,
            " {:>14} {:>14} {u:>6.3}",
            thousands(used),
            thousands(fetched)
        );
    }
    // Prefetch columns where any cache prefetched; "-" for a cache without a prefetcher.
    if prefetching {
        let show = |n: Option<u64>| n.map_or("-".to_owned(), thousands);
        o.pop();
        let _ = writeln!(
            o,
            " {:>12} {:>12} {:>12}",
            show(c.prefetches),
            show(c.useful_prefetches),
            show(c.useless_prefetches)
        );
    }
}

fn render(run: &MultiCoreRun) -> String {
    let r = &run.report;
    let mut o = String::new();
    let order = match run.quantum_unit {
        None => "in the recorded order".to_owned(),
        Some(QuantumUnit::Cycles) => format!(
            "in modelled time, slices of {}",
            count_of(run.quantum, "cycle")
        ),
        Some(QuantumUnit::Instructions) => format!(
            "round-robin, {} at a time",
            count_of(run.quantum, "instruction")
        ),
        Some(QuantumUnit::References) => format!(
            "round-robin, {} at a time",
            count_of(run.quantum, "reference")
        ),
    };
    let placed: Vec<String> = r
        .placement
        .iter()
        .map(|p| format!("{}→{}", p.thread, p.core))
        .collect();
    let _ = writeln!(
        o,
        "# {}, {} policy, threads dealt {order}; thread→core: {}",
        count_of(u64::from(r.cores), "core"),
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
    if r.caches.iter().any(|c| c.counts.used_bytes.is_some()) {
        o.pop();
        let _ = writeln!(o, " {:>14} {:>14} {:>6}", "used B", "fetched B", "util");
    }
    let prefetching = r.caches.iter().any(|c| c.counts.prefetches.is_some());
    if prefetching {
        o.pop();
        let _ = writeln!(
            o,
            " {:>12} {:>12} {:>12}",
            "prefetches", "useful", "useless"
        );
    }
    for (level, total) in r.levels.iter().zip(&r.totals) {
        let shape = shape(&level.geometry);
        for cache in r.caches.iter().filter(|c| c.level == level.name) {
            let core = cache.core.map_or("shared".to_owned(), |c| c.to_string());
            row(
                &mut o,
                (&level.name, &core),
                &shape,
                &cache.counts,
                prefetching,
            );
        }
        if !level.shared && r.cores > 1 {
            row(
                &mut o,
                (&level.name, "all"),
                &shape,
                &total.counts,
                prefetching,
            );
        }
    }
    clocks(&mut o, r);
    threads(&mut o, r);
    o
}

/// Each core's modelled time.
fn clocks(o: &mut String, r: &MultiCoreReport) {
    if r.clocks.iter().all(|c| c.cycles == 0) {
        return;
    }
    let t = &r.latencies;
    let levels: Vec<String> = r
        .levels
        .iter()
        .zip(&t.levels)
        .map(|(l, c)| format!("{} {c}", l.name))
        .collect();
    let _ = writeln!(
        o,
        "\n# modelled time (cycles: an instruction {}, a hit at {}, memory {}, a transfer {}, \
         an invalidating write {} more)",
        t.instruction,
        levels.join(", "),
        t.memory,
        t.transfer,
        t.invalidate
    );
    let _ = writeln!(
        o,
        "{:<6} {:>16} {:>16} {:>16} {:>14} {:>8}",
        "core", "cycles", "instructions", "stall cycles", "idle cycles", "CPI"
    );
    for c in &r.clocks {
        let cpi = if c.instructions > 0 {
            format!(
                "{:.2}",
                (c.cycles - c.idle_cycles) as f64 / c.instructions as f64
            )
        } else {
            "-".into()
        };
        let _ = writeln!(
            o,
            "{:<6} {:>16} {:>16} {:>16} {:>14} {:>8}",
            c.core,
            thousands(c.cycles),
            thousands(c.instructions),
            thousands(c.stall_cycles),
            thousands(c.idle_cycles),
            cpi
        );
    }
}

/// Each thread's misses per level, when the trace has several threads.
fn threads(o: &mut String, r: &MultiCoreReport) {
    if r.threads.len() < 2 {
        return;
    }
    let _ = writeln!(o, "\n# each thread's references: misses per level");
    let _ = write!(o, "{:<7} {:<5}", "thread", "core");
    for l in &r.levels {
        let _ = write!(o, " {:>14} {:>9}", format!("{} misses", l.name), "rate");
    }
    o.push('\n');
    for t in &r.threads {
        let _ = write!(o, "{:<7} {:<5}", t.thread, t.core);
        for l in &t.levels {
            let _ = write!(
                o,
                " {:>14} {:>8.4}%",
                thousands(l.misses),
                l.miss_ratio * 100.0
            );
        }
        o.push('\n');
    }
}
