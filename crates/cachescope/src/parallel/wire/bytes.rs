//! The byte layer every wire format shares: [`Out`] appends little-endian integers and
//! histograms, [`Cursor`] reads them back with every read checked against the bytes left.

use crate::error::{Error, Result, Source};
use crate::reuse::Options;
use crate::reuse::histogram::{Layout, LogHistogram};

/// Appends little-endian integers.
#[derive(Default)]
pub(super) struct Out(pub(super) Vec<u8>);

impl Out {
    pub(super) fn with_capacity(n: usize) -> Out {
        Out(Vec::with_capacity(n))
    }

    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    pub(super) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    pub(super) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn u128(&mut self, v: u128) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn options(&mut self, o: &Options) {
        self.u64(o.line_size.bytes());
        self.u8(u8::from(o.include_instructions));
        self.u32(o.layout.exact_bits());
    }

    pub(super) fn histogram(&mut self, h: &LogHistogram) {
        let n = h.bins().count();
        self.u64(n as u64);
        for b in h.bins() {
            self.u64(b.start);
            self.u64(b.count);
        }
    }

    /// `(line, first, last)` per line, in order of first reference.
    pub(super) fn lines(&mut self, lines: impl ExactSizeIterator<Item = (u64, u64, u64)>) {
        self.u64(lines.len() as u64);
        for (l, f, p) in lines {
            self.u64(l);
            self.u64(f);
            self.u64(p);
        }
    }
}

/// Reads what [`Out`] wrote, every read checked against the bytes left.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    source: &'a Source,
}

impl<'a> Cursor<'a> {
    /// A cursor after `magic`, which `bytes` must start with (`what` names the format).
    pub(super) fn open(
        bytes: &'a [u8],
        source: &'a Source,
        magic: &[u8; 8],
        what: &str,
    ) -> Result<Self> {
        let mut r = Cursor {
            bytes,
            at: 0,
            source,
        };
        let head = r.take(8)?;
        if head[..7] != magic[..7] {
            return Err(r.corrupt(format!("not a {what} partial (bad magic)")));
        }
        if head[7] != magic[7] {
            return Err(r.corrupt(format!(
                "a {what} partial of format version {}, this build reads version {}",
                head[7], magic[7]
            )));
        }
        Ok(r)
    }

    pub(super) fn corrupt(&self, message: impl Into<String>) -> Error {
        Error::Corrupt {
            source_name: self.source.clone(),
            message: format!("partial result: {}", message.into()),
        }
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.at < n {
            return Err(self.corrupt(format!("cut short at byte {}", self.at)));
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    pub(super) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    pub(super) fn u128(&mut self) -> Result<u128> {
        Ok(u128::from_le_bytes(
            self.take(16)?.try_into().expect("16 bytes"),
        ))
    }

    /// A count of items of `size` bytes each, checked against the bytes left.
    pub(super) fn len(&mut self, size: usize) -> Result<usize> {
        let n = self.u64()?;
        if n > ((self.bytes.len() - self.at) / size) as u64 {
            return Err(self.corrupt(format!("a count of {n} runs past the end")));
        }
        Ok(n as usize)
    }

    /// The count [`Cursor::len`] would read next, 0 if it is not a valid one (that read then
    /// fails): to size a table before the items arrive.
    pub(super) fn peek_len(&self, size: usize) -> usize {
        let mut r = Cursor { ..*self };
        r.len(size).unwrap_or(0)
    }

    pub(super) fn list(&mut self) -> Result<Vec<u64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.u64()).collect()
    }

    /// Options, which must be `want`'s.
    pub(super) fn options(&mut self, want: &Options) -> Result<()> {
        let (line, instr, bits) = (self.u64()?, self.u8()?, self.u32()?);
        if instr > 1 {
            return Err(self.corrupt(format!("{instr} is not a flag")));
        }
        let want_instr = u8::from(want.include_instructions);
        if (line, instr, bits) != (want.line_size.bytes(), want_instr, want.layout.exact_bits()) {
            return Err(self.corrupt(format!(
                "made with other options (line size {line}, instructions {instr}, histogram \
                 exact bits {bits}) than this run ({}, {want_instr}, {})",
                want.line_size.bytes(),
                want.layout.exact_bits()
            )));
        }
        Ok(())
    }

    /// A histogram of `layout`.
    pub(super) fn histogram(&mut self, layout: Layout) -> Result<LogHistogram> {
        let mut h = LogHistogram::new(layout);
        let n = self.len(16)?;
        let mut next = 0u64;
        let mut total = 0u64;
        for i in 0..n {
            let (start, count) = (self.u64()?, self.u64()?);
            let bin = h.bin_of(start);
            if bin.start != start {
                return Err(self.corrupt(format!("{start} does not start a histogram bin")));
            }
            if (i > 0 && start < next) || count == 0 {
                return Err(self.corrupt(format!("histogram bin {start} out of order or empty")));
            }
            total = total
                .checked_add(count)
                .ok_or_else(|| self.corrupt("histogram counts overflow"))?;
            next = start.saturating_add(bin.len);
            h.record_n(start, count);
        }
        Ok(h)
    }

    /// `(line, first, last)` per line in a run of `refs` references: first positions
    /// increasing, `1 ≤ first ≤ last ≤ refs`, each line once (`insert` answers whether it was
    /// new).
    pub(super) fn lines(
        &mut self,
        refs: u64,
        mut insert: impl FnMut(u64, u64) -> bool,
    ) -> Result<Vec<(u64, u64)>> {
        let n = self.len(24)?;
        let mut firsts = Vec::with_capacity(n);
        let mut prev_first = 0;
        for _ in 0..n {
            let (l, f, p) = (self.u64()?, self.u64()?, self.u64()?);
            if f <= prev_first || f > p || p > refs {
                return Err(self.corrupt(format!(
                    "line {l:#x}: first reference at {f}, last at {p}, in a run of {refs} \
                     (after a first reference at {prev_first})"
                )));
            }
            if !insert(l, p) {
                return Err(self.corrupt(format!("line {l:#x} listed twice")));
            }
            prev_first = f;
            firsts.push((l, f));
        }
        Ok(firsts)
    }

    /// Errors unless every byte was read.
    pub(super) fn end(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(self.corrupt(format!(
                "{} bytes after the partial",
                self.bytes.len() - self.at
            )));
        }
        Ok(())
    }
}

/// Checks that a run of `refs` references splits into `reuses` reuses and `lines` first
/// references, the largest reuse distance recorded being below `max_below`.
pub(super) fn check_counts(
    r: &Cursor<'_>,
    refs: u64,
    reuses: u64,
    lines: usize,
    max: Option<u64>,
    max_below: u64,
) -> Result<()> {
    if reuses.checked_add(lines as u64) != Some(refs) {
        return Err(r.corrupt(format!(
            "{reuses} reuses and {lines} first references do not make {refs} references"
        )));
    }
    if let Some(m) = max.filter(|&m| m >= max_below) {
        return Err(r.corrupt(format!(
            "a distance of at least {m} in a run where they stay below {max_below}"
        )));
    }
    Ok(())
}
