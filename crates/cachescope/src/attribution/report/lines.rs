//! The code-line rows: counts per source line (for `--cachegrind-out`) and misses by line.

use hashbrown::HashMap;

use super::rank::{Ranks, pct};
use super::*;
use crate::attribution::cachegrind_out::LineCounts;
use crate::attribution::measure::Attribution;
use crate::attribution::symbols::{CodeLine, Symbolizer};

/// The per-instruction counts merged by source file (full path), function and line.
pub(super) fn source_lines(
    a: &Attribution<'_>,
    sym: &mut Symbolizer,
    per_pc: &crate::attribution::Map<u64, LineCounts>,
) -> Vec<SourceLine> {
    let mut acc: std::collections::BTreeMap<(Option<String>, Option<String>, u32), LineCounts> =
        std::collections::BTreeMap::new();
    for (&pc, counts) in per_pc {
        let code = a.buckets.code_line(sym, pc);
        let file = code
            .file
            .as_ref()
            .map(|f| a.buckets.source_path(pc).unwrap_or_else(|| f.clone()));
        acc.entry((file, code.function, code.line.unwrap_or(0)))
            .or_default()
            .add(counts);
    }
    acc.into_iter()
        .map(|((file, function, line), counts)| SourceLine {
            file,
            function,
            line,
            counts,
        })
        .collect()
}

/// Misses by code line (instructions on one source line merged), exact beside sampled.
pub(super) fn miss_lines(
    a: &Attribution<'_>,
    sym: &mut Symbolizer,
    bucket_name: &dyn Fn(u32) -> String,
) -> Vec<MissLineRow> {
    #[derive(Default)]
    struct Acc {
        misses: u64,
        sampled: u64,
        used: u64,
        by_bucket: HashMap<String, u64>,
    }
    let mut acc: HashMap<CodeLine, Acc> = HashMap::new();
    for (t, sampled_side) in [(&a.exact, false), (&a.sampled, true)] {
        for (&(pc, b), &n) in &t.by_pc {
            let e = acc.entry(a.buckets.code_line(sym, pc)).or_default();
            if sampled_side {
                e.sampled += n;
            } else {
                e.misses += n;
                *e.by_bucket.entry(bucket_name(b)).or_default() += n;
            }
        }
    }
    for (&pc, &used) in &a.residency.used_by_pc {
        acc.entry(a.buckets.code_line(sym, pc)).or_default().used += used;
    }
    let util = a.residency.tracks_utilization();
    let line_bytes = a.options().geometry.line_size().bytes();
    let rank = Ranks::new(acc.iter().map(|(c, x)| (c.label(), x.misses, x.sampled)));
    let (total, samples) = (a.exact.total, a.sampled.total);
    let mut rows: Vec<MissLineRow> = acc
        .into_iter()
        .filter(|(_, x)| x.sampled > 0 || x.misses as f64 >= total as f64 * 1e-3)
        .map(|(code, x)| {
            let location = code.label();
            let (bucket, n) = x
                .by_bucket
                .into_iter()
                .max_by(|p, q| p.1.cmp(&q.1).then_with(|| q.0.cmp(&p.0)))
                .unwrap_or_default();
            let (actual_rank, sampled_rank) = rank.of(&location);
            let fetched = x.misses * line_bytes;
            MissLineRow {
                used_bytes: util.then_some(x.used),
                fetched_bytes: util.then_some(fetched),
                utilization: util.then(|| crate::sim::utilization_ratio(x.used, fetched)),
                misses: x.misses,
                actual_rank,
                actual_pct: pct(x.misses, total),
                sampled: x.sampled,
                sampled_rank,
                sampled_pct: pct(x.sampled, samples),
                bucket_pct: pct(n, x.misses),
                bucket,
                location,
                code,
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.misses
            .cmp(&x.misses)
            .then(y.sampled.cmp(&x.sampled))
            .then_with(|| x.location.cmp(&y.location))
    });
    rows
}
