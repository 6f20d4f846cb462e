//! The structures' fields (`attribute --fields`): each global, heap site and frame's local
//! (`function:local`) with its element
//! (from DWARF where it exists, else its size inferred from the strides of the instructions
//! that walk it, fields then named by offset), its references, misses and used bytes per
//! field, the code that touches it, and `advise`'s evidence (conflict misses by set, lines
//! written and never read).

use hashbrown::HashMap;

use super::{FieldRow, SetRow, Structure};
use crate::attribution::BucketKind;
use crate::attribution::fields::Row;
use crate::attribution::measure::Attribution;
use crate::attribution::structures::Types;
use crate::attribution::symbols::Symbolizer;
use crate::attribution::types::Element;

/// Code lines and sets kept per structure.
const TOP: usize = 8;

/// One raw bucket's element: (element, its type's name and dimensions, where it came from).
struct Known {
    element: Element,
    dims: Vec<u64>,
    pointer: Option<String>,
    site: Option<String>,
    call: Option<String>,
    from: &'static str,
}

/// Every global and heap structure with at least 0.1 % of the references or misses.
pub(super) fn structures(
    a: &Attribution<'_>,
    sym: &mut Symbolizer,
    merged: &[usize],
    names: &[(String, BucketKind)],
) -> Vec<Structure> {
    let Some(fields) = &a.fields else {
        return Vec::new();
    };
    let mut types = Types::read_by(&a.buckets);
    // Rows by raw bucket.
    let mut by_bucket: HashMap<u32, Vec<(u64, u32, Row)>> = HashMap::new();
    for (&(b, pc, size), row) in &fields.rows {
        by_bucket.entry(b).or_default().push((pc, size, *row));
    }
    let (total_refs, total_misses) = (a.data_refs as f64, a.exact.total as f64);
    let mut out: HashMap<usize, Structure> = HashMap::new();
    let mut order = Vec::new();
    for (&b, rows) in &mut by_bucket {
        let kind = a.buckets.kind(b);
        let len = fields.lens.get(b as usize).copied().unwrap_or(0);
        let local = a.buckets.local_type(b).is_some();
        if !(matches!(kind, BucketKind::Global | BucketKind::Heap) || local) || len <= 1 {
            continue;
        }
        let (refs, misses) = rows
            .iter()
            .fold((0, 0), |s, r| (s.0 + r.2.refs, s.1 + r.2.misses));
        if (refs as f64) < total_refs * 1e-3 && (misses as f64) < total_misses * 1e-3 {
            continue;
        }
        rows.sort_by_key(|r| (std::cmp::Reverse(r.2.refs), r.0, r.1));
        let known = element(a, &mut types, sym, b, rows, len);
        let m = merged[b as usize];
        let s = out.entry(m).or_insert_with(|| {
            order.push(m);
            Structure {
                structure: names[m].0.clone(),
                kind,
                type_name: None,
                pointer: known.pointer.clone(),
                site: known.site.clone(),
                call: known.call.clone(),
                element_size: known.element.size,
                element_from: known.from.into(),
                dims: known.dims.clone(),
                instance_bytes: 0,
                refs: 0,
                misses: 0,
                used_bytes: 0,
                fields: Vec::new(),
                code: Vec::new(),
                conflict_misses: a.conflicts.as_ref().map(|_| 0),
                conflict_sets: a.conflicts.as_ref().map(|_| Vec::new()),
                unread_lines: a.residency.unread.as_ref().map(|_| 0),
                pcs: Vec::new(),
                raw: Vec::new(),
            }
        });
        s.raw.push(b);
        if known.from == "debug information" {
            s.type_name = Some(known.element.type_name.clone());
        }
        s.instance_bytes = s.instance_bytes.max(len);
        add_rows(s, &known.element, rows);
        if let (Some(u), Some(n)) = (&a.residency.unread, s.unread_lines.as_mut()) {
            *n += u.get(b as usize).copied().unwrap_or(0);
        }
        if let (Some(c), Some(n), Some(sets)) = (
            &a.conflicts,
            s.conflict_misses.as_mut(),
            s.conflict_sets.as_mut(),
        ) {
            for (&(cb, set), &k) in &c.by_set {
                if cb == b {
                    *n += k;
                    match sets.iter_mut().find(|r| r.set == set) {
                        Some(r) => r.misses += k,
                        None => sets.push(SetRow { set, misses: k }),
                    }
                }
            }
        }
    }
    let mut list: Vec<Structure> = order.into_iter().filter_map(|m| out.remove(&m)).collect();
    for s in &mut list {
        finish(s, a, sym);
    }
    list.sort_by(|x, y| {
        y.misses
            .cmp(&x.misses)
            .then(y.refs.cmp(&x.refs))
            .then_with(|| x.structure.cmp(&y.structure))
    });
    list
}

/// The element of raw bucket `b`: its DWARF type, else the stride most of its references walk.
fn element(
    a: &Attribution<'_>,
    types: &mut Types,
    sym: &mut Symbolizer,
    b: u32,
    rows: &[(u64, u32, Row)],
    len: u64,
) -> Known {
    let mut known = Known {
        element: Element::scalar("", len),
        dims: Vec::new(),
        pointer: None,
        site: None,
        call: None,
        from: "none",
    };
    match a.buckets.kind(b) {
        BucketKind::Stack => {
            if let Some(t) = a.buckets.local_type(b) {
                known.element = t.element.clone();
                known.dims = t.dims.clone();
                known.from = "debug information";
            }
            return known;
        }
        BucketKind::Global => {
            if let (Some(t), _) = types.global(&a.buckets, b) {
                known.element = t.element;
                known.dims = t.dims;
                known.from = "debug information";
                return known;
            }
        }
        _ => {
            if let Some(site) = a.buckets.site(sym, b) {
                known.site = site
                    .call
                    .as_ref()
                    .and_then(|(_, l)| Some(format!("{}:{}", l.file.as_deref()?, l.line?)));
                known.call = site.by_calls();
                if let Some(h) = types.heap(&a.buckets, &site) {
                    known.element = h.element;
                    known.dims = h.dims;
                    known.pointer = Some(h.pointer);
                    known.from = "debug information";
                    return known;
                }
            }
        }
    }
    // The gcd most references share: the stride between elements.
    let mut weight: HashMap<u64, u64> = HashMap::new();
    for (_, _, r) in rows {
        if r.gcd > 0 {
            *weight.entry(r.gcd).or_default() += r.refs;
        }
    }
    if let Some((&e, _)) = weight
        .iter()
        .max_by_key(|&(&g, &w)| (w, std::cmp::Reverse(g)))
    {
        if e < len {
            known.element = Element::scalar("", e);
            known.from = "strides";
        }
    }
    known
}

/// The rows' counts added to their fields (typed), or to `+OFFSET` fields (inferred).
fn add_rows(s: &mut Structure, element: &Element, rows: &[(u64, u32, Row)]) {
    let e = element.size.max(1);
    for &(pc, size, r) in rows {
        s.refs += r.refs;
        s.misses += r.misses;
        s.used_bytes += r.used;
        if !s.pcs.contains(&pc) {
            s.pcs.push(pc);
        }
        let several = r.gcd != 0 && r.gcd % e != 0;
        let at = r.first % e;
        let (name, offset, width) = if several {
            ("(several fields)".to_string(), 0, e)
        } else if element.fields.len() > 1 || !element.type_name.is_empty() {
            match element.field_at(at) {
                Some(i) => {
                    let f = &element.fields[i];
                    let name = if f.name.is_empty() {
                        element.type_name.clone()
                    } else {
                        f.name.clone()
                    };
                    (name, f.offset, f.size)
                }
                None => (format!("(padding +{at})"), at, u64::from(size)),
            }
        } else {
            (format!("+{at}"), at, u64::from(size).min(e - at))
        };
        let row = match s.fields.iter_mut().find(|f| f.field == name) {
            Some(f) => f,
            None => {
                s.fields.push(FieldRow {
                    field: name,
                    offset,
                    size: width,
                    refs: 0,
                    misses: 0,
                    used_bytes: 0,
                    used_per_line: 0.0,
                });
                s.fields.last_mut().expect("pushed")
            }
        };
        row.size = row.size.max(width);
        row.refs += r.refs;
        row.misses += r.misses;
        row.used_bytes += r.used;
    }
}

/// Sorts the fields by offset, computes the bytes used per fetched line, names the code.
fn finish(s: &mut Structure, a: &Attribution<'_>, sym: &mut Symbolizer) {
    s.fields
        .sort_by_key(|f| (f.field.starts_with('('), f.offset, f.size));
    for f in &mut s.fields {
        f.used_per_line = if s.misses == 0 {
            0.0
        } else {
            f.used_bytes as f64 / s.misses as f64
        };
    }
    if let Some(sets) = &mut s.conflict_sets {
        sets.sort_by(|x, y| y.misses.cmp(&x.misses).then(x.set.cmp(&y.set)));
        sets.truncate(TOP);
    }
    let mut code: Vec<(String, u64, u64)> = Vec::new();
    if let Some(fields) = &a.fields {
        for (&(_, pc, _), r) in fields
            .rows
            .iter()
            .filter(|((b, _, _), _)| s.raw.contains(b))
        {
            let c = a.buckets.code_line(sym, pc);
            let label = match (&c.file, c.line) {
                (Some(f), Some(n)) => format!("{f}:{n}"),
                _ => c.label(),
            };
            match code.iter_mut().find(|x| x.0 == label) {
                Some(x) => {
                    x.1 += r.refs;
                    x.2 += r.misses;
                }
                None => code.push((label, r.refs, r.misses)),
            }
        }
    }
    code.sort_by(|x, y| {
        y.2.cmp(&x.2)
            .then(y.1.cmp(&x.1))
            .then_with(|| x.0.cmp(&y.0))
    });
    code.truncate(TOP);
    s.code = code.into_iter().map(|c| c.0).collect();
}
