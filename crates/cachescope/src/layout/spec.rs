//! [`Change`]: one layout change as `whatif --change SPEC` writes it.
//!
//! `KIND:STRUCTURE[@ELEMENT]=ARGUMENTS` (docs/advice.md has them all):
//!
//! | SPEC | what changes |
//! | --- | --- |
//! | `split:S=x,y/vx` | the groups of fields (`/` between groups) become arrays of their own, one after the other; the fields not named form the last; `split:S=*`: every field its own array (AoS to SoA) |
//! | `reorder:S=c,a` | these fields first, in this order, then the rest in theirs, each at its natural alignment |
//! | `pad:S=64` | each element takes 64 bytes |
//! | `align:S=64` | each element starts on a multiple of 64 bytes, and so does the structure |
//! | `pad-rows:S=64` or `=64@4096` | each row (its length from the type, or `@ROW` bytes) gets 64 bytes more |
//! | `own-line:S` or `=128` | each thread's elements together, on lines (64 bytes, or the given) of their own |
//! | `move:S=32@64` | the structure starts 32 bytes past a multiple of 64 |
//! | `nontemporal:S` | stores to it do not allocate: they stream past the caches; `nontemporal:@movnt`: the stores of the program's own non-temporal instructions |
//!
//! STRUCTURE names a global variable, a heap allocation site (its attribution name or its
//! call's `file.c:LINE`) or the pointer variable a site's blocks are stored in. `@ELEMENT`
//! gives the element size in bytes where no debug information does; fields are then named by
//! offset, `+OFFSET:SIZE`.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A field as a change names it: by name, or by `+OFFSET:SIZE` within the element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldRef {
    /// A field's name from the debug information (`x`, `pos.x`).
    Name(String),
    /// Bytes `offset .. offset + size` of the element.
    Bytes {
        /// The first byte.
        offset: u64,
        /// How many.
        size: u64,
    },
}

/// What a change does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Groups of fields moved into arrays of their own (`None`: every field alone).
    Split(Option<Vec<Vec<FieldRef>>>),
    /// Fields first, in this order.
    Reorder(Vec<FieldRef>),
    /// Each element this many bytes.
    Pad(u64),
    /// Elements and the structure aligned to this many bytes.
    Align(u64),
    /// Each row `pad` bytes longer; rows of `row` bytes (`None`: from the type).
    PadRows {
        /// Bytes added.
        pad: u64,
        /// Row length.
        row: Option<u64>,
    },
    /// Each thread's elements on lines of their own (`None`: the cache's line).
    OwnLine(Option<u64>),
    /// The structure starts at `offset` past a multiple of `align`.
    Move {
        /// Bytes past the boundary.
        offset: u64,
        /// The boundary.
        align: u64,
    },
    /// Its stores stream past the caches.
    NonTemporal,
}

/// One layout change: what, to which structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What it does.
    pub kind: Kind,
    /// The structure's name as given.
    pub structure: String,
    /// The element size given with `@BYTES`.
    pub element: Option<u64>,
}

/// The structure name `nontemporal:@movnt` uses: the program's non-temporal stores.
pub const MOVNT: &str = "@movnt";

fn bad(spec: &str, why: impl fmt::Display) -> Error {
    Error::InvalidParameter {
        name: "--change",
        message: format!(
            "{spec:?}: {why} (KIND:STRUCTURE[@ELEMENT]=ARGUMENTS, KIND one of split, reorder, \
             pad, align, pad-rows, own-line, move, nontemporal; docs/advice.md)"
        ),
    }
}

fn bytes(spec: &str, s: &str) -> Result<u64> {
    crate::units::parse_bytes(s.trim(), "--change").map_err(|e| bad(spec, e.message))
}

fn field(spec: &str, s: &str) -> Result<FieldRef> {
    let s = s.trim();
    if s.is_empty() {
        return Err(bad(spec, "an empty field name"));
    }
    let Some(rest) = s.strip_prefix('+') else {
        return Ok(FieldRef::Name(s.to_owned()));
    };
    let (offset, size) = rest
        .split_once(':')
        .ok_or_else(|| bad(spec, format!("field {s}: by offset it is +OFFSET:SIZE")))?;
    let size = bytes(spec, size)?;
    if size == 0 {
        return Err(bad(spec, format!("field {s} has no bytes")));
    }
    Ok(FieldRef::Bytes {
        offset: bytes(spec, offset)?,
        size,
    })
}

fn fields(spec: &str, s: &str) -> Result<Vec<FieldRef>> {
    s.split(',').map(|f| field(spec, f)).collect()
}

impl FromStr for Change {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Change> {
        let (kind, rest) = spec
            .split_once(':')
            .ok_or_else(|| bad(spec, "no structure"))?;
        let (target, args) = match rest.rsplit_once('=') {
            Some((t, a)) => (t, Some(a.trim())),
            None => (rest, None),
        };
        // `@0x…` names a heap site by its call instruction (`NAME@0xPC`), not an element size.
        let (structure, element) = match target.rsplit_once('@') {
            Some((s, e)) if !s.is_empty() && !e.trim().starts_with("0x") => {
                (s, Some(bytes(spec, e)?))
            }
            _ => (target, None),
        };
        let structure = structure.trim().to_owned();
        if structure.is_empty() {
            return Err(bad(spec, "no structure"));
        }
        if element == Some(0) {
            return Err(bad(spec, "an element of 0 bytes"));
        }
        let need = |what: &str| args.ok_or_else(|| bad(spec, format!("{kind} needs ={what}")));
        let kind = match kind.trim() {
            "split" => match need("FIELDS[/FIELDS…] or =*")? {
                "*" => Kind::Split(None),
                a => Kind::Split(Some(
                    a.split('/')
                        .map(|g| fields(spec, g))
                        .collect::<Result<_>>()?,
                )),
            },
            "reorder" => Kind::Reorder(fields(spec, need("FIELDS")?)?),
            "pad" => Kind::Pad(bytes(spec, need("BYTES")?)?),
            "align" => Kind::Align(power_of_two(spec, bytes(spec, need("BYTES")?)?)?),
            "pad-rows" => {
                let a = need("BYTES[@ROW]")?;
                let (pad, row) = match a.split_once('@') {
                    Some((p, r)) => (bytes(spec, p)?, Some(bytes(spec, r)?)),
                    None => (bytes(spec, a)?, None),
                };
                if row == Some(0) {
                    return Err(bad(spec, "rows of 0 bytes"));
                }
                Kind::PadRows { pad, row }
            }
            "own-line" => Kind::OwnLine(
                args.map(|a| power_of_two(spec, bytes(spec, a)?))
                    .transpose()?,
            ),
            "move" => {
                let (offset, align) = need("OFFSET@ALIGN")?
                    .split_once('@')
                    .ok_or_else(|| bad(spec, "move needs =OFFSET@ALIGN"))?;
                let align = power_of_two(spec, bytes(spec, align)?)?;
                let offset = bytes(spec, offset)?;
                if offset >= align {
                    return Err(bad(spec, "the offset must be below the alignment"));
                }
                Kind::Move { offset, align }
            }
            "nontemporal" if args.is_none() => Kind::NonTemporal,
            "nontemporal" => return Err(bad(spec, "nontemporal takes no arguments")),
            other => return Err(bad(spec, format!("no change called {other:?}"))),
        };
        if structure == MOVNT && kind != Kind::NonTemporal {
            return Err(bad(spec, "@movnt names the stores of nontemporal only"));
        }
        Ok(Change {
            kind,
            structure,
            element,
        })
    }
}

fn power_of_two(spec: &str, n: u64) -> Result<u64> {
    if n.is_power_of_two() {
        Ok(n)
    } else {
        Err(bad(spec, format!("{n} is not a power of two")))
    }
}

impl fmt::Display for FieldRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldRef::Name(n) => f.write_str(n),
            FieldRef::Bytes { offset, size } => write!(f, "+{offset}:{size}"),
        }
    }
}

fn list(fields: &[FieldRef]) -> String {
    fields
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl fmt::Display for Change {
    /// The SPEC that parses back to this change.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.element {
            Some(e) => format!("{}@{e}", self.structure),
            None => self.structure.clone(),
        };
        match &self.kind {
            Kind::Split(None) => write!(f, "split:{name}=*"),
            Kind::Split(Some(groups)) => {
                let g: Vec<String> = groups.iter().map(|g| list(g)).collect();
                write!(f, "split:{name}={}", g.join("/"))
            }
            Kind::Reorder(fields) => write!(f, "reorder:{name}={}", list(fields)),
            Kind::Pad(n) => write!(f, "pad:{name}={n}"),
            Kind::Align(n) => write!(f, "align:{name}={n}"),
            Kind::PadRows { pad, row: None } => write!(f, "pad-rows:{name}={pad}"),
            Kind::PadRows { pad, row: Some(r) } => write!(f, "pad-rows:{name}={pad}@{r}"),
            Kind::OwnLine(None) => write!(f, "own-line:{name}"),
            Kind::OwnLine(Some(l)) => write!(f, "own-line:{name}={l}"),
            Kind::Move { offset, align } => write!(f, "move:{name}={offset}@{align}"),
            Kind::NonTemporal => write!(f, "nontemporal:{name}"),
        }
    }
}

impl Change {
    /// True when the change moves addresses (every kind but nontemporal).
    pub fn moves(&self) -> bool {
        self.kind != Kind::NonTemporal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for spec in [
            "split:parts=x,y/vx",
            "split:hot.c:31=*",
            "split:hot.c:31@64=+0:8",
            "reorder:parts=c,a",
            "pad:counters=64",
            "align:parts=64",
            "pad-rows:grid=64",
            "pad-rows:rows.c:9=64@4096",
            "own-line:counters",
            "own-line:counters=128",
            "move:counters=32@64",
            "nontemporal:out",
            "nontemporal:@movnt",
            "split:walk:cells=hot",
            "pad:make-main@0x401136=16",
            "pad:make-main@0x401136@8=16",
            "pad:make-main@0x401136,0x4011a0=16",
        ] {
            let c: Change = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(c.to_string(), spec);
        }
        let c: Change = "split:hot.c:31=x".parse().unwrap();
        assert_eq!(c.structure, "hot.c:31");
        let c: Change = "pad:p@48=64".parse().unwrap();
        assert_eq!((c.element, c.kind), (Some(48), Kind::Pad(64)));
        // A frame's local; a heap site by its call instruction, with or without its element.
        let c: Change = "split:walk:cells=hot".parse().unwrap();
        assert_eq!(c.structure, "walk:cells");
        let c: Change = "pad:make-main@0x401136=16".parse().unwrap();
        assert_eq!(
            (c.structure.as_str(), c.element),
            ("make-main@0x401136", None)
        );
        let c: Change = "pad:make-main@0x401136@8=16".parse().unwrap();
        assert_eq!(
            (c.structure.as_str(), c.element),
            ("make-main@0x401136", Some(8))
        );
    }

    #[test]
    fn bad_specs_say_why() {
        for (spec, why) in [
            ("split", "no structure"),
            ("split:p", "needs"),
            ("shrink:p=1", "no change called"),
            ("align:p=48", "not a power of two"),
            ("move:p=64@64", "below the alignment"),
            ("split:p=+3", "+OFFSET:SIZE"),
            ("pad:p=lots", "--change"),
            ("split:@movnt=x", "nontemporal only"),
            ("nontemporal:p=1", "no arguments"),
        ] {
            let e = spec.parse::<Change>().unwrap_err().to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
    }
}
