//! The shape of a structure as a change sees it ([`Shape`]: its element cut into pieces,
//! fields and the padding between them) and each change as a function of an offset within one
//! instance ([`Mapping`]): one to one, so no two bytes of the structure land on one.
//!
//! An instance (a variable, a heap block) of `len` bytes holds `n = len / element` elements and
//! a tail of `len % element` bytes, which every change keeps after the elements. Offsets, not
//! addresses: where the instance goes is `relayout.rs`'s.

use crate::attribution::types::Element;
use crate::error::{Error, Result};

use super::spec::FieldRef;

/// A piece of an element: a field, or padding no field covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The field's name (`+OFFSET` for padding and unnamed bytes).
    pub name: String,
    /// Offset within the element.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// Its natural alignment: the largest power of two, at most 8, dividing its offset and size.
    pub align: u64,
    /// Padding rather than a field.
    pub padding: bool,
}

/// An element cut into pieces that cover it, in offset order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Bytes per element.
    pub element: u64,
    /// Its pieces, covering `0 .. element`.
    pub pieces: Vec<Piece>,
}

fn natural(offset: u64, size: u64) -> u64 {
    let mut a = 8;
    while a > 1 && (offset % a != 0 || size % a != 0) {
        a /= 2;
    }
    a
}

impl Shape {
    /// The pieces of `fields` (name, offset, size; sorted, disjoint) within an element of
    /// `element` bytes, padding filling the gaps.
    pub fn new(element: u64, fields: &[(String, u64, u64)]) -> Shape {
        let mut pieces = Vec::new();
        let mut at = 0;
        let gap = |pieces: &mut Vec<Piece>, from: u64, to: u64| {
            if to > from {
                pieces.push(Piece {
                    name: format!("+{from}"),
                    offset: from,
                    size: to - from,
                    align: 1,
                    padding: true,
                });
            }
        };
        for (name, offset, size) in fields {
            let (offset, end) = (*offset, (offset + size).min(element));
            if offset < at || offset >= end {
                continue;
            }
            gap(&mut pieces, at, offset);
            pieces.push(Piece {
                name: name.clone(),
                offset,
                size: end - offset,
                align: natural(offset, end - offset),
                padding: false,
            });
            at = end;
        }
        gap(&mut pieces, at, element);
        Shape { element, pieces }
    }

    /// The shape of a typed element.
    pub fn of(element: &Element) -> Shape {
        let fields: Vec<(String, u64, u64)> = element
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.offset, f.size))
            .collect();
        Shape::new(element.size, &fields)
    }

    /// The piece `field` names: a field by name, or the piece exactly at `+OFFSET:SIZE`.
    pub fn find(&self, field: &FieldRef) -> Option<usize> {
        self.pieces.iter().position(|p| match field {
            FieldRef::Name(n) => !p.padding && &p.name == n,
            FieldRef::Bytes { offset, size } => p.offset == *offset && p.size == *size,
        })
    }

    /// The piece holding byte `r` of the element.
    fn piece_at(&self, r: u64) -> usize {
        self.pieces.partition_point(|p| p.offset <= r) - 1
    }

    /// The field names, for messages.
    pub fn names(&self) -> String {
        let n: Vec<&str> = self
            .pieces
            .iter()
            .filter(|p| !p.padding)
            .map(|p| p.name.as_str())
            .collect();
        n.join(", ")
    }
}

/// A change as a function of offsets within an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Pieces into groups, each group an array of its own (split; reorder is one group).
    Groups {
        /// The old element size.
        element: u64,
        /// For each piece: its group and its offset in the group's element.
        place: Vec<(usize, u64)>,
        /// Each group's element size and alignment.
        groups: Vec<(u64, u64)>,
        /// The old pieces' offsets, to find a byte's piece.
        shape: Shape,
    },
    /// Element `i` at `i × stride` (pad, align).
    Stride {
        /// The old element size.
        element: u64,
        /// The new one.
        stride: u64,
    },
    /// Rows of `row` bytes each `row + pad` apart.
    Rows {
        /// Bytes per row.
        row: u64,
        /// Bytes added to each.
        pad: u64,
    },
    /// The same offsets (move, nontemporal).
    Same,
}

impl Mapping {
    /// Split into `groups` of pieces (indices into `shape.pieces`; pieces in no group form a
    /// last group, in order), each group packed in its order at natural alignment.
    pub fn groups(shape: &Shape, groups: &[Vec<usize>]) -> Mapping {
        let mut named = vec![false; shape.pieces.len()];
        let mut all: Vec<Vec<usize>> = Vec::new();
        for g in groups {
            let g: Vec<usize> = g.iter().copied().filter(|&p| !named[p]).collect();
            g.iter().for_each(|&p| named[p] = true);
            if !g.is_empty() {
                all.push(g);
            }
        }
        let rest: Vec<usize> = (0..shape.pieces.len()).filter(|&p| !named[p]).collect();
        if !rest.is_empty() {
            all.push(rest);
        }
        let mut place = vec![(0, 0); shape.pieces.len()];
        let mut sizes = Vec::new();
        for (j, g) in all.iter().enumerate() {
            let (mut at, mut align) = (0u64, 1);
            for &p in g {
                let piece = &shape.pieces[p];
                at = at.next_multiple_of(piece.align);
                place[p] = (j, at);
                at += piece.size;
                align = align.max(piece.align);
            }
            sizes.push((at.next_multiple_of(align), align));
        }
        Mapping::Groups {
            element: shape.element,
            place,
            groups: sizes,
            shape: shape.clone(),
        }
    }

    /// The size of an instance of `len` bytes after the change.
    pub fn new_len(&self, len: u64) -> u64 {
        match self {
            Mapping::Groups {
                element, groups, ..
            } => {
                let n = len / element;
                let mut at = 0u64;
                for &(size, align) in groups {
                    at = at.next_multiple_of(align) + n * size;
                }
                at + len % element
            }
            Mapping::Stride { element, stride } => len / element * stride + len % element,
            Mapping::Rows { row, pad } => len / row * (row + pad) + len % row,
            Mapping::Same => len,
        }
    }

    /// Where byte `offset` of an instance of `len` bytes goes, as an offset in the new one.
    pub fn map(&self, offset: u64, len: u64) -> u64 {
        match self {
            Mapping::Groups {
                element,
                place,
                groups,
                shape,
            } => {
                let n = len / element;
                if offset >= n * element {
                    return self.new_len(len) - len % element + (offset - n * element);
                }
                let (i, r) = (offset / element, offset % element);
                let p = shape.piece_at(r);
                let (g, at) = place[p];
                let mut base = 0u64;
                for &(size, align) in &groups[..g] {
                    base = base.next_multiple_of(align) + n * size;
                }
                base = base.next_multiple_of(groups[g].1);
                base + i * groups[g].0 + at + (r - shape.pieces[p].offset)
            }
            Mapping::Stride { element, stride } => {
                let n = len / element;
                if offset >= n * element {
                    return n * stride + (offset - n * element);
                }
                offset / element * stride + offset % element
            }
            Mapping::Rows { row, pad } => offset / row * (row + pad) + offset % row,
            Mapping::Same => offset,
        }
    }
}

/// The pieces `fields` name, or an error naming the one the shape lacks.
pub fn pieces(shape: &Shape, fields: &[FieldRef], structure: &str) -> Result<Vec<usize>> {
    fields
        .iter()
        .map(|f| {
            shape.find(f).ok_or_else(|| Error::InvalidParameter {
                name: "--change",
                message: format!(
                    "{structure} has no field {f}; its fields are {} (elements of {} bytes)",
                    shape.names(),
                    shape.element
                ),
            })
        })
        .collect()
}
