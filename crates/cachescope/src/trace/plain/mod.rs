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

mod fields;
mod parse;
#[cfg(test)]
mod tests;

use std::io::Read;

use super::lines::{BadLines, Line, Lines, fill_batch, sniff_lines};
use super::{AccessReader, Diagnostics, Radix, Sniff};
use crate::batch::{Batch, NO_PC};
use crate::error::{Result, Source};

// din's tests check its messages against these.
#[cfg(test)]
pub(crate) use fields::{ADDR_OVERFLOW, BAD_SIZE};
pub(crate) use fields::{hex_token, size, skip_blanks};
use parse::parse;

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
