//! Building the [`Report`] from a finished attribution: buckets merged by name, every table
//! ranked actual beside sampled, the per-bucket curves.

use hashbrown::HashMap;

use super::lines::{miss_lines, source_lines};
use super::loads::load_rows;
use super::rank::{Ranks, pct};
use super::*;
use crate::attribution::measure::Attribution;
use crate::attribution::symbols::{CodeLine, Symbolizer};
use crate::reuse::{StackDistances, default_sizes};
use crate::sim::utilization_ratio;

/// The report of `a`, with the monitor's cost rows and the per-bucket stack distances.
pub(in crate::attribution) fn build(
    a: &Attribution<'_>,
    monitor_cost: Vec<CostRow>,
    mrc: Option<Vec<StackDistances>>,
) -> Report {
    let mut sym = Symbolizer::default();
    // Raw ids → merged buckets (heap paths with one name become one bucket).
    let raw = a.buckets.finish_names(&mut sym);
    let mut names: Vec<(String, BucketKind)> = Vec::new();
    let mut index: HashMap<(String, BucketKind), usize> = HashMap::new();
    let merged: Vec<usize> = raw
        .into_iter()
        .map(|k| {
            *index.entry(k.clone()).or_insert_with(|| {
                names.push(k);
                names.len() - 1
            })
        })
        .collect();
    let m = |raw: u32| merged[raw as usize];
    let nb = names.len();
    let sum_by = |v: &[u64]| {
        let mut out = vec![0u64; nb];
        for (i, &x) in v.iter().enumerate() {
            out[merged[i]] += x;
        }
        out
    };
    let misses = sum_by(&a.exact.misses);
    let sampled = sum_by(&a.sampled.misses);
    let refs = sum_by(&a.bucket_refs);
    let line_bytes = a.options().geometry.line_size().bytes();
    let util = a.residency.tracks_utilization();
    let wb = a.residency.tracks_writebacks();
    let used = sum_by(&a.residency.used);
    let writebacks = sum_by(&a.residency.writebacks);
    let pairs = |t: &crate::attribution::tally::Tally| {
        let mut out: HashMap<(usize, usize), u64> = HashMap::new();
        for (&(v, e), &n) in &t.evictions {
            *out.entry((m(v), m(e))).or_default() += n;
        }
        out
    };
    let (ev, ev_s) = (pairs(&a.exact), pairs(&a.sampled));
    let mut evicted = vec![0u64; nb];
    let mut evicted_s = vec![0u64; nb];
    for (&(v, _), &n) in &ev {
        evicted[v] += n;
    }
    for (&(v, _), &n) in &ev_s {
        evicted_s[v] += n;
    }

    // Table 1.
    let name = |i: usize| names[i].0.clone();
    let rank = Ranks::new((0..nb).map(|i| (name(i), misses[i], sampled[i])));
    let data = a.data_refs;
    let mut buckets: Vec<BucketRow> = (0..nb)
        .filter(|&i| {
            misses[i] > 0 || sampled[i] > 0 || refs[i] as f64 >= data as f64 * 1e-4 && refs[i] > 0
        })
        .map(|i| {
            let (actual_rank, sampled_rank) = rank.of(&name(i));
            BucketRow {
                name: name(i),
                kind: names[i].1,
                refs: refs[i],
                misses: misses[i],
                actual_rank,
                actual_pct: pct(misses[i], a.exact.total),
                sampled: sampled[i],
                sampled_rank,
                sampled_pct: pct(sampled[i], a.sampled.total),
                evicted: evicted[i],
                used_bytes: util.then_some(used[i]),
                fetched_bytes: util.then_some(misses[i] * line_bytes),
                utilization: util.then(|| utilization_ratio(used[i], misses[i] * line_bytes)),
                writebacks: wb.then_some(writebacks[i]),
            }
        })
        .collect();
    buckets.sort_by(|x, y| {
        y.misses
            .cmp(&x.misses)
            .then(y.refs.cmp(&x.refs))
            .then_with(|| x.name.cmp(&y.name))
    });
    let order: HashMap<String, usize> = buckets
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.clone(), i))
        .collect();
    let pos = |n: &str| order.get(n).copied().unwrap_or(usize::MAX);

    // Tables 2–3: per victim, its evictors.
    let mut evictions = Vec::new();
    let mut keys: Vec<(usize, usize)> = ev.keys().chain(ev_s.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    let mut per_victim: HashMap<usize, Vec<(usize, u64, u64)>> = HashMap::new();
    for (v, e) in keys {
        let n = ev.get(&(v, e)).copied().unwrap_or(0);
        let s = ev_s.get(&(v, e)).copied().unwrap_or(0);
        per_victim.entry(v).or_default().push((e, n, s));
    }
    for (&v, rows) in &per_victim {
        let rank = Ranks::new(rows.iter().map(|r| (name(r.0), r.1, r.2)));
        for &(e, n, s) in rows {
            let (actual_rank, sampled_rank) = rank.of(&name(e));
            evictions.push(EvictionRow {
                victim: name(v),
                evictor: name(e),
                evictions: n,
                actual_rank,
                actual_pct: pct(n, evicted[v]),
                sampled: s,
                sampled_rank,
                sampled_pct: pct(s, evicted_s[v]),
            });
        }
    }
    evictions.sort_by(|x, y| {
        pos(&x.victim)
            .cmp(&pos(&y.victim))
            .then_with(|| x.victim.cmp(&y.victim))
            .then(y.evictions.cmp(&x.evictions))
            .then(y.sampled.cmp(&x.sampled))
            .then_with(|| x.evictor.cmp(&y.evictor))
    });

    // Table 4: per victim, (evictor, code line).
    let mut line_counts: HashMap<(usize, usize, CodeLine), (u64, u64)> = HashMap::new();
    for (t, sampled_side) in [(&a.exact, false), (&a.sampled, true)] {
        for (&(v, e, pc), &n) in &t.lines {
            let code = a.buckets.code_line(&mut sym, pc);
            let c = line_counts.entry((m(v), m(e), code)).or_default();
            if sampled_side {
                c.1 += n;
            } else {
                c.0 += n;
            }
        }
    }
    let mut by_victim: HashMap<usize, Vec<(usize, CodeLine, u64, u64)>> = HashMap::new();
    for ((v, e, code), (n, s)) in line_counts {
        by_victim.entry(v).or_default().push((e, code, n, s));
    }
    let mut lines = Vec::new();
    for (v, rows) in by_victim {
        let key = |r: &(usize, CodeLine, u64, u64)| (name(r.0), r.1.label());
        let rank = Ranks::new(rows.iter().map(|r| (key(r), r.2, r.3)));
        for r in rows {
            let share = pct(r.2, evicted[v]);
            if share < 0.1 && r.3 == 0 {
                continue;
            }
            let (actual_rank, sampled_rank) = rank.of(&key(&r));
            lines.push(LineRow {
                victim: name(v),
                evictor: name(r.0),
                location: r.1.label(),
                code: r.1,
                evictions: r.2,
                actual_rank,
                actual_pct: share,
                sampled: r.3,
                sampled_rank,
                sampled_pct: pct(r.3, evicted_s[v]),
            });
        }
    }
    lines.sort_by(|x, y| {
        pos(&x.victim)
            .cmp(&pos(&y.victim))
            .then_with(|| x.victim.cmp(&y.victim))
            .then(y.evictions.cmp(&x.evictions))
            .then(y.sampled.cmp(&x.sampled))
            .then_with(|| (&x.evictor, &x.location).cmp(&(&y.evictor, &y.location)))
    });

    let structures = super::fields::structures(a, &mut sym, &merged, &names);
    let lines_by_misses = miss_lines(a, &mut sym, &|raw| name(m(raw)));
    let loads = load_rows(a, &mut sym);
    let source_lines = a
        .per_pc
        .as_ref()
        .map(|per_pc| source_lines(a, &mut sym, per_pc))
        .unwrap_or_default();

    // Per-bucket curves.
    let mut curves = Vec::new();
    if let Some(parts) = mrc {
        let sizes = default_sizes();
        let mut merged_sd: Vec<Option<StackDistances>> = vec![None; nb];
        for (i, sd) in parts.into_iter().enumerate() {
            match &mut merged_sd[merged[i]] {
                Some(acc) => {
                    acc.refs += sd.refs;
                    acc.cold += sd.cold;
                    acc.histogram.merge(&sd.histogram);
                }
                slot @ None => *slot = Some(sd),
            }
        }
        for (i, sd) in merged_sd.into_iter().enumerate() {
            let Some(sd) = sd else { continue };
            if sd.refs == 0
                || (sd.refs as f64) < data as f64 * 1e-3
                    && (misses[i] as f64) < a.exact.total as f64 * 1e-3
            {
                continue;
            }
            let points = sizes
                .iter()
                .map(|&size_bytes| {
                    let misses = sd.misses(size_bytes / sd.line_size).estimate;
                    CurvePoint {
                        size_bytes,
                        misses,
                        miss_ratio: misses / sd.refs as f64,
                    }
                })
                .collect();
            curves.push(BucketCurve {
                name: name(i),
                kind: names[i].1,
                refs: sd.refs,
                cold: sd.cold,
                points,
            });
        }
        curves.sort_by(|x, y| pos(&x.name).cmp(&pos(&y.name)).then(y.refs.cmp(&x.refs)));
    }

    let mut notes = a.buckets.notes.clone();
    notes.extend(a.buckets.module_notes());
    let stack_used = a.bucket_refs.get(super::super::buckets::STACK as usize) > Some(&0);
    notes.extend(a.buckets.locals_notes(stack_used));
    if !a.buckets.saw_heap_events {
        notes.push(
            "no allocation events: heap blocks are attributed to \"other\" (record with \
             `cachescope record` to get heap allocation sites)"
                .into(),
        );
    }
    if !a.buckets.saw_map && a.buckets.modules().is_empty() {
        notes.push(
            "no memory map and no executable: global variables are unknown; buckets are the \
             stack (by address region) and \"other\""
                .into(),
        );
    } else if !a.buckets.saw_map {
        notes.push(
            "no memory map: the executable is taken at its link addresses (right for a non-PIE \
             executable); the stack is the Valgrind client stack region or the top of the \
             address space"
                .into(),
        );
    }
    if a.sampled.total < 100 && a.exact.total > 0 {
        notes.push(format!(
            "only {} sampled misses: sampled percentages are rough (a bucket's sampled share \
             has a standard error of about 50/sqrt(samples) percentage points)",
            a.sampled.total
        ));
    }
    let mut seen = hashbrown::HashSet::new();
    if let Some(t) = &a.tlb {
        notes.extend(t.unmatched_notes());
    }
    notes.retain(|n| seen.insert(n.clone()));

    let (used_total, fetched_total) = (used.iter().sum(), a.exact.total * line_bytes);
    Report {
        cache: a.options().geometry,
        sample_every: a.options().sample_every,
        seed: a.options().seed,
        records: a.position(),
        data_refs: a.data_refs,
        instructions: a.instructions,
        misses: a.exact.total,
        evictions_total: evicted.iter().sum(),
        samples: a.sampled.total,
        used_bytes: util.then_some(used_total),
        fetched_bytes: util.then_some(fetched_total),
        utilization: util.then(|| utilization_ratio(used_total, fetched_total)),
        writebacks: wb.then(|| writebacks.iter().sum()),
        buckets,
        evictions,
        lines,
        lines_by_misses,
        loads,
        monitor_cost,
        mrc: curves,
        structures,
        tlb: a
            .tlb
            .as_ref()
            .map(|t| t.report(&names, &merged, &a.buckets, &mut sym)),
        notes,
        source_lines,
    }
}
