//! [`SpilledIds`]: the dense line ids [`NextUseSpill`](super::NextUseSpill) spilled, read
//! forward on a thread of their own while the backward pass reads the same file.

use std::fs::File;

use super::next_use::{BLOCK, io};
use crate::error::Result;

/// The references' line ids in trace order: each distinct line numbered in order of first
/// reference (a number not seen before is the next one).
#[derive(Debug)]
pub struct SpilledIds {
    file: File,
    refs: u64,
}

impl SpilledIds {
    pub(super) fn new(file: File, refs: u64) -> SpilledIds {
        SpilledIds { file, refs }
    }

    /// Counted references.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Calls `f` with consecutive blocks of ids in trace order. Reads at explicit offsets, so
    /// another handle of the same file may seek and read meanwhile.
    pub fn for_each_block(&self, mut f: impl FnMut(&[u32])) -> Result<()> {
        let mut bytes = vec![0u8; BLOCK * 4];
        let mut ids = Vec::with_capacity(BLOCK);
        let mut start = 0u64;
        while start < self.refs {
            let len = (self.refs - start).min(BLOCK as u64) as usize;
            read_exact_at(&self.file, &mut bytes[..len * 4], start * 4).map_err(io)?;
            ids.clear();
            ids.extend(
                bytes[..len * 4]
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))),
            );
            f(&ids);
            start += len as u64;
        }
        Ok(())
    }
}

/// Fills `buf` from `file` at `offset` without moving the file's cursor (which the backward
/// pass, on another handle of the same file, uses).
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Windows has positioned reads that may return short: loop until `buf` is full.
#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// What [`SpilledIds`] holds for `lines`, computed the plain way: each line's number in order
/// of first reference. The tests of the analyses that run on these numbers compare with it.
#[cfg(test)]
pub(crate) fn numbered(lines: &[u64]) -> Vec<u32> {
    let mut number = std::collections::HashMap::new();
    lines
        .iter()
        .map(|l| {
            let next = number.len() as u32;
            *number.entry(*l).or_insert(next)
        })
        .collect()
}
