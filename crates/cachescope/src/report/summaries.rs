//! The report's views of two library reports it shows in part: the phase timeline of
//! [`crate::phases`] and the top structures of [`crate::attribution`].

use crate::attribution::report::{BucketRow, Report as AttributionReport};
use crate::phases::{KChoice, Method, PhaseReport, Unit};
use crate::units::axis_bytes;

use super::model::{
    Attribution, LoadSummaryRow, Matrix, PhaseInterval, PhaseMethod, PhasesSummary, StructureRow,
    UtilizationRow,
};
use super::options::ATTRIBUTION_TOP;

/// The phase timeline of setvectors (the paper's method) and every method's scores.
pub(super) fn phases_summary(r: &PhaseReport) -> PhasesSummary {
    let labels = r.labels(Method::Setvector).unwrap_or_default();
    let intervals = r
        .intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| PhaseInterval {
            index: iv.index,
            data_refs: iv.data_refs,
            l2_hit_rate: iv.l2_hit_rate,
            phase: labels.get(i).copied().unwrap_or(0),
        })
        .collect();
    let l2 = &r.settings.l2;
    PhasesSummary {
        interval: r.settings.interval,
        unit: match r.settings.unit {
            Unit::Instructions => "instructions",
            Unit::DataRefs => "data-refs",
        }
        .into(),
        l2: format!(
            "{},{},{}",
            axis_bytes(l2.size_bytes() as f64),
            l2.assoc(),
            l2.line_size().bytes()
        ),
        // The k asked for (a method makes fewer phases when the signatures are fewer).
        k: match r.settings.k {
            KChoice::Fixed(k) => k,
            KChoice::Sweep { max, .. } => max,
        },
        timeline_method: Method::Setvector.name().into(),
        intervals,
        methods: r
            .methods
            .iter()
            .map(|m| PhaseMethod {
                name: m.name.into(),
                poec: m.poec,
                cov: m.cov,
                sigma_weighted: m.sigma_weighted,
            })
            .collect(),
    }
}

/// The report's view of an attribution: the top buckets by misses and, for each as a victim,
/// the share of its evictions caused by each of them as evictor (rows: victims).
pub(super) fn attribution_summary(r: &AttributionReport) -> Attribution {
    let top: Vec<&BucketRow> = r.buckets.iter().take(ATTRIBUTION_TOP).collect();
    let names: Vec<String> = top.iter().map(|b| b.name.clone()).collect();
    let values = names
        .iter()
        .map(|victim| {
            names
                .iter()
                .map(|evictor| {
                    r.evictions
                        .iter()
                        .find(|e| &e.victim == victim && &e.evictor == evictor)
                        .map_or(0.0, |e| e.actual_pct)
                })
                .collect()
        })
        .collect();
    Attribution {
        cache: r.cache.to_string(),
        structures: top
            .iter()
            .map(|b| StructureRow {
                name: b.name.clone(),
                refs: b.refs,
                misses: b.misses,
                miss_ratio: if b.refs == 0 {
                    0.0
                } else {
                    b.misses as f64 / b.refs as f64
                },
            })
            .collect(),
        evicted_by: Matrix {
            rows: names.clone(),
            cols: names,
            values,
        },
        utilization: r.utilization,
        worst_utilized: worst_utilized(r),
        loads: r
            .loads
            .iter()
            .take(ATTRIBUTION_TOP)
            .map(|l| LoadSummaryRow {
                pc: l.pc.clone(),
                code: l.code.clone(),
                refs: l.refs,
                misses: l.misses,
                stride: l.stride,
                regularity: l.regularity,
                utilization: l.utilization,
            })
            .collect(),
    }
}

/// The structures with at least 1 % of the fetched bytes, lowest utilization first.
fn worst_utilized(r: &AttributionReport) -> Vec<UtilizationRow> {
    let total = r.fetched_bytes.unwrap_or(0);
    r.worst_utilized(0.01)
        .into_iter()
        .take(ATTRIBUTION_TOP)
        .map(|b| {
            let fetched = b.fetched_bytes.unwrap_or(0);
            UtilizationRow {
                name: b.name.clone(),
                fetched_bytes: fetched,
                used_bytes: b.used_bytes.unwrap_or(0),
                utilization: b.utilization.unwrap_or(0.0),
                fetched_pct: if total == 0 {
                    0.0
                } else {
                    100.0 * fetched as f64 / total as f64
                },
            }
        })
        .collect()
}
