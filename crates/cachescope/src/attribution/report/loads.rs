//! The load rows: each load instruction's stride summary beside its misses and the
//! utilization of the lines they fetched, most missing first.

use super::LoadRow;
use crate::attribution::measure::Attribution;
use crate::attribution::symbols::Symbolizer;
use crate::sim::utilization_ratio;

/// Rows kept at most.
const MAX_ROWS: usize = 200;

/// The loads with at least 0.1 % of the misses or of the data references, by misses, then
/// lowest utilization, then references.
pub(super) fn load_rows(a: &Attribution<'_>, sym: &mut Symbolizer) -> Vec<LoadRow> {
    let Some(strides) = &a.strides else {
        return Vec::new();
    };
    let util = a.residency.tracks_utilization();
    let line_bytes = a.options().geometry.line_size().bytes();
    let (misses, refs) = (a.exact.total as f64, a.data_refs as f64);
    let mut rows: Vec<LoadRow> = strides
        .loads()
        .filter(|(_, l)| {
            l.misses as f64 >= misses * 1e-3 && l.misses > 0 || l.refs as f64 >= refs * 1e-3
        })
        .map(|(pc, l)| {
            let code = a.buckets.code_line(sym, pc);
            let (stride, regularity) = l.dominant();
            let used = a.residency.used_by_pc.get(&pc).copied().unwrap_or(0);
            let fetched = l.misses * line_bytes;
            LoadRow {
                pc: format!("{pc:#x}"),
                code: match (&code.file, code.line) {
                    (Some(f), Some(n)) => format!("{f}:{n}"),
                    _ => code.label(),
                },
                function: code.function.clone(),
                refs: l.refs,
                misses: l.misses,
                stride,
                regularity,
                used_bytes: util.then_some(used),
                fetched_bytes: util.then_some(fetched),
                utilization: util.then(|| utilization_ratio(used, fetched)),
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        let u = |r: &LoadRow| r.utilization.unwrap_or(0.0);
        y.misses
            .cmp(&x.misses)
            .then(u(x).total_cmp(&u(y)))
            .then(y.refs.cmp(&x.refs))
            .then_with(|| x.pc.cmp(&y.pc))
    });
    rows.truncate(MAX_ROWS);
    rows
}
