//! The layout of a global variable from DWARF: which field or element a byte of it is
//! (`counters.b`, `slots[3]`, `table[2].count`), so that `sharing` can say which parts of a
//! shared line each thread uses.
//!
//! The variable is found by its `DW_AT_location` (`DW_OP_addr` of its link-time address); its
//! type is followed through typedefs and qualifiers to structures and unions (their members'
//! names and offsets) and arrays (their element size). Only references within a unit are
//! followed, at most `DEPTH` types deep; anything else ends the name where it is.

use std::borrow::Cow;
use std::path::Path;

use addr2line::gimli;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian, UnitOffset};
use object::{Object, ObjectSection};

/// Types followed from the variable's, at most.
const DEPTH: usize = 8;

/// What the bytes of a variable are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A structure or union: each member's name, offset and layout.
    Fields(Vec<(String, u64, Layout)>, u64),
    /// An array: the element's layout and size.
    Elements(Box<Layout>, u64),
    /// Anything else, of this size (0 when unknown).
    Scalar(u64),
}

impl Layout {
    /// Its size in bytes (0 when unknown).
    pub fn size(&self) -> u64 {
        match self {
            Layout::Fields(_, size) | Layout::Scalar(size) => *size,
            Layout::Elements(elem, count) => elem.size() * count,
        }
    }

    /// The member or element path to byte `offset`: `.a`, `[3]`, `[2].count`, or empty.
    pub fn path(&self, offset: u64) -> String {
        let mut out = String::new();
        let mut at = (self, offset);
        for _ in 0..DEPTH {
            match at.0 {
                Layout::Fields(members, _) => {
                    let Some((name, start, inner)) = members
                        .iter()
                        .find(|(_, s, l)| at.1 >= *s && at.1 < *s + l.size().max(1))
                    else {
                        break;
                    };
                    out.push('.');
                    out.push_str(name);
                    at = (inner, at.1 - start);
                }
                Layout::Elements(elem, _) => {
                    let size = elem.size();
                    if size == 0 {
                        break;
                    }
                    out.push_str(&format!("[{}]", at.1 / size));
                    at = (elem, at.1 % size);
                }
                Layout::Scalar(_) => break,
            }
        }
        out
    }
}

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// The layout of the variable at link-time address `addr` in the DWARF of the ELF file at
/// `path`; `None` when the file has no such variable or no DWARF.
pub fn variable_layout(path: &Path, addr: u64) -> Option<Layout> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load).ok()?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut entries = unit.entries();
        while let Ok(Some((_, entry))) = entries.next_dfs() {
            if entry.tag() != gimli::DW_TAG_variable || location(&unit, entry) != Some(addr) {
                continue;
            }
            let ty = type_of(&unit, entry).or_else(|| {
                // A definition may leave its type to its declaration.
                match entry.attr_value(gimli::DW_AT_specification).ok()?? {
                    AttributeValue::UnitRef(o) => type_of(&unit, &unit.entry(o).ok()?),
                    _ => None,
                }
            })?;
            return Some(layout(&dwarf, &unit, ty, 0));
        }
    }
    None
}

/// The address of a `DW_OP_addr` location.
fn location(
    unit: &gimli::Unit<R<'_>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'_>>,
) -> Option<u64> {
    let AttributeValue::Exprloc(expr) = entry.attr_value(gimli::DW_AT_location).ok()?? else {
        return None;
    };
    match expr.operations(unit.encoding()).next().ok()?? {
        gimli::Operation::Address { address } => Some(address),
        _ => None,
    }
}

/// The entry's `DW_AT_type`, within its unit.
fn type_of(
    _unit: &gimli::Unit<R<'_>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'_>>,
) -> Option<UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type).ok()?? {
        AttributeValue::UnitRef(o) => Some(o),
        _ => None,
    }
}

fn udata(entry: &gimli::DebuggingInformationEntry<'_, '_, R<'_>>, at: gimli::DwAt) -> Option<u64> {
    entry.attr_value(at).ok()??.udata_value()
}

/// The layout of the type at `offset`.
fn layout(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    offset: UnitOffset,
    depth: usize,
) -> Layout {
    let Ok(entry) = unit.entry(offset) else {
        return Layout::Scalar(0);
    };
    let size = udata(&entry, gimli::DW_AT_byte_size).unwrap_or(0);
    if depth >= DEPTH {
        return Layout::Scalar(size);
    }
    match entry.tag() {
        gimli::DW_TAG_typedef
        | gimli::DW_TAG_const_type
        | gimli::DW_TAG_volatile_type
        | gimli::DW_TAG_restrict_type
        | gimli::DW_TAG_atomic_type => match type_of(unit, &entry) {
            Some(inner) => layout(dwarf, unit, inner, depth + 1),
            None => Layout::Scalar(size),
        },
        gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type | gimli::DW_TAG_union_type => {
            let mut members = Vec::new();
            children(unit, offset, |child| {
                if child.tag() != gimli::DW_TAG_member {
                    return;
                }
                let name = child
                    .attr_value(gimli::DW_AT_name)
                    .ok()
                    .flatten()
                    .and_then(|v| dwarf.attr_string(unit, v).ok())
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "(anonymous)".into());
                let start = udata(child, gimli::DW_AT_data_member_location).unwrap_or(0);
                let inner = type_of(unit, child)
                    .map_or(Layout::Scalar(0), |t| layout(dwarf, unit, t, depth + 1));
                members.push((name, start, inner));
            });
            Layout::Fields(members, size)
        }
        gimli::DW_TAG_array_type => {
            let elem = type_of(unit, &entry)
                .map_or(Layout::Scalar(0), |t| layout(dwarf, unit, t, depth + 1));
            let mut count = None;
            children(unit, offset, |child| {
                if child.tag() == gimli::DW_TAG_subrange_type && count.is_none() {
                    count = udata(child, gimli::DW_AT_count)
                        .or_else(|| udata(child, gimli::DW_AT_upper_bound).map(|u| u + 1));
                }
            });
            Layout::Elements(Box::new(elem), count.unwrap_or(1))
        }
        _ => Layout::Scalar(size),
    }
}

/// Calls `f` on each direct child of the entry at `offset`.
fn children(
    unit: &gimli::Unit<R<'_>>,
    offset: UnitOffset,
    mut f: impl FnMut(&gimli::DebuggingInformationEntry<'_, '_, R<'_>>),
) {
    let Ok(mut tree) = unit.entries_tree(Some(offset)) else {
        return;
    };
    let Ok(root) = tree.root() else {
        return;
    };
    let mut kids = root.children();
    while let Ok(Some(child)) = kids.next() {
        f(child.entry());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_members_and_elements() {
        let long = Layout::Scalar(8);
        let pair = Layout::Fields(
            vec![("a".into(), 0, long.clone()), ("b".into(), 8, long)],
            16,
        );
        let table = Layout::Elements(Box::new(pair.clone()), 4);
        assert_eq!(pair.path(0), ".a");
        assert_eq!(pair.path(12), ".b");
        assert_eq!(table.size(), 64);
        assert_eq!(table.path(40), "[2].b");
        assert_eq!(Layout::Scalar(8).path(3), "");
    }
}
