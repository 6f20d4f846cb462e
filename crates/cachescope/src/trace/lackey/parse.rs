//! The line parser: a fast dispatch for canonical records, a general fallback with the same
//! grammar, and the test for Valgrind's own messages.

use super::digits::{dec_u32, hex_u64};
use crate::access::AccessKind;

/// One line, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Record {
    /// `I  addr,size`.
    Instr(u64, u32),
    /// ` L`, ` S` or ` M`.
    Data(AccessKind, u64, u32),
    /// Blank, or a Valgrind message.
    Ignored,
    /// Anything else.
    Bad,
}

/// Decodes one line (without its line ending).
#[inline]
pub(super) fn parse(line: &[u8]) -> Record {
    // Canonical records first: `I  ` and ` L `/` S `/` M `.
    let (kind, rest) = match line {
        [b'I', rest @ ..] => (AccessKind::Instr, rest),
        [b' ', b'L', rest @ ..] => (AccessKind::Load, rest),
        [b' ', b'S', rest @ ..] => (AccessKind::Store, rest),
        [b' ', b'M', rest @ ..] => (AccessKind::Modify, rest),
        [] => return Record::Ignored,
        [b'=', b'=', ..] | [b'-', b'-', ..] | [b'*', b'*', ..] => {
            return if is_valgrind_message(line) {
                Record::Ignored
            } else {
                Record::Bad
            };
        }
        _ => return parse_general(line),
    };
    record(kind, rest)
}

/// Any line the fast dispatch did not take: leading blanks, then a kind letter.
#[cold]
fn parse_general(line: &[u8]) -> Record {
    let line = skip_blanks(line);
    let (kind, rest) = match line {
        [] => return Record::Ignored,
        [b'I', rest @ ..] => (AccessKind::Instr, rest),
        [b'L', rest @ ..] => (AccessKind::Load, rest),
        [b'S', rest @ ..] => (AccessKind::Store, rest),
        [b'M', rest @ ..] => (AccessKind::Modify, rest),
        _ => return Record::Bad,
    };
    record(kind, rest)
}

/// The record of `kind` whose fields, after the kind letter, are `rest`.
#[inline(always)]
fn record(kind: AccessKind, rest: &[u8]) -> Record {
    match fields(rest) {
        Some((addr, size)) if kind == AccessKind::Instr => Record::Instr(addr, size),
        Some((addr, size)) => Record::Data(kind, addr, size),
        None => Record::Bad,
    }
}

/// Parses ` <blanks>hex<blanks>,<blanks>decimal<blanks>`, the part after the kind letter.
#[inline(always)]
fn fields(s: &[u8]) -> Option<(u64, u32)> {
    let s = match s {
        [b' ' | b'\t', rest @ ..] => skip_blanks(rest),
        _ => return None,
    };
    let (addr, s) = hex_u64(s)?;
    let s = match skip_blanks(s) {
        [b',', rest @ ..] => skip_blanks(rest),
        _ => return None,
    };
    let (size, s) = dec_u32(s)?;
    if !s.is_empty() && !skip_blanks(s).is_empty() {
        return None;
    }
    Some((addr, size.max(1)))
}

/// `s` without its leading spaces and tabs.
#[inline(always)]
fn skip_blanks(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    s
}

/// True for Valgrind's own lines: `==<digits>==`, `--<digits>--` or `**<digits>**` and then
/// anything.
fn is_valgrind_message(line: &[u8]) -> bool {
    let [c, c2, rest @ ..] = line else {
        return false;
    };
    if c != c2 {
        return false;
    }
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with(&[*c, *c])
}
