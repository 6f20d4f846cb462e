//! Placeholder while the plain reader is written (being replaced in this session).
use std::io::Read;

use super::{AccessReader, Radix, Sniff};
use crate::batch::Batch;
use crate::error::{Result, Source};

/// Reader options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Skip lines that do not parse (counted in diagnostics) instead of failing.
    pub skip_bad_lines: bool,
    /// How bare addresses are written.
    pub radix: Radix,
}

/// Reader.
pub struct Reader<R> {
    _input: R,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`.
    pub fn new(input: R, _source: Source, _opts: Options) -> Self {
        Reader { _input: input }
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, _batch: &mut Batch) -> Result<usize> {
        unimplemented!()
    }
}

/// How many lines of `sample` (whole lines) parse with addresses in `radix`.
pub fn sniff(_sample: &[u8], _radix: Radix) -> Sniff {
    Sniff::default()
}

/// `Some(Hex)` when some address in `sample` is certainly hex (`0x` or a digit a-f), `None`
/// when every address is bare decimal digits (ambiguous).
pub fn guess_radix(_sample: &[u8]) -> Option<Radix> {
    None
}
