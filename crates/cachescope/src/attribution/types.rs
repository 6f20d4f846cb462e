//! Data types from DWARF: the fields of the structures a program's variables hold, so that
//! references can be counted per field and layouts changed field by field (`attribute
//! --fields`, [`crate::layout`]).
//!
//! A module's debug information (`.debug_info`, read with gimli through addr2line's copy)
//! gives, for every variable, its type: followed through typedefs and qualifiers to a base
//! type, a structure (`DW_TAG_structure_type` with `DW_TAG_member` children at
//! `DW_AT_data_member_location`), a union, a pointer, or an array (`DW_TAG_array_type` with one
//! `DW_TAG_subrange_type` per dimension). Here that becomes a [`DataType`]: an [`Element`] (its
//! fields, a nested structure's members flattened to `outer.inner`, an array member one field)
//! repeated over the array's dimensions.
//!
//! Globals are found by their `DW_OP_addr` location; pointer variables, global or local, are
//! kept with the function they live in and their declaration line: heap blocks get their type
//! from the pointer the allocation is stored in ([`ModuleTypes::pointer_for`]).

use std::path::Path;

mod dwarf;
mod locals;

/// One field of an element: its bytes `offset .. offset + size` within the element.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Field {
    /// `x`, `pos.x` for a nested structure's member, empty for a scalar element.
    pub name: String,
    /// Offset within the element.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
}

/// The layout of one element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// `struct particle`, `double`, `unsigned long`…
    pub type_name: String,
    /// `sizeof` the element.
    pub size: u64,
    /// Its fields by offset, disjoint (a scalar has one, unnamed).
    pub fields: Vec<Field>,
}

impl Element {
    /// A scalar (or opaque) element of `size` bytes called `type_name`: one unnamed field.
    pub fn scalar(type_name: &str, size: u64) -> Element {
        Element {
            type_name: type_name.to_owned(),
            size,
            fields: vec![Field {
                name: String::new(),
                offset: 0,
                size,
            }],
        }
    }

    /// The field holding byte `offset` of the element, if any (padding holds none).
    pub fn field_at(&self, offset: u64) -> Option<usize> {
        let i = self.fields.partition_point(|f| f.offset <= offset);
        let f = self.fields.get(i.checked_sub(1)?)?;
        (offset < f.offset + f.size).then_some(i - 1)
    }

    /// True when the element has more than one field (a structure worth splitting).
    pub fn is_structure(&self) -> bool {
        self.fields.len() > 1
    }
}

/// A variable's type: `element` repeated over `dims` (outermost first; empty for one element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataType {
    /// What is repeated.
    pub element: Element,
    /// Array dimensions, outermost first.
    pub dims: Vec<u64>,
}

impl DataType {
    /// Elements in all (1 for a single element).
    pub fn elements(&self) -> u64 {
        self.dims.iter().product::<u64>().max(1)
    }

    /// The bytes of one row of a multi-dimensional array (the innermost dimension times the
    /// element), when there are at least two dimensions.
    pub fn row_bytes(&self) -> Option<u64> {
        (self.dims.len() >= 2).then(|| self.dims[self.dims.len() - 1] * self.element.size)
    }
}

/// A pointer variable: where a heap block's type can come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerVar {
    /// Its name.
    pub name: String,
    /// What it points to.
    pub pointee: Element,
    /// For a pointer to an array (`T (*p)[N]`), the array's dimensions: each block is rows of
    /// them.
    pub dims: Vec<u64>,
    /// Its declaration line, when known.
    pub decl_line: Option<u64>,
    /// The link-time code ranges of the function it is local to (empty for a global).
    pub scope: Vec<(u64, u64)>,
    /// Its link-time address, for a global.
    pub address: Option<u64>,
}

/// A local variable that lives in its function's frame at a fixed offset from the frame's
/// canonical frame address (`DW_OP_fbreg` under a `DW_OP_call_frame_cfa` frame base): what a
/// stack reference can be named by (`function:local`, [`super::buckets`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalVar {
    /// The function's name.
    pub function: String,
    /// The function's link-time entry address (what a call event's key is, less the bias).
    pub entry: u64,
    /// The local's name.
    pub name: String,
    /// Its first byte, from the frame's CFA.
    pub offset: i64,
    /// Its type.
    pub ty: DataType,
}

/// Locals whose place in their frame cannot be known from the CFA alone: their references stay
/// in the `stack` bucket (said in a note).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalsSkipped {
    /// Arrays and structures located by a location list (their place changes with the pc).
    pub location_lists: u64,
    /// Arrays and structures of functions whose frame base is not the CFA.
    pub frame_base: u64,
}

/// The types one module's DWARF gives.
#[derive(Clone, Debug, Default)]
pub struct ModuleTypes {
    /// Global and static variables with a fixed address: (link-time address, name, type),
    /// sorted by address.
    pub globals: Vec<(u64, String, DataType)>,
    /// Pointer variables to structures or scalars, global and local.
    pub pointers: Vec<PointerVar>,
    /// True when the module had `.debug_info` to read.
    pub has_types: bool,
    /// Arrays and structures local to a function, at CFA offsets, sorted by entry address.
    pub locals: Vec<LocalVar>,
    /// What [`ModuleTypes::locals`] leaves out, and why.
    pub locals_skipped: LocalsSkipped,
}

impl ModuleTypes {
    /// Reads the types of the ELF file at `path` (empty, `has_types` false, when it has no
    /// debug information or cannot be read).
    pub fn load(path: &Path) -> ModuleTypes {
        let Ok(data) = std::fs::read(path) else {
            return ModuleTypes::default();
        };
        let Ok(file) = object::File::parse(&*data) else {
            return ModuleTypes::default();
        };
        dwarf::read(&file).unwrap_or_default()
    }

    /// The locals of the function entered at link-time address `entry`.
    pub fn locals_of(&self, entry: u64) -> &[LocalVar] {
        let i = self.locals.partition_point(|l| l.entry < entry);
        let j = self.locals[i..].partition_point(|l| l.entry == entry);
        &self.locals[i..i + j]
    }

    /// The type of the global at link-time address `address`.
    pub fn global_at(&self, address: u64) -> Option<&DataType> {
        let i = self.globals.partition_point(|g| g.0 < address);
        self.globals.get(i).filter(|g| g.0 == address).map(|g| &g.2)
    }

    /// The pointer a heap block allocated by the call at link-time address `call` (on source
    /// line `line`) is stored in: a pointer local to the calling function declared on that
    /// line (`struct particle *p = malloc(…)`), else the pointer named `assigned` (the
    /// variable the call's line assigns to, read from the source), local first, then global.
    pub fn pointer_for(
        &self,
        call: u64,
        line: Option<u64>,
        assigned: Option<&str>,
    ) -> Option<&PointerVar> {
        let local = |p: &&PointerVar| p.scope.iter().any(|&(lo, hi)| call >= lo && call < hi);
        if let Some(line) = line {
            if let Some(p) = self
                .pointers
                .iter()
                .filter(local)
                .find(|p| p.decl_line == Some(line))
            {
                return Some(p);
            }
        }
        let name = assigned?;
        self.pointers
            .iter()
            .filter(local)
            .find(|p| p.name == name)
            .or_else(|| {
                self.pointers
                    .iter()
                    .find(|p| p.scope.is_empty() && p.name == name)
            })
    }
}

/// The variable a source line assigns an allocation to: `p` in `p = malloc(…)`,
/// `items` in `s->items = calloc(…)` or `q.items = (T *)malloc(…)`, `p` in
/// `struct t *p = malloc(…)`. `None` when the line assigns nothing before its first `(`.
pub fn assigned_name(source_line: &str) -> Option<&str> {
    let code = source_line.split("//").next()?;
    let eq = code.find('=')?;
    if code[eq + 1..].starts_with('=') || code[..eq].ends_with(['!', '<', '>']) {
        return None;
    }
    let left = code[..eq].trim_end();
    let start = left
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &left[start..];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_name_their_variable() {
        assert_eq!(assigned_name("  p = malloc(n * sizeof *p);"), Some("p"));
        assert_eq!(
            assigned_name("struct particle *parts = malloc(N * sizeof *parts);"),
            Some("parts")
        );
        assert_eq!(
            assigned_name("s->items = calloc(n, 8); // x = y"),
            Some("items")
        );
        assert_eq!(assigned_name("q.items = (T *)malloc(8);"), Some("items"));
        assert_eq!(assigned_name("if (malloc(8) == 0)"), None);
        assert_eq!(assigned_name("use(malloc(8));"), None);
    }

    #[test]
    fn fields_are_found_by_offset() {
        let e = Element {
            type_name: "struct s".into(),
            size: 16,
            fields: vec![
                Field {
                    name: "a".into(),
                    offset: 0,
                    size: 4,
                },
                Field {
                    name: "b".into(),
                    offset: 8,
                    size: 8,
                },
            ],
        };
        assert_eq!(e.field_at(0), Some(0));
        assert_eq!(e.field_at(3), Some(0));
        assert_eq!(e.field_at(5), None, "padding");
        assert_eq!(e.field_at(15), Some(1));
        assert_eq!(e.field_at(16), None);
    }
}
