//! Placeholder while the lackey reader is written (being replaced in this session).
use std::io::Read;

use super::{AccessReader, Sniff};
use crate::batch::Batch;
use crate::error::{Result, Source};

/// Reader options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Skip lines that do not parse (counted in diagnostics) instead of failing.
    pub skip_bad_lines: bool,
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

/// How many lines of `sample` (whole lines) parse.
pub fn sniff(_sample: &[u8]) -> Sniff {
    Sniff::default()
}
