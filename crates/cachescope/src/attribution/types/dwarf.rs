//! Reading [`ModuleTypes`] from a file's `.debug_info` with gimli: every variable's type,
//! followed through typedefs and qualifiers, as an element repeated over array dimensions.

use std::borrow::Cow;

use addr2line::gimli;
use gimli::Reader as _;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian, UnitOffset, constants};
use object::{Object, ObjectSection};

use super::locals::{self, Frame};
use super::{DataType, Element, Field, ModuleTypes, PointerVar};

type R<'a> = EndianSlice<'a, RunTimeEndian>;
type Unit<'a> = gimli::Unit<R<'a>>;
type Entry<'a, 'u> = gimli::DebuggingInformationEntry<'u, 'u, R<'a>>;

/// Nested structures are flattened this deep; deeper members stay one field.
const MAX_DEPTH: usize = 4;

/// What a type is, once typedefs and qualifiers are followed.
enum Ty {
    /// A base type, enum, or anything opaque: a name and a size.
    Scalar(String, u64),
    /// A structure or union with its flattened fields.
    Record(Element),
    /// An array of an element over dimensions.
    Array(DataType),
    /// A pointer to a type (not followed further than one level).
    Pointer(Box<Option<Ty>>),
}

/// A subprogram's depth in the tree, code ranges and frame.
type Scope = (isize, Vec<(u64, u64)>, Option<Frame>);

/// The module's globals and pointer variables; `None` when it has no debug information.
pub(super) fn read(file: &object::File<'_>) -> Option<ModuleTypes> {
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    file.section_by_name(".debug_info")
        .filter(|s| s.size() > 0)?;
    let mut owned: Vec<Cow<'_, [u8]>> = Vec::new();
    let sections = gimli::DwarfSections::load(|id| -> Result<_, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[]));
        owned.push(data);
        Ok(owned.len() - 1)
    })
    .ok()?;
    let dwarf = sections.borrow(|&i| EndianSlice::new(&owned[i], endian));
    let mut out = ModuleTypes {
        has_types: true,
        ..ModuleTypes::default()
    };
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let _ = walk(&dwarf, &unit, &mut out);
    }
    out.globals.sort_by_key(|g| g.0);
    out.globals.dedup_by_key(|g| g.0);
    out.locals.sort_by_key(|l| l.entry);
    Some(out)
}

/// Every variable of one unit: globals by address, pointers with their function's ranges.
fn walk(dwarf: &gimli::Dwarf<R<'_>>, unit: &Unit<'_>, out: &mut ModuleTypes) -> gimli::Result<()> {
    let mut entries = unit.entries();
    // The code ranges of the enclosing subprogram at each depth, and its frame.
    let mut scopes: Vec<Scope> = Vec::new();
    let mut depth = 0isize;
    while let Some((delta, entry)) = entries.next_dfs()? {
        depth += delta;
        while scopes.last().is_some_and(|s| s.0 >= depth) {
            scopes.pop();
        }
        match entry.tag() {
            constants::DW_TAG_subprogram => {
                let mut ranges = Vec::new();
                let mut iter = dwarf.die_ranges(unit, entry)?;
                while let Some(r) = iter.next()? {
                    ranges.push((r.begin, r.end));
                }
                let frame = locals::frame(entry, name_of(dwarf, unit, entry));
                scopes.push((depth, ranges, frame));
            }
            constants::DW_TAG_variable => {
                let Some(name) = name_of(dwarf, unit, entry) else {
                    continue;
                };
                let Some(ty) = type_of(dwarf, unit, entry, 0, true) else {
                    continue;
                };
                let address = global_address(entry);
                let decl_line = match entry.attr_value(constants::DW_AT_decl_line)? {
                    Some(v) => v.udata_value(),
                    None => None,
                };
                match ty {
                    Ty::Pointer(pointee) => {
                        // `T *p`, or `T (*p)[N]`: a block of rows of N elements.
                        let (pointee, dims) = match *pointee {
                            Some(Ty::Record(e)) => (e, Vec::new()),
                            Some(Ty::Scalar(n, s)) if s > 0 => (Element::scalar(&n, s), Vec::new()),
                            Some(Ty::Array(t)) => (t.element, t.dims),
                            _ => continue,
                        };
                        let scope = if address.is_some() {
                            Vec::new()
                        } else {
                            match scopes.last() {
                                Some((_, r, _)) => r.clone(),
                                None => continue,
                            }
                        };
                        out.pointers.push(PointerVar {
                            name,
                            pointee,
                            dims,
                            decl_line,
                            scope,
                            address,
                        });
                    }
                    other => match (address, data_type(other)) {
                        (Some(addr), Some(t)) => out.globals.push((addr, name, t)),
                        (None, Some(t)) => {
                            let frame = scopes.last().and_then(|s| s.2.as_ref());
                            locals::local(entry, frame, name, t, out);
                        }
                        _ => {}
                    },
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A variable's type as a [`DataType`] (a pointer variable has none here).
fn data_type(ty: Ty) -> Option<DataType> {
    match ty {
        Ty::Scalar(name, size) if size > 0 => Some(DataType {
            element: Element::scalar(&name, size),
            dims: Vec::new(),
        }),
        Ty::Record(e) => Some(DataType {
            element: e,
            dims: Vec::new(),
        }),
        Ty::Array(t) => Some(t),
        _ => None,
    }
}

/// The link-time address of a variable located by `DW_OP_addr` alone.
fn global_address(entry: &Entry<'_, '_>) -> Option<u64> {
    let Ok(Some(AttributeValue::Exprloc(expr))) = entry.attr_value(constants::DW_AT_location)
    else {
        return None;
    };
    let mut ops = expr.0;
    match ops.read_u8().ok()? {
        op if op == constants::DW_OP_addr.0 => ops.read_u64().ok(),
        _ => None,
    }
}

fn name_of(dwarf: &gimli::Dwarf<R<'_>>, unit: &Unit<'_>, entry: &Entry<'_, '_>) -> Option<String> {
    let v = entry.attr_value(constants::DW_AT_name).ok()??;
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(s.to_string_lossy().into_owned())
}

fn size_of(entry: &Entry<'_, '_>) -> Option<u64> {
    entry
        .attr_value(constants::DW_AT_byte_size)
        .ok()??
        .udata_value()
}

/// The type `entry`'s `DW_AT_type` names, resolved.
fn type_of(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &Unit<'_>,
    entry: &Entry<'_, '_>,
    depth: usize,
    follow: bool,
) -> Option<Ty> {
    match entry.attr_value(constants::DW_AT_type).ok()? {
        Some(AttributeValue::UnitRef(offset)) => resolve(dwarf, unit, offset, depth, follow),
        None => Some(Ty::Scalar("void".into(), 0)),
        _ => None,
    }
}

/// The type at `offset`, followed through typedefs and qualifiers; a pointer's target too
/// when `follow` (a variable's own pointer, not a structure's pointer members).
fn resolve(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &Unit<'_>,
    offset: UnitOffset,
    depth: usize,
    follow: bool,
) -> Option<Ty> {
    if depth > 2 * MAX_DEPTH + 8 {
        return None;
    }
    let entry = unit.entry(offset).ok()?;
    let name = name_of(dwarf, unit, &entry);
    match entry.tag() {
        constants::DW_TAG_typedef
        | constants::DW_TAG_const_type
        | constants::DW_TAG_volatile_type
        | constants::DW_TAG_restrict_type
        | constants::DW_TAG_atomic_type => type_of(dwarf, unit, &entry, depth + 1, follow),
        constants::DW_TAG_pointer_type | constants::DW_TAG_reference_type => {
            let pointee = if follow {
                type_of(dwarf, unit, &entry, depth + 1, false)
            } else {
                None
            };
            Some(Ty::Pointer(Box::new(pointee)))
        }
        constants::DW_TAG_structure_type
        | constants::DW_TAG_class_type
        | constants::DW_TAG_union_type => {
            let size = size_of(&entry)?;
            let kind = if entry.tag() == constants::DW_TAG_union_type {
                "union"
            } else {
                "struct"
            };
            let type_name = format!("{kind} {}", name.as_deref().unwrap_or("(anonymous)"));
            let mut fields = Vec::new();
            if entry.tag() != constants::DW_TAG_union_type && depth <= MAX_DEPTH {
                members(dwarf, unit, offset, depth, "", 0, &mut fields);
            }
            fields.sort_by_key(|f: &Field| f.offset);
            fields.dedup_by(|b, a| b.offset < a.offset + a.size);
            if fields.is_empty() {
                fields.push(Field {
                    name: String::new(),
                    offset: 0,
                    size,
                });
            }
            Some(Ty::Record(Element {
                type_name,
                size,
                fields,
            }))
        }
        constants::DW_TAG_array_type => {
            let inner = type_of(dwarf, unit, &entry, depth + 1, false)?;
            let mut dims = subranges(unit, offset)?;
            let element = match inner {
                Ty::Array(t) => {
                    dims.extend(t.dims);
                    t.element
                }
                Ty::Record(e) => e,
                Ty::Scalar(n, s) if s > 0 => Element::scalar(&n, s),
                Ty::Pointer(_) => Element::scalar("pointer", 8),
                Ty::Scalar(..) => return None,
            };
            Some(Ty::Array(DataType { element, dims }))
        }
        _ => {
            let size = size_of(&entry).unwrap_or(0);
            Some(Ty::Scalar(name.unwrap_or_else(|| "?".into()), size))
        }
    }
}

/// The dimensions of the array at `offset` (its subrange children); `None` for one of unknown
/// length (a flexible member).
fn subranges(unit: &Unit<'_>, offset: UnitOffset) -> Option<Vec<u64>> {
    let mut tree = unit.entries_tree(Some(offset)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    let mut dims = Vec::new();
    while let Ok(Some(child)) = children.next() {
        let e = child.entry();
        if e.tag() != constants::DW_TAG_subrange_type {
            continue;
        }
        let count = match e.attr_value(constants::DW_AT_count).ok()? {
            Some(v) => v.udata_value(),
            None => e
                .attr_value(constants::DW_AT_upper_bound)
                .ok()??
                .udata_value()
                .map(|u| u + 1),
        };
        dims.push(count?);
    }
    (!dims.is_empty()).then_some(dims)
}

/// The members of the structure at `offset`, flattened into `out` with `prefix` and `base`.
fn members(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &Unit<'_>,
    offset: UnitOffset,
    depth: usize,
    prefix: &str,
    base: u64,
    out: &mut Vec<Field>,
) {
    let Ok(mut tree) = unit.entries_tree(Some(offset)) else {
        return;
    };
    let Ok(root) = tree.root() else {
        return;
    };
    let mut children = root.children();
    while let Ok(Some(child)) = children.next() {
        let e = child.entry();
        if e.tag() != constants::DW_TAG_member {
            continue;
        }
        let at = match e.attr_value(constants::DW_AT_data_member_location) {
            Ok(Some(v)) => v.udata_value(),
            // A bitfield: its storage's byte.
            _ => match e.attr_value(constants::DW_AT_data_bit_offset) {
                Ok(Some(v)) => v.udata_value().map(|b| b / 8),
                _ => Some(0),
            },
        };
        let Some(at) = at else { continue };
        let name = name_of(dwarf, unit, e);
        let full = match (&name, prefix.is_empty()) {
            (Some(n), true) => n.clone(),
            (Some(n), false) => format!("{prefix}.{n}"),
            (None, _) => prefix.to_owned(),
        };
        match type_of(dwarf, unit, e, depth + 1, false) {
            Some(Ty::Record(inner)) if inner.fields.len() > 1 => {
                for f in inner.fields {
                    let name = match (full.is_empty(), f.name.is_empty()) {
                        (true, _) => f.name,
                        (false, true) => full.clone(),
                        (false, false) => format!("{full}.{}", f.name),
                    };
                    out.push(Field {
                        name,
                        offset: base + at + f.offset,
                        size: f.size,
                    });
                }
            }
            Some(ty) => {
                let size = match ty {
                    Ty::Scalar(_, s) => s,
                    Ty::Record(e) => e.size,
                    Ty::Array(t) => t.elements() * t.element.size,
                    Ty::Pointer(_) => 8,
                };
                if size > 0 {
                    out.push(Field {
                        name: full,
                        offset: base + at,
                        size,
                    });
                }
            }
            None => {}
        }
    }
}
