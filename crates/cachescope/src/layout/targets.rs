//! Which change a bucket gets, decided at its first reference: a global or a frame's local
//! (`function:local`) by its name, a heap
//! site by its attribution name, its call's `file.c:LINE` or the pointer its blocks are stored
//! in; and the change made concrete for the bucket's element ([`Target`]).

use crate::attribution::BucketKind;
use crate::attribution::buckets::BucketMap;
use crate::attribution::structures::Types;
use crate::attribution::symbols::Symbolizer;
use crate::attribution::types::Element;
use crate::error::{Error, Result};

use super::shape::{Mapping, Shape, pieces};
use super::spec::{Change, FieldRef, Kind};

/// A change made concrete for one bucket.
#[derive(Clone, Debug)]
pub struct Target {
    /// The index of the change.
    pub change: usize,
    /// Offsets within an instance.
    pub mapping: Mapping,
    /// Each thread's elements on lines of this size, elements of this size (own-line).
    pub own_line: Option<(u64, u64)>,
    /// Where a moved instance starts: `offset` past a multiple of `align` (`None`: in place
    /// unless it grows, then at its old offset within a page).
    pub place: Option<(u64, u64)>,
    /// Its stores stream past the caches.
    pub streams: bool,
}

/// What the bucket is called in each way a change may name it.
pub struct Names {
    /// The attribution's name.
    pub name: String,
    /// A heap site's call, `file.c:LINE`.
    pub site: Option<String>,
    /// The pointer a heap site's blocks are stored in.
    pub pointer: Option<String>,
    /// A heap site by its name and call instructions, `NAME@0xPC[,0xPC]` (what tells apart
    /// sites numbered among others of their name).
    pub call: Option<String>,
    /// Its element and rows, when debug information gives them.
    pub element: Option<(Element, Option<u64>)>,
    /// Debug information exists where the bucket's type would be.
    pub has_types: bool,
}

/// The names and type of bucket `id`, `None` for the stack and other memory.
pub fn names(
    buckets: &BucketMap,
    types: &mut Types,
    sym: &mut Symbolizer,
    id: u32,
) -> Option<Names> {
    match buckets.kind(id) {
        BucketKind::Global => {
            let (ty, has_types) = types.global(buckets, id);
            Some(Names {
                name: buckets.name_of(id).to_owned(),
                site: None,
                pointer: None,
                call: None,
                element: ty.map(|t| {
                    let row = t.row_bytes();
                    (t.element, row)
                }),
                has_types,
            })
        }
        BucketKind::Heap => {
            let site = buckets.site(sym, id)?;
            let at = site
                .call
                .as_ref()
                .and_then(|(_, l)| Some(format!("{}:{}", l.file.as_deref()?, l.line?)));
            let heap = types.heap(buckets, &site);
            let has_types = site
                .call
                .as_ref()
                .and_then(|(pc, _)| buckets.module_of(*pc))
                .is_some_and(|m| {
                    let path = m.path.clone();
                    types.module(&path).has_types
                });
            let call = site.by_calls();
            Some(Names {
                name: site.name,
                site: at,
                call,
                pointer: heap.as_ref().map(|h| h.pointer.clone()),
                element: heap.map(|h| {
                    let row = h.dims.last().map(|n| n * h.element.size);
                    (h.element, row)
                }),
                has_types,
            })
        }
        // A frame's local (`function:local`); the stack's own bucket has no type.
        BucketKind::Stack => buckets.local_type(id).map(|t| Names {
            name: buckets.name_of(id).to_owned(),
            site: None,
            pointer: None,
            call: None,
            element: Some((t.element.clone(), t.row_bytes())),
            has_types: true,
        }),
        _ => None,
    }
}

impl Names {
    /// True when `structure` names this bucket.
    pub fn is(&self, structure: &str) -> bool {
        self.name == structure
            || self.site.as_deref() == Some(structure)
            || self.pointer.as_deref() == Some(structure)
            || self.call.as_deref() == Some(structure)
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        name: "--change",
        message,
    }
}

/// `change` (the `index`-th) made concrete for the bucket `names` describes.
pub fn target(change: &Change, index: usize, names: &Names, line: u64) -> Result<Target> {
    let spec = change.to_string();
    let (element, rows) = match (&names.element, change.element) {
        (Some((e, _)), Some(given)) if e.size != given => {
            return Err(invalid(format!(
                "{spec}: {} is {} ({} bytes), not @{given}",
                change.structure, e.type_name, e.size
            )));
        }
        (Some((e, rows)), _) => (Some(Shape::of(e)), *rows),
        (None, Some(given)) => (Some(untyped(change, given)), None),
        (None, None) => (None, None),
    };
    let needs_element = || {
        element.clone().ok_or_else(|| {
            let why = if names.has_types {
                "its type could not be found in the debug information"
            } else {
                "the program has no debug information for it (compile with -g)"
            };
            invalid(format!(
                "{spec}: the elements of {} are unknown: {why}; give their size, {}@BYTES, and \
                 fields by offset, +OFFSET:SIZE",
                change.structure, change.structure
            ))
        })
    };
    let named = match &change.kind {
        Kind::Split(Some(groups)) => groups
            .iter()
            .flatten()
            .any(|f| matches!(f, FieldRef::Name(_))),
        Kind::Reorder(fields) => fields.iter().any(|f| matches!(f, FieldRef::Name(_))),
        _ => false,
    };
    if named && names.element.is_none() {
        let why = if names.has_types {
            "its type could not be found in the debug information"
        } else {
            "the program has no debug information naming them (compile with -g)"
        };
        return Err(invalid(format!(
            "{spec}: the fields of {} have no names: {why}; name them by offset,              {}@ELEMENT_BYTES=+OFFSET:SIZE",
            change.structure, change.structure
        )));
    }
    let mut t = Target {
        change: index,
        mapping: Mapping::Same,
        own_line: None,
        place: None,
        streams: false,
    };
    match &change.kind {
        Kind::Split(groups) => {
            let shape = needs_element()?;
            let groups: Vec<Vec<usize>> = match groups {
                None => (0..shape.pieces.len()).map(|p| vec![p]).collect(),
                Some(g) => g
                    .iter()
                    .map(|g| pieces(&shape, g, &change.structure))
                    .collect::<Result<_>>()?,
            };
            t.mapping = Mapping::groups(&shape, &groups);
        }
        Kind::Reorder(fields) => {
            let shape = needs_element()?;
            let mut order = pieces(&shape, fields, &change.structure)?;
            // The other fields in their order, the padding last.
            order.extend((0..shape.pieces.len()).filter(|p| !shape.pieces[*p].padding));
            order.extend((0..shape.pieces.len()).filter(|p| shape.pieces[*p].padding));
            let mut seen = vec![false; shape.pieces.len()];
            order.retain(|&p| !std::mem::replace(&mut seen[p], true));
            t.mapping = Mapping::groups(&shape, &[order]);
        }
        Kind::Pad(bytes) | Kind::Align(bytes) => {
            let e = needs_element()?.element;
            let stride = match change.kind {
                Kind::Align(a) => {
                    t.place = Some((0, a));
                    e.next_multiple_of(a)
                }
                _ => *bytes,
            };
            if stride < e {
                return Err(invalid(format!(
                    "{spec}: elements of {} are {e} bytes: padding makes them larger",
                    change.structure
                )));
            }
            t.mapping = Mapping::Stride { element: e, stride };
        }
        Kind::PadRows { pad, row } => {
            let row = row.or(rows).ok_or_else(|| {
                invalid(format!(
                    "{spec}: the rows of {} are unknown (not a two-dimensional array in the \
                     debug information): give their length, pad-rows:{}={pad}@ROW_BYTES",
                    change.structure, change.structure
                ))
            })?;
            t.mapping = Mapping::Rows { row, pad: *pad };
        }
        Kind::OwnLine(size) => {
            let l = size.unwrap_or(line);
            t.own_line = Some((needs_element()?.element, l));
            t.place = Some((0, l));
        }
        Kind::Move { offset, align } => t.place = Some((*offset, *align)),
        Kind::NonTemporal => t.streams = true,
    }
    Ok(t)
}

/// The shape of an element known only by the size a change gives: the byte ranges its fields
/// name, padding between them.
fn untyped(change: &Change, size: u64) -> Shape {
    let named: Vec<&FieldRef> = match &change.kind {
        Kind::Split(Some(groups)) => groups.iter().flatten().collect(),
        Kind::Reorder(fields) => fields.iter().collect(),
        _ => Vec::new(),
    };
    let mut fields: Vec<(String, u64, u64)> = named
        .iter()
        .filter_map(|f| match f {
            FieldRef::Bytes { offset, size } => Some((f.to_string(), *offset, *size)),
            FieldRef::Name(_) => None,
        })
        .collect();
    fields.sort_by_key(|f| f.1);
    Shape::new(size, &fields)
}
