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

mod build;
mod fields;
mod lines;
mod loads;
mod rank;
mod scaled;

use super::buckets::BucketKind;
use super::cachegrind_out::SourceLine;
use super::cost::CostRow;
use super::symbols::CodeLine;
use crate::sim::Geometry;

pub(super) use build::build;

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
    /// Bytes of the lines its misses fetched that any reference touched while they were
    /// resident (present when utilization is tracked; docs/hardware.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes its misses fetched (misses × line size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// used_bytes / fetched_bytes (0-1; 0 when nothing was fetched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
    /// Its dirty lines evicted: write-backs (present with write-backs tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks: Option<u64>,
}

/// A structure (a global variable or a heap allocation site) field by field (`attribute
/// --fields`). Field names are a public contract (`--json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Structure {
    /// The bucket's name.
    pub structure: String,
    /// `global` or `heap`.
    pub kind: BucketKind,
    /// Its element's type (`struct particle`), when debug information gives it.
    pub type_name: Option<String>,
    /// For a heap site: the pointer its blocks are stored in, when found.
    pub pointer: Option<String>,
    /// For a heap site: the allocating call's `file:line`.
    pub site: Option<String>,
    /// For a heap site: its name and the call instructions of the frames the name comes from,
    /// `NAME@0xPC[,0xPC]`, which a change can name it by when other sites share its name
    /// (`NAME#N`).
    pub call: Option<String>,
    /// Bytes per element.
    pub element_size: u64,
    /// Where the element came from: `debug information`, `strides` (the offset most of its
    /// instructions step by) or `none` (one element, fields by offset).
    pub element_from: String,
    /// Array dimensions from the debug information, outermost first.
    pub dims: Vec<u64>,
    /// Its largest instance (the variable, its largest heap block), bytes.
    pub instance_bytes: u64,
    /// Data references to it.
    pub refs: u64,
    /// Misses on it: the lines it fetched.
    pub misses: u64,
    /// Bytes of its fetched lines used while resident (with utilization tracked).
    pub used_bytes: u64,
    /// Its fields by offset (`+OFFSET` when named by offset), then `(several fields)` for
    /// instructions that touch more than one.
    pub fields: Vec<FieldRow>,
    /// The code lines that touch it, most misses first (at most 8).
    pub code: Vec<String>,
    /// Its conflict misses (with conflicts counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_misses: Option<u64>,
    /// The sets its conflict misses fall in, most first (at most 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_sets: Option<Vec<SetRow>>,
    /// Its lines a store fetched that left the cache unread (with unread writes counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread_lines: Option<u64>,
    /// The instructions that touch it.
    #[serde(skip)]
    pub pcs: Vec<u64>,
    /// Its raw bucket ids.
    #[serde(skip)]
    pub(crate) raw: Vec<u32>,
}

/// One field of a [`Structure`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FieldRow {
    /// Its name (`x`, `pos.x`, the element's type for a scalar, `+OFFSET` by offset).
    pub field: String,
    /// Offset within the element.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// Data references to it.
    pub refs: u64,
    /// Its references that missed.
    pub misses: u64,
    /// Bytes of it used on fetched lines (each byte once per fetch).
    pub used_bytes: u64,
    /// used_bytes per line the structure fetched: of each line's bytes, how many were this
    /// field's and used.
    pub used_per_line: f64,
}

/// Conflict misses in one cache set.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SetRow {
    /// The set.
    pub set: u64,
    /// Conflict misses there.
    pub misses: u64,
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
    /// Bytes of the lines its misses fetched that were touched while resident (present when
    /// utilization is tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes its misses fetched (misses × line size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// used_bytes / fetched_bytes (0-1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
}

/// One load instruction: its dominant stride and how regular it is (see
/// [`crate::attribution::strides`]), its misses and the utilization of the lines they fetched.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LoadRow {
    /// The instruction address, `0x…`.
    pub pc: String,
    /// `file:line` when known, else what [`CodeLine::label`] gives.
    pub code: String,
    /// The function, when known.
    pub function: Option<String>,
    /// Loads it made (a modify loads too).
    pub refs: u64,
    /// Those that missed.
    pub misses: u64,
    /// The most frequent difference between two consecutive addresses it loaded, in bytes.
    pub stride: i64,
    /// The fraction of its consecutive pairs with that stride (0-1; a lower bound when it had
    /// more distinct strides than the counters hold).
    pub regularity: f64,
    /// Bytes of the lines its misses fetched touched while resident (with utilization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes its misses fetched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// used_bytes / fetched_bytes (0-1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
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
    /// [`default_sizes`](crate::reuse::default_sizes) points.
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
    /// Bytes of every fetched line touched while resident (present with utilization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes fetched: misses × line size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// used_bytes / fetched_bytes (0-1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
    /// Dirty lines evicted (present with write-backs tracked; `simulate --writebacks` of the
    /// same cache counts the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks: Option<u64>,
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
    /// The load instructions with at least 0.1 % of the misses or of the data references, by
    /// misses, then lowest utilization (at most 200).
    pub loads: Vec<LoadRow>,
    /// The monitor's cost per sampling rate.
    pub monitor_cost: Vec<CostRow>,
    /// Per-bucket miss-ratio curves, for buckets with at least 0.1 % of references or
    /// misses.
    pub mrc: Vec<BucketCurve>,
    /// Global and heap structures field by field, most misses first (`attribute --fields`;
    /// absent without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub structures: Vec<Structure>,
    /// TLB misses by structure and code line, when TLBs were simulated (docs/tlb.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlb: Option<super::tlb::TlbAttribution>,
    /// What was missing or assumed.
    pub notes: Vec<String>,
    /// Counts per source line, for the Cachegrind-format output
    /// ([`super::cachegrind_out::render`]), sorted by file, function and line; empty unless
    /// [`Options::per_instruction`](super::Options::per_instruction). Not in the JSON.
    #[serde(skip)]
    pub source_lines: Vec<SourceLine>,
}

impl Report {
    /// The buckets with at least `min_share` (0-1) of the fetched bytes, lowest utilization
    /// first (empty unless utilization was tracked): the structures whose lines are fetched
    /// for little of their data.
    pub fn worst_utilized(&self, min_share: f64) -> Vec<&BucketRow> {
        let total = self.fetched_bytes.unwrap_or(0) as f64;
        let mut rows: Vec<&BucketRow> = self
            .buckets
            .iter()
            .filter(|b| {
                b.fetched_bytes
                    .is_some_and(|f| f > 0 && f as f64 >= total * min_share)
            })
            .collect();
        rows.sort_by(|x, y| {
            let u = |b: &BucketRow| b.utilization.unwrap_or(0.0);
            u(x).total_cmp(&u(y))
                .then(y.fetched_bytes.cmp(&x.fetched_bytes))
        });
        rows
    }
}
