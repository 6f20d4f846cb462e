//! The profile file format, version 1: a fixed header, the source description, the samples as
//! pairs of LEB128 varints, and a CRC-32. The specification is `docs/profile-format.md`; a kept
//! sample is `tests/fixtures/sampling-v1.csprof`, decoded exactly by `tests/sampling_fixture.rs`.
//!
//! ```text
//! offset size
//!   0     8  MAGIC "CSPROF\0\x01"
//!   8     4  version (1)
//!  12     4  flags: bit 0 = instruction fetches counted
//!  16     8  line size in bytes
//!  24     8  rate (IEEE 754 binary64)
//!  32     8  seed
//!  40     8  slot length in counted references
//!  48     8  counted references n
//!  56     8  number of samples
//!  64     4  source description length (≤ 1 MiB), then the description (UTF-8)
//!   …        per sample: varint position gap (≥ 1), varint code (2·distance, or 1 = dangling)
//! end−4   4  CRC-32 of every byte before it
//! ```

use std::io::{BufReader, Read, Write};

use super::profile::check;
use super::{NextUse, Profile, Sample, SamplerOptions};
use crate::access::LineSize;
use crate::error::{Error, Result, Source, corrupt, truncated};

/// The first 8 bytes of every profile (the same in every version).
pub const MAGIC: [u8; 8] = *b"CSPROF\x00\x01";

/// The profile format version written, and the newest read.
pub const VERSION: u32 = 1;

/// Flag bit: instruction fetches were counted.
const FLAG_INSTRUCTIONS: u32 = 1;

/// Bytes before the source description.
const FIXED_LEN: usize = 68;

/// Longest source description, in bytes.
const MAX_SOURCE_LEN: usize = 1 << 20;

impl Profile {
    /// True when `head` (the first bytes of a file, at least 8 of them) starts like a profile.
    pub fn looks_like(head: &[u8]) -> bool {
        head.starts_with(&MAGIC)
    }

    /// Writes the profile in the current format version to `out` (`dest` names it in errors).
    /// Errors if the source description is longer than 1 MiB, or on a failed write.
    pub fn write(&self, mut out: impl Write, dest: &Source) -> Result<()> {
        let source = self.source().as_bytes();
        if source.len() > MAX_SOURCE_LEN {
            return Err(Error::InvalidParameter {
                name: "profile source description",
                message: format!("{} bytes; at most 1 MiB fits a profile", source.len()),
            });
        }
        let o = self.options();
        let mut b = Vec::with_capacity(FIXED_LEN + source.len() + 6 * self.samples().len() + 4);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        let flags = if o.include_instructions {
            FLAG_INSTRUCTIONS
        } else {
            0
        };
        b.extend_from_slice(&flags.to_le_bytes());
        for x in [
            o.line_size.bytes(),
            o.rate.to_bits(),
            o.seed,
            o.slot_refs,
            self.refs(),
            self.samples().len() as u64,
        ] {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&(source.len() as u32).to_le_bytes());
        b.extend_from_slice(source);
        let mut last = 0;
        for s in self.samples() {
            put_varint(&mut b, s.position - last);
            last = s.position;
            put_varint(
                &mut b,
                match s.next {
                    NextUse::Reuse { distance } => distance << 1,
                    NextUse::Dangling { .. } => 1,
                },
            );
        }
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        out.write_all(&b)
            .and_then(|()| out.flush())
            .map_err(|e| Error::io(dest, e))
    }

    /// Reads a profile written by [`Profile::write`] from `input` (`source` names it in
    /// errors): [`Error::Corrupt`] for wrong magic bytes, another version, impossible fields,
    /// inconsistent samples, a checksum mismatch or bytes after the end; [`Error::Truncated`]
    /// when the input ends early.
    pub fn read(input: impl Read, source: &Source) -> Result<Profile> {
        let mut r = Checked {
            input: BufReader::new(input),
            crc: flate2::Crc::new(),
            source,
        };
        let mut head = [0u8; FIXED_LEN];
        let got = r.fill(&mut head[..8])?;
        if got == 0 {
            return Err(truncated(
                source,
                "the file is empty, not a cachescope profile",
            ));
        }
        if !MAGIC.starts_with(&head[..got]) || (got == 8 && head[..8] != MAGIC) {
            return Err(corrupt(
                source,
                "not a cachescope profile (wrong magic bytes)",
            ));
        }
        if got < 8 {
            return Err(truncated(source, "the file ends inside the header"));
        }
        r.exact(&mut head[8..], "the header")?;
        let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap());
        let version = u32_at(8);
        if version != VERSION {
            return Err(corrupt(
                source,
                format!(
                    "profile format version {version} is not supported (this build reads \
                     version {VERSION}); use the cachescope that wrote it, or sample again"
                ),
            ));
        }
        let flags = u32_at(12);
        if flags & !FLAG_INSTRUCTIONS != 0 {
            return Err(corrupt(source, format!("unknown header flags {flags:#x}")));
        }
        let line_size = LineSize::new(u64_at(16)).map_err(|_| {
            corrupt(
                source,
                format!("line size {} is not a power of two", u64_at(16)),
            )
        })?;
        let options = SamplerOptions {
            rate: f64::from_bits(u64_at(24)),
            seed: u64_at(32),
            slot_refs: u64_at(40),
            line_size,
            include_instructions: flags & FLAG_INSTRUCTIONS != 0,
        };
        options
            .validate()
            .map_err(|e| corrupt(source, e.to_string()))?;
        let (refs, count) = (u64_at(48), u64_at(56));
        if count > refs {
            return Err(corrupt(
                source,
                format!("{count} samples of {refs} references"),
            ));
        }
        let source_len = u32_at(64) as usize;
        if source_len > MAX_SOURCE_LEN {
            return Err(corrupt(
                source,
                format!("source description of {source_len} bytes (at most 1 MiB)"),
            ));
        }
        let mut text = vec![0u8; source_len];
        r.exact(&mut text, "the source description")?;
        let text = String::from_utf8(text)
            .map_err(|_| corrupt(source, "the source description is not valid UTF-8"))?;
        // Each sample takes at least 2 bytes: grow as they arrive rather than trust `count`.
        let mut samples = Vec::with_capacity(count.min(1 << 16) as usize);
        let mut position = 0u64;
        for i in 0..count {
            let gap = r.varint()?;
            position = match position.checked_add(gap) {
                Some(p) if gap > 0 && p <= refs => p,
                _ => {
                    return Err(corrupt(
                        source,
                        format!("sample {i}: position gap {gap} after {position} of {refs}"),
                    ));
                }
            };
            let code = r.varint()?;
            let next = match code {
                1 => NextUse::Dangling {
                    age: refs - position,
                },
                c if c & 1 == 0 => NextUse::Reuse { distance: c >> 1 },
                c => return Err(corrupt(source, format!("sample {i}: unknown code {c}"))),
            };
            samples.push(Sample { position, next });
        }
        let expected = r.crc.sum();
        let mut crc = [0u8; 4];
        r.exact(&mut crc, "the checksum")?;
        if u32::from_le_bytes(crc) != expected {
            return Err(corrupt(source, "checksum mismatch"));
        }
        if r.fill(&mut [0u8; 1])? != 0 {
            return Err(corrupt(source, "bytes after the end of the profile"));
        }
        check(refs, &samples).map_err(|m| corrupt(source, m))?;
        Ok(Profile::from_sampler(options, refs, samples).with_source(text))
    }
}

/// A reader that keeps the CRC-32 of every byte read.
struct Checked<'s, R> {
    input: BufReader<R>,
    crc: flate2::Crc,
    source: &'s Source,
}

impl<R: Read> Checked<'_, R> {
    /// Reads until `buf` is full or the input ends; returns the bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(self.source, e)),
            }
        }
        self.crc.update(&buf[..got]);
        Ok(got)
    }

    /// Fills `buf` or fails with [`Error::Truncated`] naming `what`.
    fn exact(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        if self.fill(buf)? < buf.len() {
            return Err(truncated(
                self.source,
                format!("the file ends inside {what}"),
            ));
        }
        Ok(())
    }

    /// One LEB128 varint of at most 10 bytes.
    fn varint(&mut self) -> Result<u64> {
        let mut x = 0u64;
        for i in 0..10 {
            let mut byte = [0u8; 1];
            self.exact(&mut byte, "the samples")?;
            let b = byte[0];
            if i == 9 && b > 1 {
                break;
            }
            x |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(corrupt(self.source, "a sample field overflows 64 bits"))
    }
}

/// Appends `x` as a LEB128 varint (7 bits per byte, low first, high bit = more).
fn put_varint(b: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        b.push((x as u8) | 0x80);
        x >>= 7;
    }
    b.push(x as u8);
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}
