//! [`Misses`]: a simulation's misses per level, and [`LevelChange`], one level before and after
//! a change (`whatif`'s `levels`, `advise`'s findings).

use crate::sim::{Geometry, MultiCoreReport, SimReport};
use crate::units::size_label;

/// One level's misses before and after. Field names are a public contract (`--json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelChange {
    /// `L1D`, `L2`, a `--cache`'s `32K,8,64`, a multi-core level's name.
    pub level: String,
    /// Misses as the trace is.
    pub misses: u64,
    /// Misses after the change.
    pub misses_after: u64,
}

/// The misses of each level of a simulation, and the coherence misses of a multi-core one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Misses {
    /// (level, misses), top down; a hierarchy's before independent caches.
    pub levels: Vec<(String, u64)>,
    /// Coherence misses summed over every cache (multi-core only).
    pub coherence: Option<u64>,
}

/// `32K,8,64`.
pub fn geometry_label(g: &Geometry) -> String {
    let ways = if g.sets() == 1 && g.assoc() > 1 {
        "full".to_string()
    } else {
        g.assoc().to_string()
    };
    format!(
        "{},{ways},{}",
        size_label(g.size_bytes()),
        g.line_size().bytes()
    )
}

impl Misses {
    /// The levels of single-core simulations: a hierarchy's by name, a `--cache` by its shape.
    pub fn of_sims(reports: &[SimReport]) -> Misses {
        let levels = reports
            .iter()
            .flat_map(|r| &r.levels)
            .map(|l| {
                let name = if l.name == "cache" {
                    geometry_label(&l.geometry)
                } else {
                    l.name.to_owned()
                };
                (name, l.stats.misses)
            })
            .collect();
        Misses {
            levels,
            coherence: None,
        }
    }

    /// The levels of a multi-core machine, summed over cores, and its coherence misses.
    pub fn of_multicore(report: &MultiCoreReport) -> Misses {
        Misses {
            levels: report
                .totals
                .iter()
                .map(|t| (t.level.clone(), t.counts.misses))
                .collect(),
            coherence: Some(report.totals.iter().map(|t| t.counts.coherence).sum()),
        }
    }

    /// Each level before (`self`) and after (`after`), matched by name.
    pub fn compare(&self, after: &Misses) -> Vec<LevelChange> {
        self.levels
            .iter()
            .map(|(level, misses)| LevelChange {
                level: level.clone(),
                misses: *misses,
                misses_after: after
                    .levels
                    .iter()
                    .find(|(l, _)| l == level)
                    .map_or(0, |l| l.1),
            })
            .collect()
    }

    /// The misses of the data levels (a hierarchy's instruction cache left out), summed.
    pub fn data_total(&self) -> u64 {
        self.levels
            .iter()
            .filter(|(l, _)| l != "L1I" && l != "I1")
            .map(|l| l.1)
            .sum()
    }
}

/// `whatif --json`'s document: the changes, what each did, each level before and after, the
/// two simulations (`simulate --json`'s documents) and, with cores, the coherence misses.
pub fn whatif_json(
    changes: &[String],
    applied: &[super::Applied],
    original: serde_json::Value,
    changed: serde_json::Value,
    before: &Misses,
    after: &Misses,
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "changes": changes,
        "applied": applied,
        "levels": before.compare(after),
        "original": original,
        "changed": changed,
    });
    if let (Some(b), Some(a)) = (before.coherence, after.coherence) {
        v["coherence_misses"] = b.into();
        v["coherence_misses_after"] = a.into();
    }
    v
}
