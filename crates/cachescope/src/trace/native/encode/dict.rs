//! A block's run dictionary (version 3): the runs of instruction fetches its run rows name,
//! each defined once per block in order of first use, so that blocks still decode alone.
//!
//! Per run: its fetch count `k` (LEB128), its `k` sizes (one byte each), then its addresses:
//! the first as a zigzag LEB128 delta from the previous run's first in the dictionary (0 for
//! the first run), each next one as a zigzag LEB128 delta from the fetch before it plus that
//! fetch's size (0 for straight-line code).

use super::super::runs::InstrRun;

/// The block-local index of each run the block has named so far, by the run's id. An entry
/// counts only if its generation is the current one, so starting a block is one increment.
#[derive(Debug)]
pub(super) struct LocalRuns {
    /// Per run id: (generation, local index).
    local: Vec<(u32, u16)>,
    generation: u32,
    /// Runs in the current block's dictionary.
    count: usize,
    /// First address of the dictionary's last run.
    prev_first: u64,
}

impl Default for LocalRuns {
    fn default() -> Self {
        LocalRuns {
            local: Vec::new(),
            generation: 1,
            count: 0,
            prev_first: 0,
        }
    }
}

impl LocalRuns {
    /// Forgets the block's runs.
    pub(super) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Every 4 G blocks: old entries could look current again.
            self.local.fill((0, 0));
            self.generation = 1;
        }
        self.count = 0;
        self.prev_first = 0;
    }

    /// The local index of `run`, appending its definition to `dict` on its first use in the
    /// block. A block names at most one run per row, so the index fits in 16 bits.
    #[inline(always)]
    pub(super) fn index(&mut self, run: &InstrRun<'_>, dict: &mut Vec<u8>) -> u16 {
        match self.local.get(run.id as usize) {
            Some(&(generation, i)) if generation == self.generation => i,
            _ => self.define(run, dict),
        }
    }

    #[cold]
    #[inline(never)]
    fn define(&mut self, run: &InstrRun<'_>, dict: &mut Vec<u8>) -> u16 {
        let id = run.id as usize;
        if id >= self.local.len() {
            self.local.resize(id + 1, (0, 0));
        }
        let i = u16::try_from(self.count).expect("at most 65 536 runs in a block");
        self.local[id] = (self.generation, i);
        self.count += 1;
        put_leb128(dict, run.len() as u64);
        dict.extend(run.sizes.iter().map(|&s| s as u8));
        let first = run.addrs[0];
        put_leb128(dict, zigzag(first.wrapping_sub(self.prev_first)));
        self.prev_first = first;
        for (w, size) in run.addrs.windows(2).zip(run.sizes) {
            let expected = w[0].wrapping_add(u64::from(*size));
            put_leb128(dict, zigzag(w[1].wrapping_sub(expected)));
        }
        i
    }
}

/// Appends `v` in LEB128: seven bits a byte, low first, the top bit set on all but the last.
pub(in crate::trace::native) fn put_leb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A wrapping difference as an unsigned number, small for small differences of either sign.
pub(in crate::trace::native) fn zigzag(d: u64) -> u64 {
    (d << 1) ^ ((d as i64 >> 63) as u64)
}

/// The inverse of [`zigzag`].
pub(in crate::trace::native) fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn zigzag_round_trips(d in any::<u64>()) {
            prop_assert_eq!(unzigzag(zigzag(d)), d);
        }
    }

    #[test]
    fn zigzag_keeps_small_differences_small() {
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(u64::MAX), 1); // -1
        assert_eq!(zigzag(1), 2);
        let mut b = Vec::new();
        put_leb128(&mut b, 300);
        assert_eq!(b, [0xac, 0x02]);
    }
}
