//! Partial results as bytes, to send between processes (MPI ranks): little-endian, versioned by
//! a magic, every length checked against the bytes present before anything is allocated.
//!
//! A stack-distance partial ([`super::StackDistancePartial`]) is:
//! `"CSSDP\0\0\x01"`, refs (u64), histogram exact bits (u32), bins (u64 count, then per bin its
//! first distance and its count, u64 each), first references (u64 count, u64 lines), recency
//! (u64 count, u64 lines, least recent first).

use crate::error::{Error, Result, Source};
use crate::reuse::histogram::{Layout, LogHistogram};

use super::reuse::StackDistancePartial;

const SD_MAGIC: [u8; 8] = *b"CSSDP\0\0\x01";

/// Encodes a stack-distance partial (detaching its live stack first).
pub fn encode_stack_distances(part: &mut StackDistancePartial) -> Vec<u8> {
    part.detach();
    let bins: Vec<_> = part.histogram.bins().filter(|b| b.count > 0).collect();
    let mut out = Vec::with_capacity(
        8 + 8 + 4 + 8 + bins.len() * 16 + 16 + 8 * (part.firsts.len() + part.recency.len()),
    );
    out.extend_from_slice(&SD_MAGIC);
    out.extend_from_slice(&part.refs.to_le_bytes());
    out.extend_from_slice(&part.histogram.layout().exact_bits().to_le_bytes());
    out.extend_from_slice(&(bins.len() as u64).to_le_bytes());
    for b in &bins {
        out.extend_from_slice(&b.start.to_le_bytes());
        out.extend_from_slice(&b.count.to_le_bytes());
    }
    for list in [&part.firsts, &part.recency] {
        out.extend_from_slice(&(list.len() as u64).to_le_bytes());
        for l in list.iter() {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
    out
}

/// Decodes what [`encode_stack_distances`] wrote; `source` names the sender in errors.
pub fn decode_stack_distances(bytes: &[u8], source: &Source) -> Result<StackDistancePartial> {
    let mut r = Cursor {
        bytes,
        at: 0,
        source,
    };
    if r.take(8)? != SD_MAGIC {
        return Err(r.corrupt("not a stack-distance partial (bad magic)"));
    }
    let refs = r.u64()?;
    let bits = u32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
    let layout = Layout::new(bits).map_err(|_| r.corrupt("bad histogram layout"))?;
    let mut histogram = LogHistogram::new(layout);
    let n = r.len(16)?;
    for _ in 0..n {
        let (start, count) = (r.u64()?, r.u64()?);
        if histogram.bin_of(start).start != start {
            return Err(r.corrupt(format!("{start} does not start a histogram bin")));
        }
        histogram.record_n(start, count);
    }
    let firsts = r.list()?;
    let recency = r.list()?;
    if r.at != bytes.len() {
        return Err(r.corrupt("bytes after the partial"));
    }
    Ok(StackDistancePartial::from_parts(
        refs, histogram, firsts, recency,
    ))
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    source: &'a Source,
}

impl Cursor<'_> {
    fn corrupt(&self, message: impl Into<String>) -> Error {
        Error::Corrupt {
            source_name: self.source.clone(),
            message: format!("partial result: {}", message.into()),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.bytes.len() - self.at < n {
            return Err(self.corrupt(format!("cut short at byte {}", self.at)));
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A count of items of `size` bytes each, checked against the bytes left.
    fn len(&mut self, size: usize) -> Result<usize> {
        let n = self.u64()?;
        if n > ((self.bytes.len() - self.at) / size) as u64 {
            return Err(self.corrupt(format!("a count of {n} runs past the end")));
        }
        Ok(n as usize)
    }

    fn list(&mut self) -> Result<Vec<u64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.u64()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analysis;
    use crate::parallel::{Chunked, StackDistancePlan};
    use crate::{Access, Batch};

    #[test]
    fn round_trips_and_rejects_damage() {
        let plan = StackDistancePlan::default();
        let mut w = plan.worker(0);
        let batch: Batch = [0u64, 64, 0, 128, 64, 1 << 30, 0]
            .map(|a| Access::load(a, 8))
            .into_iter()
            .collect();
        w.observe(&batch);
        let mut p = plan.seal(w);
        let bytes = encode_stack_distances(&mut p);
        let q = decode_stack_distances(&bytes, &Source::Memory).unwrap();
        assert_eq!(
            (q.refs, &q.firsts, &q.recency),
            (7, &vec![0, 1, 2, 1 << 24], &vec![2, 1, 1 << 24, 0])
        );
        assert_eq!(q.histogram, p.histogram);
        for cut in 0..bytes.len() {
            assert!(decode_stack_distances(&bytes[..cut], &Source::Memory).is_err());
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_stack_distances(&long, &Source::Memory).is_err());
    }
}
