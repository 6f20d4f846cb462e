//! The changes the evidence calls for ([`candidates`]): at most one per structure and kind,
//! each with its evidence, its change in words and as `whatif` SPECs. Thresholds are shares of
//! the evidence cache's misses; docs/advice.md lists them.

use serde_json::json;

use super::Kind;
use super::collect::Evidence;
use crate::attribution::{BucketKind, Structure};
use crate::layout::Change;
use crate::sim::Geometry;
use crate::units::{Precision, format_bytes, thousands};

/// Bytes as the findings write them: `32.0 KiB`.
fn bytes(n: u64) -> String {
    format_bytes(n, Precision::ThreeDigits)
}

/// What the advice is for.
#[derive(Clone, Debug)]
pub struct Options {
    /// The first data level: the evidence cache's shape.
    pub l1: Geometry,
    /// The level below it (block's larger cache), if any.
    pub next: Option<Geometry>,
    /// The sharing analysis's machine, with cores.
    pub sharing: Option<crate::sharing::Options>,
}

/// A change to predict.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Its kind.
    pub kind: Kind,
    /// The structure's attribution name.
    pub structure: String,
    /// The fields involved.
    pub fields: Vec<String>,
    /// The code lines that touch the structure.
    pub code: Vec<String>,
    /// What it rests on.
    pub evidence: serde_json::Value,
    /// The change in words.
    pub change: String,
    /// The layout changes to simulate.
    pub changes: Vec<Change>,
    /// A prefetcher on the changed side: (kind, distance).
    pub prefetch: Option<(String, u32)>,
    /// `block`: the misses the first data level saves, estimated.
    pub estimate: Option<u64>,
}

/// A structure's name as a change names it: a global's, a heap site's pointer or call, with
/// `@ELEMENT` when no debug information gives its elements.
pub(super) fn spec_name(s: &Structure) -> String {
    let name = display_name(s);
    if s.element_from == "debug information" {
        name
    } else {
        format!("{name}@{}", s.element_size)
    }
}

/// A structure's name in findings: a variable's, a heap site's pointer (or its call's
/// `file:line`).
pub(super) fn display_name(s: &Structure) -> String {
    match s.kind {
        BucketKind::Heap => s
            .pointer
            .clone()
            .or_else(|| s.site.clone())
            .or_else(|| numbered(s).then(|| s.call.clone()).flatten())
            .unwrap_or_else(|| s.structure.clone()),
        _ => s.structure.clone(),
    }
}

/// False for a heap site whose only name is its attribution name numbered among others of
/// that name (`f-g#2`): the numbers are given after the pass, so a change cannot match them.
/// Its call instructions name it (`f-g@0xPC,0xPC`) where they are known.
pub(super) fn nameable(s: &Structure) -> bool {
    !(s.kind == BucketKind::Heap
        && numbered(s)
        && s.pointer.is_none()
        && s.site.is_none()
        && s.call.is_none())
}

/// True for a heap site numbered among others of its name (`f-g#2`).
fn numbered(s: &Structure) -> bool {
    s.structure
        .rsplit_once('#')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The bytes of one row: a two-dimensional global's innermost dimension, or the array a heap
/// site's pointer points to (`T (*p)[N]`).
fn row_bytes(s: &Structure) -> Option<u64> {
    let rows = match s.kind {
        BucketKind::Heap => !s.dims.is_empty(),
        _ => s.dims.len() >= 2,
    };
    rows.then(|| s.dims[s.dims.len() - 1] * s.element_size)
}

/// A field as a change names it.
fn field_spec(s: &Structure, field: &crate::attribution::FieldRow) -> String {
    if s.element_from == "debug information" && !field.field.starts_with('+') {
        field.field.clone()
    } else {
        format!("+{}:{}", field.offset, field.size)
    }
}

pub(super) fn spec(text: String) -> Option<Change> {
    text.parse().ok()
}

/// Every candidate the evidence calls for, and notes on what could not be looked at.
pub fn candidates(evidence: &Evidence, options: &Options) -> (Vec<Candidate>, Vec<String>) {
    let r = &evidence.report;
    let line = options.l1.line_size().bytes();
    let floor = (r.misses / 100).max(64);
    let mut out = Vec::new();
    let mut notes = Vec::new();
    // One prefetch finding: the prefetcher a prediction adds serves every load.
    let mut prefetch: Option<(u64, Candidate)> = None;
    // Heap sites told apart only by a number (`name#2`) cannot be named by a change yet.
    let mut unnamed = Vec::new();
    for s in &r.structures {
        if !nameable(s) {
            unnamed.push(s.structure.as_str());
            continue;
        }
        let code = s.code.clone();
        let base = |kind, change: String, mut evidence: serde_json::Value, changes: Vec<Change>| {
            Candidate {
                kind,
                structure: display_name(s),
                fields: Vec::new(),
                code: code.clone(),
                evidence: {
                    evidence["bucket"] = json!(s.structure);
                    evidence
                },
                change,
                changes,
                prefetch: None,
                estimate: None,
            }
        };
        let name = spec_name(s);
        let shown = display_name(s);
        let utilization = if s.misses == 0 {
            1.0
        } else {
            s.used_bytes as f64 / (s.misses * line) as f64
        };
        // split: most of each fetched line unused, the references on a few fields.
        let fields: Vec<_> = s
            .fields
            .iter()
            .filter(|f| !f.field.starts_with('('))
            .collect();
        let max = fields.iter().map(|f| f.refs).max().unwrap_or(0);
        let hot: Vec<_> = fields
            .iter()
            .filter(|f| f.refs * 2 >= max && f.refs > 0)
            .collect();
        let hot_bytes: u64 = hot.iter().map(|f| f.size).sum();
        if s.misses >= floor
            && fields.len() >= 2
            && utilization < 0.5
            && hot.len() < fields.len()
            && hot_bytes * 2 <= s.element_size
        {
            let names: Vec<String> = hot.iter().map(|f| f.field.clone()).collect();
            let specs: Vec<String> = hot.iter().map(|f| field_spec(s, f)).collect();
            if let Some(c) = spec(format!("split:{name}={}", specs.join(","))) {
                let what = s
                    .type_name
                    .clone()
                    .unwrap_or_else(|| format!("its {}-byte elements", s.element_size));
                let mut k = base(
                    Kind::Split,
                    format!(
                        "move {} out of {what} into an array of its own (the other fields in another): \
                         of each {line}-byte line {} fetches, {:.0} bytes are used",
                        names.join(", "),
                        shown,
                        utilization * line as f64
                    ),
                    json!({
                        "summary": format!("{:.0}% of the bytes fetched for it are used; {} of its {} fields take {:.0}% of its references",
                            utilization * 100.0, hot.len(), fields.len(),
                            hot.iter().map(|f| f.refs).sum::<u64>() as f64 * 100.0 / s.refs.max(1) as f64),
                        "utilization": utilization,
                        "fields": s.fields,
                    }),
                    vec![c],
                );
                k.fields = names;
                out.push(k);
            }
        }
        // pad: conflict misses in a few sets.
        let conflicts = s.conflict_misses.unwrap_or(0);
        if conflicts >= floor && conflicts * 4 >= s.misses {
            let stride = loads_of(r, s)
                .into_iter()
                .map(|l| l.stride.unsigned_abs())
                .find(|&st| st >= line && st % line == 0);
            let (text, words) = if let Some(row) = row_bytes(s) {
                (
                    format!("pad-rows:{name}={line}"),
                    format!("pad each {row}-byte row of {shown} by {line} bytes (one line)"),
                )
            } else if let Some(st) = stride {
                (
                    format!("pad-rows:{name}={line}@{st}"),
                    format!(
                        "pad {shown} by {line} bytes every {st} bytes (its loads step by {st})"
                    ),
                )
            } else if s.element_size >= line && s.element_size.is_power_of_two() {
                (
                    format!("pad:{name}={}", s.element_size + line),
                    format!(
                        "pad each {}-byte element of {shown} to {}",
                        s.element_size,
                        s.element_size + line
                    ),
                )
            } else {
                (String::new(), String::new())
            };
            if let Some(c) = spec(text) {
                let sets = s.conflict_sets.clone().unwrap_or_default();
                out.push(base(
                    Kind::Pad,
                    format!("{words}: its lines crowd {} of the cache's {} sets", sets.len(), options.l1.sets()),
                    json!({
                        "summary": format!("{} conflict misses ({:.0}% of its misses), in sets {}",
                            thousands(conflicts), conflicts as f64 * 100.0 / s.misses.max(1) as f64,
                            sets.iter().take(4).map(|x| x.set.to_string()).collect::<Vec<_>>().join(", ")),
                        "conflict_misses": conflicts,
                        "conflict_sets": sets,
                        "stride": stride,
                    }),
                    vec![c],
                ));
            }
        }
        // non-temporal: lines written and never read back before they leave.
        let unread = s.unread_lines.unwrap_or(0);
        if unread >= floor && unread * 2 >= s.misses {
            if let Some(c) = spec(format!("nontemporal:{name}")) {
                out.push(base(
                    Kind::NonTemporal,
                    format!(
                        "write {} with non-temporal stores (_mm_stream_si64, _mm_stream_pd, \
                         __builtin_nontemporal_store): its lines are written and leave the cache \
                         unread, pushing out data that is reused",
                        shown
                    ),
                    json!({
                        "summary": format!("{} of the {} lines it fetched were written and left unread", thousands(unread), thousands(s.misses)),
                        "unread_lines": unread,
                    }),
                    vec![c],
                ));
            }
        }
        // prefetch: a load with a regular stride that misses (with cores, each core's first
        // level prefetches).
        if let Some(l) = loads_of(r, s)
            .into_iter()
            .find(|l| l.regularity >= 0.9 && l.stride != 0 && l.misses >= floor)
        {
            let step = l.stride.unsigned_abs();
            let distance = (8 * line).div_ceil(step).clamp(1, 64) as u32;
            let mut k = base(
                Kind::Prefetch,
                format!(
                    "prefetch {} ahead at {}: its loads step by {} bytes ({:.0}% of them), \
                     {distance} strides ahead is {} ahead (__builtin_prefetch(&p[i + {distance}]))",
                    shown,
                    l.code,
                    l.stride,
                    l.regularity * 100.0,
                    bytes(distance as u64 * step)
                ),
                json!({
                    "summary": format!("{} misses of {} loads with stride {} (regularity {:.2})", thousands(l.misses), thousands(l.refs), l.stride, l.regularity),
                    "stride": l.stride,
                    "regularity": l.regularity,
                    "distance": distance,
                    "load": l.pc,
                }),
                Vec::new(),
            );
            k.code = vec![l.code.clone()];
            k.prefetch = Some(("stride".into(), distance));
            if prefetch.as_ref().is_none_or(|p| p.0 < l.misses) {
                prefetch = Some((l.misses, k));
            }
        }
        // block: reuses that a cache of the next level's size catches and the first misses.
        if let (Some(next), Some(curve)) =
            (options.next, r.mrc.iter().find(|c| c.name == s.structure))
        {
            let at = |size: u64| {
                curve
                    .points
                    .iter()
                    .rev()
                    .find(|p| p.size_bytes <= size)
                    .map_or(curve.refs as f64, |p| p.misses)
            };
            let (small, large) = (at(options.l1.size_bytes()), at(next.size_bytes()));
            let saved = (small - large).max(0.0) as u64;
            if saved >= floor && saved as f64 >= 0.25 * small && large < small {
                // The smallest size that catches nine tenths of those reuses: their working set.
                let need = curve
                    .points
                    .iter()
                    .find(|p| p.misses <= large + 0.1 * (small - large))
                    .map_or(next.size_bytes(), |p| p.size_bytes);
                let strips = need.div_ceil(options.l1.size_bytes() / 2).max(2);
                let mut k = base(
                    Kind::Block,
                    format!(
                        "tile the loop at {}: its reuses of {} need about {} (more than the {} \
                         first level, less than the {} next); cut its inner loop into {strips} \
                         strips (each about {} of data) so each strip's reuses stay in the first level",
                        code.first().map_or("?", String::as_str),
                        shown,
                        bytes(need),
                        bytes(options.l1.size_bytes()),
                        bytes(next.size_bytes()),
                        bytes(need / strips)
                    ),
                    json!({
                        "summary": format!("in a fully associative LRU cache it has {} misses at {} and {} at {}: {} reuses fall between",
                            thousands(small as u64), bytes(options.l1.size_bytes()), thousands(large as u64), bytes(next.size_bytes()), thousands(saved)),
                        "misses_first_level": small as u64,
                        "misses_next_level": large as u64,
                        "reuse_bytes": need,
                        "strips": strips,
                    }),
                    Vec::new(),
                );
                k.estimate = Some(saved);
                out.push(k);
            }
        }
    }
    out.extend(prefetch.map(|p| p.1));
    if !unnamed.is_empty() {
        notes.push(format!(
            "not looked at: {} (heap sites told apart from others of their name only by their \
             call instruction, with no pointer variable or source line a change could name)",
            unnamed.join(", ")
        ));
    }
    super::shared_lines::sharing_candidates(evidence, options, &mut out, &mut notes);
    let untyped: Vec<String> = r
        .structures
        .iter()
        .filter(|s| s.misses >= floor && s.element_from != "debug information")
        .map(display_name)
        .collect();
    if !untyped.is_empty() {
        notes.push(format!(
            "no type in the debug information for {}: their elements are inferred from strides \
             and their fields named by offset (compile with -g, store each allocation in a typed \
             pointer, to name them)",
            untyped.join(", ")
        ));
    }
    (out, notes)
}

/// The loads of structure `s`, most misses first.
fn loads_of<'a>(
    r: &'a crate::attribution::Report,
    s: &Structure,
) -> Vec<&'a crate::attribution::LoadRow> {
    r.loads
        .iter()
        .filter(|l| s.pcs.iter().any(|pc| format!("{pc:#x}") == l.pc))
        .collect()
}
