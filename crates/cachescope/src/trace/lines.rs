//! Line splitting and bad-line bookkeeping shared by the text readers.
//!
//! [`Lines`] reads big chunks and hands out complete lines as slices of its buffer, so the hot
//! path of a text reader allocates nothing per line. It tracks 1-based line numbers for errors.

use std::io::Read;

use crate::access::AccessKind;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;

/// Complete lines of a byte stream, with their 1-based numbers; `\r\n` endings are accepted and
/// a last line without a newline is still a line.
pub(crate) struct Lines<R> {
    inner: R,
    source: Source,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line_no: u64,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R, source: Source) -> Self {
        Lines {
            inner,
            source,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
            line_no: 0,
        }
    }

    /// Where the lines come from.
    pub(crate) fn source(&self) -> &Source {
        &self.source
    }

    /// The next line (without its line ending) and its number, or `None` at the end.
    #[inline]
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        loop {
            if let Some(off) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let s = self.start;
                self.start += off + 1;
                self.line_no += 1;
                let mut line = &self.buf[s..s + off];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                return Ok(Some((self.line_no, line)));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let s = self.start;
                self.start = self.end;
                self.line_no += 1;
                let mut line = &self.buf[s..self.end];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                return Ok(Some((self.line_no, line)));
            }
            self.refill()?;
        }
    }

    fn refill(&mut self) -> Result<()> {
        // Move the partial line to the front, grow if one line fills the buffer.
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.buf.len() {
            if self.buf.len() >= 64 * CHUNK {
                return Err(Error::Corrupt {
                    source_name: self.source.clone(),
                    message: format!(
                        "line {} is longer than {} MiB; this is not a text trace",
                        self.line_no + 1,
                        self.buf.len() >> 20
                    ),
                });
            }
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.source, e)),
            }
        }
    }
}

/// One text line as a format's parser sees it.
pub(crate) enum Line {
    /// An access; `pc` is [`NO_PC`](crate::batch::NO_PC) unless the format carries it.
    Access {
        addr: u64,
        size: u32,
        kind: AccessKind,
        pc: u64,
    },
    /// A line the format knows and ignores (blank, comment, tool messages).
    Ignored,
    /// A line that does not parse, with what was expected.
    Bad(&'static str),
}

/// The read loop every text format shares: clears `batch`, then classifies lines with `parse`
/// until the batch is full or the input ends. Returns the number of accesses read.
#[inline]
pub(crate) fn fill_batch<R: Read>(
    lines: &mut Lines<R>,
    bad: &mut BadLines,
    batch: &mut Batch,
    mut parse: impl FnMut(&[u8]) -> Line,
) -> Result<usize> {
    batch.clear();
    while !batch.is_full() {
        let Some((line_no, line)) = lines.next_line()? else {
            break;
        };
        match parse(line) {
            Line::Access {
                addr,
                size,
                kind,
                pc,
            } => batch.push_raw(addr, size, kind, pc),
            Line::Ignored => {}
            Line::Bad(expected) => {
                let text = line.to_vec(); // ends the borrow of `lines`
                bad.handle(Error::parse(lines.source(), line_no, &text, expected))?;
            }
        }
    }
    Ok(batch.len())
}

/// Counts how the whole lines of `sample` classify under `parse`, for format detection.
pub(crate) fn sniff_lines(sample: &[u8], mut parse: impl FnMut(&[u8]) -> Line) -> super::Sniff {
    let mut sniff = super::Sniff::default();
    let mut lines = Lines::new(sample, Source::Memory);
    while let Ok(Some((_, line))) = lines.next_line() {
        match parse(line) {
            Line::Access { .. } => sniff.accesses += 1,
            Line::Ignored => sniff.ignored += 1,
            Line::Bad(_) => sniff.bad += 1,
        }
    }
    sniff
}

/// What a text reader does with a line that does not parse: fail (the default), or skip it,
/// count it and remember the first one so the caller can warn once.
#[derive(Debug, Default)]
pub(crate) struct BadLines {
    pub(crate) skip: bool,
    pub(crate) count: u64,
    pub(crate) first: Option<Error>,
}

impl BadLines {
    pub(crate) fn new(skip: bool) -> Self {
        BadLines {
            skip,
            count: 0,
            first: None,
        }
    }

    /// Records `err`; returns it back when bad lines are not being skipped.
    pub(crate) fn handle(&mut self, err: Error) -> Result<()> {
        if !self.skip {
            return Err(err);
        }
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(err);
        }
        Ok(())
    }

    pub(crate) fn diagnostics(&self) -> super::Diagnostics {
        super::Diagnostics {
            skipped_lines: self.count,
            first_skipped: self.first.as_ref().map(|e| e.to_string()),
            notes: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let mut l = Lines::new(input, Source::Memory);
        let mut out = vec![];
        while let Some((n, line)) = l.next_line().unwrap() {
            out.push((n, line.to_vec()));
        }
        out
    }

    #[test]
    fn splits_lines_with_crlf_and_no_final_newline() {
        let got = collect(b"a\r\nbb\n\nccc");
        let want: Vec<(u64, Vec<u8>)> = vec![
            (1, b"a".to_vec()),
            (2, b"bb".to_vec()),
            (3, b"".to_vec()),
            (4, b"ccc".to_vec()),
        ];
        assert_eq!(got, want);
        assert!(collect(b"").is_empty());
    }

    #[test]
    fn lines_longer_than_a_chunk_survive() {
        let mut input = vec![b'x'; CHUNK * 3 + 17];
        input.extend_from_slice(b"\ny\n");
        let got = collect(&input);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1.len(), CHUNK * 3 + 17);
        assert_eq!(got[1], (2, b"y".to_vec()));
    }
}
