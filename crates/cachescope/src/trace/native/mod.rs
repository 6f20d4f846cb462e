//! Placeholder while the native format is written (being replaced in this session).
use std::io::Read;

use super::AccessReader;
use crate::batch::Batch;
use crate::error::{Result, Source};

/// The first bytes of every native trace.
pub const MAGIC: [u8; 8] = *b"CSCOPE\x00\x01";

/// Reader.
pub struct Reader<R> {
    _input: R,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`; reads and checks the header.
    pub fn new(input: R, _source: Source) -> Result<Self> {
        Ok(Reader { _input: input })
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, _batch: &mut Batch) -> Result<usize> {
        unimplemented!()
    }
}
