//! The line parser: splits a line into columns, all separated the same way, and picks out the
//! access type, address and size.

use super::fields::{address, size, skip_blanks};
use crate::access::AccessKind;
use crate::trace::Radix;

/// One parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) addr: u64,
    pub(super) size: u32,
    pub(super) kind: AccessKind,
    /// The address had a `0x` prefix or a digit a-f.
    pub(super) certainly_hex: bool,
}

pub(super) const EXPECTED_HEX: &str = "expected a hex address like `0x7ffd1000` or `7ffd1000`, optionally an \
     access type (R, W, M, I) before or after it and a decimal size after it, e.g. `W 0x7ffd1000 8`";
pub(super) const EXPECTED_DEC: &str = "expected a decimal address like `4096` (or hex with `0x`), optionally \
     an access type (R, W, M, I) before or after it and a decimal size after it, e.g. `W 4096 8`";
pub(super) const MIXED: &str = "columns are separated by commas or by blanks, not both in one line \
     (` L 1000,8` is a lackey record)";

/// Parses one line: `Ok(None)` for blank lines and comments, `Err(what is wrong)` for bad ones.
pub(super) fn parse(line: &[u8], radix: Radix) -> Result<Option<Parsed>, &'static str> {
    let line = skip_blanks(line);
    if matches!(line, [] | [b'#', ..]) {
        return Ok(None);
    }
    let expected = match radix {
        Radix::Hex => EXPECTED_HEX,
        Radix::Decimal => EXPECTED_DEC,
    };
    // Split into at most three columns, all separated the same way.
    let mut cols: [&[u8]; 3] = [&[]; 3];
    let mut n = 0;
    let mut commas = None;
    let mut rest = line;
    loop {
        let len = rest
            .iter()
            .position(|&b| matches!(b, b' ' | b'\t' | b','))
            .unwrap_or(rest.len());
        let Some(col) = cols.get_mut(n) else {
            return Err(expected);
        };
        let (token, after) = rest.split_at(len);
        *col = token;
        n += 1;
        let after = skip_blanks(after);
        let (comma, after) = match after {
            [b',', tail @ ..] => (true, skip_blanks(tail)),
            _ => (false, after),
        };
        if after.is_empty() {
            if comma {
                return Err(expected);
            }
            break;
        }
        if *commas.get_or_insert(comma) != comma {
            return Err(MIXED);
        }
        rest = after;
    }
    // One optional access type anywhere, then the address, then an optional size.
    let mut kind = None;
    let mut fields: [&[u8]; 2] = [&[]; 2];
    let mut m = 0;
    for &col in &cols[..n] {
        if let Some(k) = kind_of(col) {
            if kind.replace(k).is_some() {
                return Err(expected);
            }
        } else {
            let Some(f) = fields.get_mut(m) else {
                return Err(expected);
            };
            *f = col;
            m += 1;
        }
    }
    if m == 0 {
        return Err(expected);
    }
    let (addr, certainly_hex) = address(fields[0], radix, expected)?;
    let size = if m == 2 { size(fields[1])? } else { 1 };
    Ok(Some(Parsed {
        addr,
        size,
        kind: kind.unwrap_or(AccessKind::Load),
        certainly_hex,
    }))
}

/// The access type a one-letter column names.
fn kind_of(col: &[u8]) -> Option<AccessKind> {
    match col {
        [b'R' | b'r' | b'L' | b'l'] => Some(AccessKind::Load),
        [b'W' | b'w' | b'S' | b's'] => Some(AccessKind::Store),
        [b'M' | b'm'] => Some(AccessKind::Modify),
        [b'I' | b'i'] => Some(AccessKind::Instr),
        _ => None,
    }
}
