//! Dinero IV `din` traces: `label address` per line.
//!
//! ```text
//! 2 400a10
//! 0 7ffd1000
//! 1 0x7ffd1008 8
//! ```
//!
//! The label is one digit:
//! - `0` a data read ([`Load`]), `1` a data write ([`Store`]), `2` an instruction fetch
//!   ([`Instr`]);
//! - `3` Dinero's "escape: unknown access type", read here as a [`Load`];
//! - `4` Dinero's "escape: cache flush". A flush cannot be represented in a trace of accesses:
//!   the line is skipped and counted ([`Reader::flushes_ignored`]) so the caller can warn.
//!
//! The address is hex, with or without `0x`, and must fit in 64 bits. An optional third column is
//! a decimal size (1 to 2^32 − 1, default 1). Columns are separated by blanks; blank lines are
//! ignored; anything else is an error, or is skipped and counted under
//! [`Options::skip_bad_lines`]. The format has no instruction addresses: every access has pc
//! [`NO_PC`].
//!
//! [`Load`]: AccessKind::Load
//! [`Store`]: AccessKind::Store
//! [`Instr`]: AccessKind::Instr

use std::io::Read;

use super::lines::{BadLines, Line, Lines, fill_batch, sniff_lines};
use super::plain::{hex_token, size, skip_blanks};
use super::{AccessReader, Diagnostics, Sniff};
use crate::access::AccessKind;
use crate::batch::{Batch, NO_PC};
use crate::error::{Result, Source};

/// What a bad line was expected to look like.
const EXPECTED: &str = "expected a din record `label address [size]` like `0 7ffd1000` \
     (label 0 read, 1 write, 2 fetch, 3 unknown, 4 flush; hex address; decimal size)";

/// Reader options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Skip lines that do not parse (counted in diagnostics) instead of failing. Default: false.
    pub skip_bad_lines: bool,
}

/// Reads accesses from din text.
pub struct Reader<R> {
    lines: Lines<R>,
    bad: BadLines,
    flushes: u64,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`; `source` names it in error messages.
    pub fn new(input: R, source: Source, opts: Options) -> Self {
        Reader {
            lines: Lines::new(input, source),
            bad: BadLines::new(opts.skip_bad_lines),
            flushes: 0,
        }
    }

    /// Cache-flush records (label 4) skipped so far.
    pub fn flushes_ignored(&self) -> u64 {
        self.flushes
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        let flushes = &mut self.flushes;
        fill_batch(&mut self.lines, &mut self.bad, batch, |line| {
            classify(line, flushes)
        })
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = self.bad.diagnostics();
        if self.flushes > 0 {
            d.notes.push(format!(
                "{} din cache-flush record(s) (label 4) ignored: cachescope has no flush",
                self.flushes
            ));
        }
        d
    }
}

/// How many lines of `sample` (whole lines) parse. Flushes and blank lines count as ignored.
pub fn sniff(sample: &[u8]) -> Sniff {
    sniff_lines(sample, |line| classify(line, &mut 0))
}

/// A line for the shared read loop; flush records are counted in `flushes`.
fn classify(line: &[u8], flushes: &mut u64) -> Line {
    match parse(line) {
        Ok(Record::Access(kind, addr, size)) => Line::Access {
            addr,
            size,
            kind,
            pc: NO_PC,
        },
        Ok(Record::Flush) => {
            *flushes += 1;
            Line::Ignored
        }
        Ok(Record::Blank) => Line::Ignored,
        Err(expected) => Line::Bad(expected),
    }
}

/// One parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Record {
    Access(AccessKind, u64, u32),
    Flush,
    Blank,
}

/// Parses one line; `Err(what is wrong)` for bad ones.
fn parse(line: &[u8]) -> Result<Record, &'static str> {
    let line = skip_blanks(line);
    let (label, rest) = match line {
        [] => return Ok(Record::Blank),
        [l @ b'0'..=b'4', b' ' | b'\t', tail @ ..] => (*l, tail),
        _ => return Err(EXPECTED),
    };
    let rest = skip_blanks(rest);
    let addr_len = rest
        .iter()
        .position(|&b| matches!(b, b' ' | b'\t'))
        .unwrap_or(rest.len());
    let (addr, rest) = rest.split_at(addr_len);
    let addr = match addr {
        [b'0', b'x' | b'X', digits @ ..] => hex_token(digits, EXPECTED)?,
        _ => hex_token(addr, EXPECTED)?,
    };
    let rest = skip_blanks(rest);
    let size_len = rest
        .iter()
        .position(|&b| matches!(b, b' ' | b'\t'))
        .unwrap_or(rest.len());
    let (size_col, rest) = rest.split_at(size_len);
    if !skip_blanks(rest).is_empty() {
        return Err(EXPECTED);
    }
    let size = if size_col.is_empty() {
        1
    } else {
        size(size_col)?
    };
    Ok(match label {
        b'0' | b'3' => Record::Access(AccessKind::Load, addr, size),
        b'1' => Record::Access(AccessKind::Store, addr, size),
        b'2' => Record::Access(AccessKind::Instr, addr, size),
        _ => Record::Flush,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::trace::plain::{ADDR_OVERFLOW, BAD_SIZE};
    use AccessKind::*;

    fn a(kind: AccessKind, addr: u64, size: u32) -> Access {
        Access {
            addr,
            size,
            kind,
            pc: None,
        }
    }

    #[test]
    fn reads_labels_sizes_and_counts_flushes() {
        let text = b"2 400a10\n0 7ffd1000\n1 0x7ffd1008 8\r\n\n3\t10\n4 0\n  0  FFFF  2  \n4 0\n";
        let mut r = Reader::new(&text[..], Source::Memory, Options::default());
        let mut batch = Batch::new();
        assert_eq!(r.read_batch(&mut batch).unwrap(), 5);
        assert_eq!(
            batch.iter().collect::<Vec<_>>(),
            vec![
                a(Instr, 0x400a10, 1),
                a(Load, 0x7ffd1000, 1),
                a(Store, 0x7ffd1008, 8),
                a(Load, 0x10, 1),
                a(Load, 0xffff, 2),
            ]
        );
        assert_eq!(r.read_batch(&mut batch).unwrap(), 0);
        assert_eq!(r.flushes_ignored(), 2);
        let d = r.diagnostics();
        assert_eq!(d.skipped_lines, 0);
        assert_eq!(d.notes.len(), 1);
        assert!(
            d.notes[0].starts_with("2 din cache-flush record(s)"),
            "{d:?}"
        );
    }

    #[test]
    fn strict_about_labels_and_columns() {
        for bad in [
            "5 10", "00 10", "10 10", "0", "0 ", "0 zz", "0 0x", "0,10", "0 10 8 9", "0 10,8",
            "L 10",
        ] {
            assert_eq!(parse(bad.as_bytes()), Err(EXPECTED), "{bad:?}");
        }
        assert_eq!(parse(b"0 1ffffffffffffffff"), Err(ADDR_OVERFLOW));
        assert_eq!(parse(b"0 10 0"), Err(BAD_SIZE));
        assert_eq!(parse(b"0 10 0x8"), Err(BAD_SIZE));
    }

    #[test]
    fn bad_line_error_and_skipping() {
        let opts = Options {
            skip_bad_lines: true,
        };
        let mut r = Reader::new(&b"0 10\n7 20\n1 30\n"[..], Source::Memory, opts);
        let mut batch = Batch::new();
        assert_eq!(r.read_batch(&mut batch).unwrap(), 2);
        assert_eq!(r.diagnostics().skipped_lines, 1);

        let mut r = Reader::new(&b"0 10\n7 20\n"[..], Source::Memory, Options::default());
        let err = r.read_batch(&mut batch).unwrap_err();
        assert_eq!(err.to_string(), format!("<memory>:2: {EXPECTED}: \"7 20\""));
    }

    #[test]
    fn sniff_is_strict() {
        assert_eq!(
            sniff(b"2 400a10\n0 7ffd1000\n4 0\n\n"),
            Sniff {
                accesses: 2,
                ignored: 2,
                bad: 0
            }
        );
        // Plain and lackey lines are not din.
        assert_eq!(
            sniff(b"0x1000\n4096 8\nW 0x10\n"),
            Sniff {
                accesses: 0,
                ignored: 0,
                bad: 3
            }
        );
        assert_eq!(
            sniff(b"==1== x\nI  0400,3\n L 10,8\n"),
            Sniff {
                accesses: 0,
                ignored: 0,
                bad: 3
            }
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(line in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let _ = parse(&line);
            let _ = sniff(&line);
        }
    }
}
