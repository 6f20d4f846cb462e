//! Placeholder while the binary reader is written (being replaced in this session).
use std::io::Read;

use super::AccessReader;
use crate::batch::Batch;
use crate::error::{Result, Source};

/// Reader options (none yet).
#[derive(Clone, Debug, Default)]
pub struct Options {}

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
