//! Plain text traces: one access per line.
//!
//! ```text
//! # address, then optionally a size
//! 0x7ffd1000
//! 0x7ffd1008 8
//! W 0x7ffd1010 4
//! 7ffd1018,R,8
//! ```
//!
//! A line holds an address, optionally an access type before or after it, and optionally a size
//! after it:
//! - the address is hex with a `0x` prefix, or bare digits read in [`Options::radix`] (`1f` only
//!   in hex). It must fit in 64 bits.
//! - the access type is one letter, in either case: `R` or `L` load, `W` or `S` store, `M`
//!   modify, `I` instruction fetch. Without one an access is a load.
//! - the size is decimal, from 1 to 2^32 − 1 bytes; without one it is 1.
//!
//! Columns are separated by blanks or by commas (with blanks around them allowed), one or the
//! other throughout a line: `W,0x10,4` and `W 0x10 4` read, `W 0x10,4` does not. The rule keeps
//! lackey records (` L 10,4`) from reading as plain ones. Lines whose first non-blank character
//! is `#` are comments; blank lines are ignored. The format has no instruction addresses: every
//! access has pc [`NO_PC`].

use std::io::Read;

use super::lines::{BadLines, Line, Lines, fill_batch, sniff_lines};
use super::{AccessReader, Diagnostics, Radix, Sniff};
use crate::access::AccessKind;
use crate::batch::{Batch, NO_PC};
use crate::error::{Result, Source};

/// Reader options. There is no default: the radix changes what every address means, so it is
/// chosen by detection ([`guess_radix`]) or by the user.
#[derive(Clone, Debug)]
pub struct Options {
    /// Skip lines that do not parse (counted in diagnostics) instead of failing.
    pub skip_bad_lines: bool,
    /// How bare addresses are written (`0x` is always hex).
    pub radix: Radix,
}

/// Reads accesses from plain text.
pub struct Reader<R> {
    lines: Lines<R>,
    bad: BadLines,
    radix: Radix,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`; `source` names it in error messages.
    pub fn new(input: R, source: Source, opts: Options) -> Self {
        Reader {
            lines: Lines::new(input, source),
            bad: BadLines::new(opts.skip_bad_lines),
            radix: opts.radix,
        }
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        let radix = self.radix;
        fill_batch(&mut self.lines, &mut self.bad, batch, |line| {
            classify(line, radix)
        })
    }

    fn diagnostics(&self) -> Diagnostics {
        self.bad.diagnostics()
    }
}

/// How many lines of `sample` (whole lines) parse with addresses in `radix`.
pub fn sniff(sample: &[u8], radix: Radix) -> Sniff {
    sniff_lines(sample, |line| classify(line, radix))
}

/// A line for the shared read loop.
fn classify(line: &[u8], radix: Radix) -> Line {
    match parse(line, radix) {
        Ok(Some(a)) => Line::Access {
            addr: a.addr,
            size: a.size,
            kind: a.kind,
            pc: NO_PC,
        },
        Ok(None) => Line::Ignored,
        Err(expected) => Line::Bad(expected),
    }
}

/// `Some(Hex)` when some address in `sample` is certainly hex (`0x` or a digit a-f), `None`
/// when every address is bare decimal digits (ambiguous). Lines that do not parse are not looked at.
pub fn guess_radix(sample: &[u8]) -> Option<Radix> {
    let mut lines = Lines::new(sample, Source::Memory);
    while let Ok(Some((_, line))) = lines.next_line() {
        if let Ok(Some(a)) = parse(line, Radix::Hex) {
            if a.certainly_hex {
                return Some(Radix::Hex);
            }
        }
    }
    None
}

/// One parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Parsed {
    addr: u64,
    size: u32,
    kind: AccessKind,
    /// The address had a `0x` prefix or a digit a-f.
    certainly_hex: bool,
}

const EXPECTED_HEX: &str = "expected a hex address like `0x7ffd1000` or `7ffd1000`, optionally an \
     access type (R, W, M, I) before or after it and a decimal size after it, e.g. `W 0x7ffd1000 8`";
const EXPECTED_DEC: &str = "expected a decimal address like `4096` (or hex with `0x`), optionally \
     an access type (R, W, M, I) before or after it and a decimal size after it, e.g. `W 4096 8`";
const MIXED: &str = "columns are separated by commas or by blanks, not both in one line \
     (` L 1000,8` is a lackey record)";
const HEX_IN_DECIMAL: &str =
    "the address is not decimal (hex addresses need `0x` when the trace is read as decimal)";
pub(crate) const ADDR_OVERFLOW: &str = "the address does not fit in 64 bits";
pub(crate) const BAD_SIZE: &str = "the size must be a decimal number from 1 to 4294967295";

/// Parses one line: `Ok(None)` for blank lines and comments, `Err(what is wrong)` for bad ones.
fn parse(line: &[u8], radix: Radix) -> Result<Option<Parsed>, &'static str> {
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

/// An address column and whether it is certainly hex.
fn address(col: &[u8], radix: Radix, expected: &'static str) -> Result<(u64, bool), &'static str> {
    if let [b'0', b'x' | b'X', digits @ ..] = col {
        return hex_token(digits, expected).map(|v| (v, true));
    }
    match radix {
        Radix::Hex => {
            let v = hex_token(col, expected)?;
            Ok((v, col.iter().any(|b| b.is_ascii_alphabetic())))
        }
        Radix::Decimal => {
            if !col.is_empty()
                && col.iter().all(u8::is_ascii_hexdigit)
                && !col.iter().all(u8::is_ascii_digit)
            {
                return Err(HEX_IN_DECIMAL);
            }
            dec_token(col, expected).map(|v| (v, false))
        }
    }
}

/// A whole column of hex digits (no prefix) as a u64.
pub(crate) fn hex_token(col: &[u8], expected: &'static str) -> Result<u64, &'static str> {
    match super::lackey::hex_u64(col) {
        Some((v, [])) => Ok(v),
        Some(_) | None if col.is_empty() || !col.iter().all(u8::is_ascii_hexdigit) => Err(expected),
        _ => Err(ADDR_OVERFLOW),
    }
}

/// A whole column of decimal digits as a u64.
fn dec_token(col: &[u8], expected: &'static str) -> Result<u64, &'static str> {
    if col.is_empty() || !col.iter().all(u8::is_ascii_digit) {
        return Err(expected);
    }
    col.iter()
        .try_fold(0u64, |v, &b| {
            v.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .ok_or(ADDR_OVERFLOW)
}

/// A size column: decimal, at least 1, fits in a u32.
pub(crate) fn size(col: &[u8]) -> Result<u32, &'static str> {
    match super::lackey::dec_u32(col) {
        Some((v, [])) if v > 0 => Ok(v),
        _ => Err(BAD_SIZE),
    }
}

/// `s` without its leading spaces and tabs.
pub(crate) fn skip_blanks(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use AccessKind::*;

    fn read_all(input: &[u8], radix: Radix, skip: bool) -> Result<(Vec<Access>, Diagnostics)> {
        let opts = Options {
            skip_bad_lines: skip,
            radix,
        };
        let mut r = Reader::new(input, Source::Memory, opts);
        let mut batch = Batch::new();
        let mut out = vec![];
        while r.read_batch(&mut batch)? > 0 {
            out.extend(batch.iter());
        }
        Ok((out, r.diagnostics()))
    }

    fn a(kind: AccessKind, addr: u64, size: u32) -> Access {
        Access {
            addr,
            size,
            kind,
            pc: None,
        }
    }

    fn one(line: &str, radix: Radix) -> Result<Option<(AccessKind, u64, u32)>, &'static str> {
        parse(line.as_bytes(), radix).map(|p| p.map(|p| (p.kind, p.addr, p.size)))
    }

    #[test]
    fn reads_every_column_layout() {
        let text = b"# a comment\n\
                     0x1000\n\
                     1f 8\n  \
                     W 0x20 4\n\
                     0x30 m\n\
                     40,r,2\n\
                     I, 50, 16\r\n\
                     \t\n\
                     0X60\ts\n\
                     70 3 l\n";
        let (got, diag) = read_all(text, Radix::Hex, false).unwrap();
        assert_eq!(
            got,
            vec![
                a(Load, 0x1000, 1),
                a(Load, 0x1f, 8),
                a(Store, 0x20, 4),
                a(Modify, 0x30, 1),
                a(Load, 0x40, 2),
                a(Instr, 0x50, 16),
                a(Store, 0x60, 1),
                a(Load, 0x70, 3),
            ]
        );
        assert_eq!(diag, Diagnostics::default());
    }

    #[test]
    fn decimal_radix() {
        assert_eq!(one("4096 8", Radix::Decimal), Ok(Some((Load, 4096, 8))));
        assert_eq!(one("0x10", Radix::Decimal), Ok(Some((Load, 16, 1))));
        assert_eq!(
            one("18446744073709551615", Radix::Decimal),
            Ok(Some((Load, u64::MAX, 1)))
        );
        assert_eq!(
            one("18446744073709551616", Radix::Decimal),
            Err(ADDR_OVERFLOW)
        );
        assert_eq!(one("1f", Radix::Decimal), Err(HEX_IN_DECIMAL));
        assert_eq!(one("4096 8", Radix::Hex), Ok(Some((Load, 0x4096, 8))));
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let hex = Radix::Hex;
        assert_eq!(one("0x1ffffffffffffffff", hex), Err(ADDR_OVERFLOW));
        assert_eq!(one("1ffffffffffffffff", hex), Err(ADDR_OVERFLOW));
        assert_eq!(one("0000000000000000001", hex), Ok(Some((Load, 1, 1))));
        assert_eq!(one("10 0", hex), Err(BAD_SIZE));
        assert_eq!(one("10 4294967296", hex), Err(BAD_SIZE));
        assert_eq!(one("10 0x8", hex), Err(BAD_SIZE));
        assert_eq!(one(" L 1000,8", hex), Err(MIXED));
        assert_eq!(one("I  04000d7d4,3", hex), Err(MIXED));
        for bad in [
            "0x", "x10", "10,", ",10", "10,,8", "W R 10", "W", "10 8 9", "10 8 W 2", "zz", "-5",
        ] {
            assert_eq!(one(bad, hex), Err(EXPECTED_HEX), "{bad:?}");
        }
        assert_eq!(one("W", Radix::Decimal), Err(EXPECTED_DEC));
    }

    #[test]
    fn bad_line_error_and_skipping() {
        let err = read_all(b"0x10\n0x20\nhello\n", Radix::Hex, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("<memory>:3: {EXPECTED_HEX}: \"hello\"")
        );
        let (got, diag) = read_all(b"0x10\nhello\n0x20\n10 0\n", Radix::Hex, true).unwrap();
        assert_eq!(got, vec![a(Load, 0x10, 1), a(Load, 0x20, 1)]);
        assert_eq!(diag.skipped_lines, 2);
        assert_eq!(
            diag.first_skipped,
            Some(format!("<memory>:2: {EXPECTED_HEX}: \"hello\""))
        );
    }

    #[test]
    fn sniff_and_guess_radix() {
        let plain = b"# x\n0x1000\n0x1008 8\nW 0x2000\n";
        assert_eq!(
            sniff(plain, Radix::Hex),
            Sniff {
                accesses: 3,
                ignored: 1,
                bad: 0
            }
        );
        let lackey = b"==1== x\nI  04000d7d4,3\n L 1ffefffc48,8\n";
        assert_eq!(
            sniff(lackey, Radix::Hex),
            Sniff {
                accesses: 0,
                ignored: 0,
                bad: 3
            }
        );
        assert_eq!(
            sniff(b"10\n1f\n", Radix::Decimal),
            Sniff {
                accesses: 1,
                ignored: 0,
                bad: 1
            }
        );

        assert_eq!(guess_radix(b"4096\n4104 8\nW 12\n"), None);
        assert_eq!(guess_radix(b"4096\n0x1000\n"), Some(Radix::Hex));
        assert_eq!(guess_radix(b"4096\nW 7ffd\n"), Some(Radix::Hex));
        assert_eq!(guess_radix(b"4096\nnot a trace\n"), None);
        assert_eq!(guess_radix(b""), None);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(line in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let _ = parse(&line, Radix::Hex);
            let _ = parse(&line, Radix::Decimal);
            let _ = guess_radix(&line);
        }

        #[test]
        fn formatted_accesses_read_back(
            addr in proptest::prelude::any::<u64>(),
            size in 1u32..,
            kind in proptest::sample::select(&AccessKind::ALL[..]),
            layout in 0usize..4,
        ) {
            let k = &kind.name()[..1];
            let line = match layout {
                0 => format!("{k} {addr:#x} {size}"),
                1 => format!("{addr:x},{k},{size}"),
                2 => format!("{addr}\t{size} {k}"),
                _ => format!("  {k} , {addr} , {size}  "),
            };
            let radix = if layout < 2 { Radix::Hex } else { Radix::Decimal };
            proptest::prop_assert_eq!(one(&line, radix), Ok(Some((kind, addr, size))));
        }
    }
}
