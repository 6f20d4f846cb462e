//! The file header: encoding, and decoding with validation.
//!
//! ```text
//! offset  size  field
//!      0     8  MAGIC
//!      8     4  version (u32 LE)
//!     12     4  header length in bytes, this table and the CRC included (u32 LE)
//!     16     4  flags: bit 0 = the counts are known; other bits zero
//!     20     4  reserved, zero
//!     24     8  line size (u64 LE)
//!     32    40  counts: accesses, loads, stores, modifies, instrs (u64 LE each; zero if unknown)
//!     72     4  number of metadata pairs (u32 LE)
//!     76     …  pairs: key length (u32 LE), key (UTF-8), value length (u32 LE), value (UTF-8)
//!    end-4   4  CRC-32 of every byte before it
//! ```
//! The counts sit at a fixed offset so a writer can patch them once the trace is complete.

use std::io::Read;

use super::{Counts, Header, MAGIC, MAX_HEADER_LEN, VERSION, corrupt, crc32, read_exact_or};
use super::{u32_at, u64_at};
use crate::access::LineSize;
use crate::error::{Error, Result, Source};

/// Bytes before the metadata pairs.
const FIXED_LEN: usize = 76;
/// Smallest possible header: no metadata.
const MIN_LEN: usize = FIXED_LEN + 4;
/// Flag bit: the counts field holds the trace's counts.
const FLAG_COUNTS: u32 = 1;

/// The header's bytes, with `counts` when known. Fails when the line size is not a valid
/// [`LineSize`] or the metadata would make the header longer than [`MAX_HEADER_LEN`].
pub(super) fn encode(header: &Header, counts: Option<Counts>) -> Result<Vec<u8>> {
    LineSize::new(header.line_size)?;
    let meta_len: usize = header
        .metadata
        .iter()
        .map(|(k, v)| 8 + k.len() + v.len())
        .sum();
    let len = MIN_LEN + meta_len;
    if len > MAX_HEADER_LEN {
        return Err(Error::InvalidParameter {
            name: "native header metadata",
            message: format!("{len} bytes of header exceed the limit of {MAX_HEADER_LEN}"),
        });
    }
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&(len as u32).to_le_bytes());
    let flags = if counts.is_some() { FLAG_COUNTS } else { 0 };
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&header.line_size.to_le_bytes());
    for c in counts.unwrap_or_default().to_array() {
        b.extend_from_slice(&c.to_le_bytes());
    }
    b.extend_from_slice(&(header.metadata.len() as u32).to_le_bytes());
    for (k, v) in &header.metadata {
        for s in [k, v] {
            b.extend_from_slice(&(s.len() as u32).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        }
    }
    let crc = crc32(&[&b]);
    b.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(b.len(), len);
    Ok(b)
}

/// Reads and validates a header; returns it with its length in bytes.
pub(super) fn read<R: Read + ?Sized>(input: &mut R, source: &Source) -> Result<(Header, usize)> {
    let mut b = vec![0u8; 16];
    read_exact_or(input, &mut b, source, "the header")?;
    if b[..8] != MAGIC {
        return Err(corrupt(
            source,
            "not a cachescope native trace (wrong magic bytes)",
        ));
    }
    let version = u32_at(&b, 8);
    if !(1..=VERSION).contains(&version) {
        return Err(corrupt(
            source,
            format!(
                "native format version {version} is not supported (this build reads 1 to {VERSION})"
            ),
        ));
    }
    let len = u32_at(&b, 12) as usize;
    if !(MIN_LEN..=MAX_HEADER_LEN).contains(&len) {
        return Err(corrupt(source, format!("impossible header length {len}")));
    }
    b.resize(len, 0);
    read_exact_or(input, &mut b[16..], source, "the header")?;
    let (body, crc) = b.split_at(len - 4);
    if crc32(&[body]) != u32_at(crc, 0) {
        return Err(corrupt(source, "header checksum mismatch"));
    }
    parse(body, version, source).map(|h| (h, len))
}

/// Parses a header whose checksum was verified (`b` excludes the CRC).
fn parse(b: &[u8], version: u32, source: &Source) -> Result<Header> {
    let flags = u32_at(b, 16);
    if flags & !FLAG_COUNTS != 0 || u32_at(b, 20) != 0 {
        return Err(corrupt(source, format!("unknown header flags {flags:#x}")));
    }
    let line_size = u64_at(b, 24);
    if LineSize::new(line_size).is_err() {
        return Err(corrupt(
            source,
            format!("line size {line_size} is not a power of two"),
        ));
    }
    let mut c = [0u64; 5];
    for (i, x) in c.iter_mut().enumerate() {
        *x = u64_at(b, 32 + 8 * i);
    }
    let counts = match Counts::from_array(c) {
        Some(c) if flags & FLAG_COUNTS != 0 => Some(c),
        None if flags & FLAG_COUNTS != 0 => {
            return Err(corrupt(source, "header counts of each kind do not add up"));
        }
        _ => None,
    };
    let pairs = u32_at(b, 72) as usize;
    let mut at = FIXED_LEN;
    let string = |at: &mut usize| -> Result<String> {
        let len = b.get(*at..*at + 4).map(|s| u32_at(s, 0) as usize);
        let bytes = len.and_then(|len| b.get(*at + 4..(*at + 4).checked_add(len)?));
        let bytes = bytes.ok_or_else(|| corrupt(source, "header metadata overruns the header"))?;
        *at += 4 + bytes.len();
        String::from_utf8(bytes.to_vec())
            .map_err(|_| corrupt(source, "header metadata is not valid UTF-8"))
    };
    // Each pair takes at least 8 bytes, so `pairs` is bounded by the header length.
    let mut metadata = Vec::with_capacity(pairs.min(b.len() / 8));
    for _ in 0..pairs {
        let k = string(&mut at)?;
        let v = string(&mut at)?;
        metadata.push((k, v));
    }
    if at != b.len() {
        return Err(corrupt(source, "unexpected bytes at the end of the header"));
    }
    Ok(Header {
        version,
        line_size,
        metadata,
        counts,
    })
}
