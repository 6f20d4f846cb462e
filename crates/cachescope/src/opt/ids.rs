//! [`SpilledIds`]: the dense line ids [`NextUseSpill`](super::NextUseSpill) spilled, read
//! forward on a thread of their own while the backward pass reads the same file.

use super::next_use::BLOCK;
use super::store::Store;
use crate::error::Result;

/// The references' line ids in trace order: each distinct line numbered in order of first
/// reference (a number not seen before is the next one).
#[derive(Debug)]
pub struct SpilledIds {
    file: Store,
    refs: u64,
}

impl SpilledIds {
    pub(super) fn new(file: Store, refs: u64) -> SpilledIds {
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
            self.file.read_exact_at(&mut bytes[..len * 4], start * 4)?;
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
