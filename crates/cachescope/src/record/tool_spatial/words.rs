//! The sampled stream's words, read through a buffer, counted for the end record's check.

use std::io::Read;

use crate::error::{Error, Result, Source, corrupt, truncated};

/// Bytes read at a time.
const CHUNK: usize = 1 << 16;

/// The input as little-endian 64-bit words.
pub(super) struct Words<R> {
    input: R,
    source: Source,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    /// Words since the current program's header, the header included.
    count: u64,
}

impl<R: Read> Words<R> {
    pub(super) fn new(input: R, source: Source) -> Self {
        Words {
            input,
            source,
            buf: vec![0; CHUNK],
            pos: 0,
            len: 0,
            eof: false,
            count: 0,
        }
    }

    pub(super) fn source(&self) -> &Source {
        &self.source
    }

    /// An error about the stream at the current word.
    pub(super) fn corrupt(&self, what: String) -> Error {
        corrupt(&self.source, format!("{what} at word {}", self.count))
    }

    /// Makes at least `n` words available if the input has them; false if it ends first.
    fn fill(&mut self, n: usize) -> Result<bool> {
        let want = 8 * n;
        if self.len - self.pos >= want {
            return Ok(true);
        }
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while !self.eof && self.len < want {
            match self.input.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.len += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.source, e)),
            }
        }
        if self.len % 8 != 0 && self.eof && self.len < want {
            return Err(truncated(&self.source, "the stream ends inside a word"));
        }
        Ok(self.len >= want)
    }

    fn word(&mut self) -> u64 {
        let w = u64::from_le_bytes(
            self.buf[self.pos..self.pos + 8]
                .try_into()
                .expect("8 bytes"),
        );
        self.pos += 8;
        self.count += 1;
        w
    }

    /// The next word; `None` at the end of the input.
    pub(super) fn next(&mut self) -> Result<Option<u64>> {
        Ok(self.fill(1)?.then(|| self.word()))
    }

    /// Makes the next `n` words, the payload of `what`, available, or fails.
    fn payload(&mut self, n: usize, what: &str) -> Result<()> {
        if !self.fill(n)? {
            return Err(truncated(
                &self.source,
                format!("{what} is cut off at word {}", self.count),
            ));
        }
        Ok(())
    }

    /// The next `n` words, the payload of `what`.
    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<Vec<u64>> {
        self.payload(n, what)?;
        Ok((0..n).map(|_| self.word()).collect())
    }

    /// The next `N` words, the payload of `what`: no allocation (two or four words of every
    /// sample and position record).
    pub(super) fn array<const N: usize>(&mut self, what: &str) -> Result<[u64; N]> {
        self.payload(N, what)?;
        Ok(std::array::from_fn(|_| self.word()))
    }

    /// Checks an end record (already read) that counts `before` words before it.
    pub(super) fn end(&self, before: u64) -> Result<()> {
        let arrived = self.count - 1;
        if before != arrived & ((1 << 48) - 1) {
            return Err(self.corrupt(format!(
                "the end record counts {before} words before it, but {arrived} arrived"
            )));
        }
        Ok(())
    }

    /// A new program's header was just read: it counts its words from it.
    pub(super) fn restart(&mut self) {
        self.count = 1;
    }
}
