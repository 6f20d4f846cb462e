//! The attribution report: the paper's Tables 1–5 (actual beside sampled, rank and
//! percentage), the monitor cost (Figures 3–4) and the per-bucket miss-ratio curves, as one
//! serde model. Field names are a public contract (`attribute --json`).
//!
//! Percentages: a bucket's `actual_pct` is its share of all misses, `sampled_pct` its share of
//! the samples. An eviction row's percentages are the share of the *victim's* evictions caused
//! by the evictor (Table 2–3), a code-line row's the share of the victim's evictions caused by
//! the evictor at that line (Table 4), a miss line's the share of all misses (of all samples)
//! at that code line. Ranks are 1-based, by count, ties broken by name;
//! a row never sampled has sampled rank 0.

use hashbrown::HashMap;

use super::buckets::BucketKind;
use super::cachegrind_out::{LineCounts, SourceLine};
use super::cost::CostRow;
use super::measure::Attribution;
use super::symbols::{CodeLine, Symbolizer};
use crate::reuse::{StackDistances, default_sizes};
use crate::sim::Geometry;

/// One stat bucket (Table 1).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BucketRow {
    /// Variable name, allocation site path (`f(file:line)-caller(file:line)`), `stack` or
    /// `other`.
    pub name: String,
    /// `global`, `heap`, `stack` or `other`.
    pub kind: BucketKind,
    /// Data references to it.
    pub refs: u64,
    /// Misses on it (exact).
    pub misses: u64,
    /// Rank by misses.
    pub actual_rank: u32,
    /// Share of all misses, %.
    pub actual_pct: f64,
    /// Sampled misses on it.
    pub sampled: u64,
    /// Rank by sampled misses (0: never sampled).
    pub sampled_rank: u32,
    /// Share of all samples, %.
    pub sampled_pct: f64,
    /// Times one of its lines was evicted (exact).
    pub evicted: u64,
}

/// Evictions of `victim` caused by `evictor` (Tables 2–3).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EvictionRow {
    /// The bucket whose line was evicted.
    pub victim: String,
    /// The bucket whose miss evicted it.
    pub evictor: String,
    /// How many times (exact).
    pub evictions: u64,
    /// Rank among the victim's evictors.
    pub actual_rank: u32,
    /// Share of the victim's evictions, %.
    pub actual_pct: f64,
    /// Sampled evictions.
    pub sampled: u64,
    /// Rank among the victim's evictors in the samples (0: never sampled).
    pub sampled_rank: u32,
    /// Share of the victim's sampled evictions, %.
    pub sampled_pct: f64,
}

/// Evictions of `victim` by `evictor` at one code line (Tables 4–6).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LineRow {
    /// The bucket whose line was evicted.
    pub victim: String,
    /// The bucket whose miss evicted it.
    pub evictor: String,
    /// The code line of the missing reference.
    pub code: CodeLine,
    /// `function file:line` (or the address when unknown).
    pub location: String,
    /// How many times (exact).
    pub evictions: u64,
    /// Rank among the victim's (evictor, line) pairs.
    pub actual_rank: u32,
    /// Share of the victim's evictions, %.
    pub actual_pct: f64,
    /// Sampled evictions.
    pub sampled: u64,
    /// Rank in the samples (0: never sampled).
    pub sampled_rank: u32,
    /// Share of the victim's sampled evictions, %.
    pub sampled_pct: f64,
}

/// Misses at one code line (the loads and stores there that miss), whatever they evict.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MissLineRow {
    /// The code line of the missing references.
    pub code: CodeLine,
    /// `function file:line` (or the address when unknown).
    pub location: String,
    /// Misses there (exact).
    pub misses: u64,
    /// Rank by misses.
    pub actual_rank: u32,
    /// Share of all misses, %.
    pub actual_pct: f64,
    /// Sampled misses there.
    pub sampled: u64,
    /// Rank by sampled misses (0: never sampled).
    pub sampled_rank: u32,
    /// Share of all samples, %.
    pub sampled_pct: f64,
    /// The bucket most of its misses are on.
    pub bucket: String,
    /// That bucket's share of the line's misses, %.
    pub bucket_pct: f64,
}

/// One point of a bucket's miss-ratio curve.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    /// Cache size in bytes (fully associative LRU).
    pub size_bytes: u64,
    /// The bucket's misses, cold included.
    pub misses: f64,
    /// `misses` per reference to the bucket.
    pub miss_ratio: f64,
}

/// A bucket's exact LRU miss-ratio curve.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BucketCurve {
    /// Bucket name.
    pub name: String,
    /// Bucket kind.
    pub kind: BucketKind,
    /// Data references to it.
    pub refs: u64,
    /// Distinct lines it touched (its cold misses).
    pub cold: u64,
    /// [`default_sizes`] points.
    pub points: Vec<CurvePoint>,
}

/// What `cachescope attribute` reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// The simulated cache (LRU).
    pub cache: Geometry,
    /// The monitor sampled 1 in this many misses on average.
    pub sample_every: u64,
    /// Seed of the sampling intervals.
    pub seed: u64,
    /// Trace records read (every kind).
    pub records: u64,
    /// Data references simulated.
    pub data_refs: u64,
    /// Instruction fetches in the trace.
    pub instructions: u64,
    /// Misses (exact).
    pub misses: u64,
    /// Misses that evicted a line.
    pub evictions_total: u64,
    /// Misses sampled.
    pub samples: u64,
    /// Buckets with a miss or a reference share of at least 0.01 %, by misses.
    pub buckets: Vec<BucketRow>,
    /// Every (victim, evictor) pair seen, by victim's misses then count.
    pub evictions: Vec<EvictionRow>,
    /// (victim, evictor, code line) rows with at least 0.1 % of the victim's evictions or
    /// sampled at least once.
    pub lines: Vec<LineRow>,
    /// Misses by code line, by misses: lines with at least 0.1 % of the misses or sampled at
    /// least once.
    pub lines_by_misses: Vec<MissLineRow>,
    /// The monitor's cost per sampling rate.
    pub monitor_cost: Vec<CostRow>,
    /// Per-bucket miss-ratio curves, for buckets with at least 0.1 % of references or
    /// misses.
    pub mrc: Vec<BucketCurve>,
    /// What was missing or assumed.
    pub notes: Vec<String>,
    /// Counts per source line, for the Cachegrind-format output
    /// ([`super::cachegrind_out::render`]), sorted by file, function and line; empty unless
    /// [`Options::per_instruction`](super::Options::per_instruction). Not in the JSON.
    #[serde(skip)]
    pub source_lines: Vec<SourceLine>,
}

fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// Ranks of `counts` (1-based, by count descending then key; 0 for a zero count).
fn ranks<K: Ord + Clone + std::hash::Hash>(items: &[(K, u64)]) -> HashMap<K, u32> {
    let mut v: Vec<&(K, u64)> = items.iter().filter(|x| x.1 > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter()
        .enumerate()
        .map(|(i, x)| (x.0.clone(), i as u32 + 1))
        .collect()
}

/// The actual and the sampled ranks of the same keys, each as [`ranks`] gives them.
struct Ranks<K> {
    actual: HashMap<K, u32>,
    sampled: HashMap<K, u32>,
}

impl<K: Ord + Clone + std::hash::Hash> Ranks<K> {
    /// From `(key, actual count, sampled count)` rows.
    fn new(rows: impl Iterator<Item = (K, u64, u64)>) -> Self {
        let (mut act, mut smp) = (Vec::new(), Vec::new());
        for (k, a, s) in rows {
            act.push((k.clone(), a));
            smp.push((k, s));
        }
        Ranks {
            actual: ranks(&act),
            sampled: ranks(&smp),
        }
    }

    /// The actual and the sampled rank of `k` (0 where its count is zero).
    fn of(&self, k: &K) -> (u32, u32) {
        let get = |m: &HashMap<K, u32>| m.get(k).copied().unwrap_or(0);
        (get(&self.actual), get(&self.sampled))
    }
}

pub(super) fn build(
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
    let pairs = |t: &super::tally::Tally| {
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

    let lines_by_misses = miss_lines(a, &mut sym, &|raw| name(m(raw)));
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
    notes.retain(|n| seen.insert(n.clone()));

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
        buckets,
        evictions,
        lines,
        lines_by_misses,
        monitor_cost,
        mrc: curves,
        notes,
        source_lines,
    }
}

/// The per-instruction counts merged by source file (full path), function and line.
fn source_lines(
    a: &Attribution<'_>,
    sym: &mut Symbolizer,
    per_pc: &super::Map<u64, LineCounts>,
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
fn miss_lines(
    a: &Attribution<'_>,
    sym: &mut Symbolizer,
    bucket_name: &dyn Fn(u32) -> String,
) -> Vec<MissLineRow> {
    #[derive(Default)]
    struct Acc {
        misses: u64,
        sampled: u64,
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
            MissLineRow {
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
