//! Raw binary traces: little-endian u64 byte addresses, 8 bytes each, nothing else.
//!
//! The format carries no access kind, size or instruction address: every access is a
//! [`Load`](crate::AccessKind::Load) of 1 byte with pc [`NO_PC`]. A file whose length is not a
//! multiple of 8 ends in a partial record, which is reported as [`Error::Truncated`] after every
//! whole record has been delivered. Empty input yields no accesses (opening reports empty files).
//!
//! The reader asks the input for as many bytes as the batch has room for (512 KiB for a full
//! batch) and decodes them straight into the address column.

use std::io::Read;

use super::AccessReader;
use crate::access::AccessKind;
use crate::batch::{BATCH_LEN, Batch, NO_PC};
use crate::error::{Error, Result, Source};

/// Bytes per record.
const RECORD: usize = 8;

/// Reader options (none yet).
#[derive(Clone, Debug, Default)]
pub struct Options {}

/// Reads accesses from raw little-endian u64 addresses.
pub struct Reader<R> {
    input: R,
    source: Source,
    /// Bytes read and not yet decoded: fewer than [`RECORD`] between calls.
    buf: Vec<u8>,
    filled: usize,
    eof: bool,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`; `source` names it in error messages.
    pub fn new(input: R, source: Source, _opts: Options) -> Self {
        Reader {
            input,
            source,
            buf: vec![0; BATCH_LEN * RECORD],
            filled: 0,
            eof: false,
        }
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        while !self.eof && !batch.is_full() {
            // Room for the rest of the batch; always more than the < 8 bytes left over.
            let want = (BATCH_LEN - batch.len()) * RECORD;
            match self.input.read(&mut self.buf[self.filled..want]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.source, e)),
            }
            let whole = self.filled / RECORD * RECORD;
            let records = self.buf[..whole].chunks_exact(RECORD);
            batch
                .addrs
                .extend(records.map(|r| u64::from_le_bytes(r.try_into().unwrap_or_default())));
            self.buf.copy_within(whole..self.filled, 0);
            self.filled -= whole;
        }
        let n = batch.len();
        batch.sizes.resize(n, 1);
        batch.kinds.resize(n, AccessKind::Load);
        batch.pcs.resize(n, NO_PC);
        if n == 0 && self.eof && self.filled > 0 {
            return Err(Error::Truncated {
                source_name: self.source.clone(),
                message: format!(
                    "{} byte(s) left over after the last whole 8-byte address",
                    self.filled
                ),
            });
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most `step` bytes per read, to exercise records split across reads.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn encode(addrs: &[u64]) -> Vec<u8> {
        addrs.iter().flat_map(|a| a.to_le_bytes()).collect()
    }

    #[test]
    fn reads_addresses_across_batches_and_odd_reads() {
        let addrs: Vec<u64> = (0..BATCH_LEN as u64 + 100)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let bytes = encode(&addrs);
        for step in [3, 8, 1000, usize::MAX] {
            let mut r = Reader::new(Trickle { data: &bytes, step }, Source::Memory, Options {});
            let mut batch = Batch::new();
            let mut got = vec![];
            while r.read_batch(&mut batch).unwrap() > 0 {
                assert!(batch.len() <= BATCH_LEN);
                assert_eq!(batch.sizes.len(), batch.len());
                got.extend(batch.iter());
            }
            assert_eq!(got.len(), addrs.len());
            assert!(got.iter().zip(&addrs).all(|(a, &want)| {
                a.addr == want && a.size == 1 && a.kind == AccessKind::Load && a.pc.is_none()
            }));
        }
    }

    #[test]
    fn empty_input_yields_nothing() {
        let mut r = Reader::new(&b""[..], Source::Memory, Options {});
        let mut batch = Batch::new();
        assert_eq!(r.read_batch(&mut batch).unwrap(), 0);
        assert_eq!(r.read_batch(&mut batch).unwrap(), 0);
    }

    #[test]
    fn trailing_partial_record_is_truncated_after_the_whole_ones() {
        let mut bytes = encode(&[1, 2]);
        bytes.extend_from_slice(&[7, 7, 7]);
        let mut r = Reader::new(
            Trickle {
                data: &bytes,
                step: 5,
            },
            Source::Memory,
            Options {},
        );
        let mut batch = Batch::new();
        assert_eq!(r.read_batch(&mut batch).unwrap(), 2);
        assert_eq!(batch.addrs, vec![1, 2]);
        let err = r.read_batch(&mut batch).unwrap_err();
        assert!(matches!(err, Error::Truncated { .. }));
        assert_eq!(
            err.to_string(),
            "<memory>: truncated: 3 byte(s) left over after the last whole 8-byte address"
        );
    }
}
