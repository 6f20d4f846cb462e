//! Runs of instruction fetches known in advance, and their encoding templates.
//!
//! cachescope's Valgrind tool defines each run of consecutive instructions of a translated
//! block once and then names it by its id every time the block runs
//! (`record::tool`; docs/recording.md). A run's fetches after its first are encoded the same
//! every time: each is a delta from the previous fetch in slot 0 with the pc of the fetch
//! itself, so their meta, size and slot bytes and their address bytes are computed here once
//! and copied into the block ([`super::encode::BlockEncoder`]), byte for byte what encoding
//! them one by one gives. Memory grows with the program's translated code, not with the
//! trace.

use super::encode::{PC_LAST_INSTR, byte_len};

/// One run's place in the table's flat arrays.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Index of its first fetch in `addrs` and `sizes`.
    first: u32,
    /// Fetches (at least 1).
    len: u32,
    /// Start of its meta and size bytes in `metas` and `sizes8`.
    tail: u32,
    /// Its address bytes: `deltas[deltas..deltas_end]`.
    deltas: u32,
    deltas_end: u32,
}

/// The runs defined so far, in id order.
#[derive(Debug, Default)]
pub(crate) struct InstrRuns {
    entries: Vec<Entry>,
    addrs: Vec<u64>,
    sizes: Vec<u32>,
    /// Per fetch after a run's first: its meta byte and size byte.
    metas: Vec<u8>,
    sizes8: Vec<u8>,
    /// The address delta bytes of the fetches after each run's first, run after run.
    deltas: Vec<u8>,
}

/// A run, borrowed from its table: the fetches' addresses and sizes, and the template of all
/// but the first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InstrRun<'a> {
    pub(crate) addrs: &'a [u64],
    pub(crate) sizes: &'a [u32],
    /// Meta and size bytes of fetches `1..`.
    pub(crate) metas: &'a [u8],
    pub(crate) sizes8: &'a [u8],
    /// Their address delta bytes, concatenated.
    pub(crate) deltas: &'a [u8],
}

impl InstrRun<'_> {
    /// Fetches in the run.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.addrs.len()
    }

    /// The address of its last fetch: the pc of the data references after it.
    #[inline]
    pub(crate) fn last(&self) -> u64 {
        self.addrs[self.addrs.len() - 1]
    }
}

impl InstrRuns {
    /// Runs defined.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Forgets every run (a new program's stream numbers its runs from 0 again).
    pub(crate) fn clear(&mut self) {
        *self = InstrRuns::default();
    }

    /// Defines the next run: fetches at `addrs` of `sizes` bytes (1-255 each, at least one).
    pub(crate) fn push(&mut self, fetches: impl IntoIterator<Item = (u64, u32)>) {
        let first = self.addrs.len();
        let deltas = self.deltas.len();
        for (addr, size) in fetches {
            debug_assert!((1..=255).contains(&size), "an instruction of {size} bytes");
            if self.addrs.len() > first {
                let delta = addr.wrapping_sub(self.addrs[self.addrs.len() - 1]);
                let len = byte_len(delta);
                self.metas.push(len as u8 | PC_LAST_INSTR);
                self.sizes8.push(size as u8);
                self.deltas.extend_from_slice(&delta.to_le_bytes()[..len]);
            }
            self.addrs.push(addr);
            self.sizes.push(size);
        }
        let len = self.addrs.len() - first;
        assert!(len > 0, "a run of no instructions");
        self.entries.push(Entry {
            first: first as u32,
            len: len as u32,
            tail: (first - self.entries.len()) as u32,
            deltas: deltas as u32,
            deltas_end: self.deltas.len() as u32,
        });
    }

    /// Run `id`, if defined.
    #[inline(always)]
    pub(crate) fn get(&self, id: u64) -> Option<InstrRun<'_>> {
        let e = *self.entries.get(usize::try_from(id).ok()?)?;
        let (first, len, tail) = (e.first as usize, e.len as usize, e.tail as usize);
        Some(InstrRun {
            addrs: &self.addrs[first..first + len],
            sizes: &self.sizes[first..first + len],
            metas: &self.metas[tail..tail + len - 1],
            sizes8: &self.sizes8[tail..tail + len - 1],
            deltas: &self.deltas[e.deltas as usize..e.deltas_end as usize],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::MAX_BLOCK_LEN;
    use super::super::encode::{BlockEncoder, Item, ItemSource};
    use super::*;
    use crate::access::AccessKind;
    use proptest::prelude::*;

    /// Items from a list, runs given only when they fit (as the tool's source does).
    struct List<'a> {
        items: Vec<Item<'a>>,
        at: usize,
    }

    impl<'a> ItemSource<'a> for List<'a> {
        fn next_item(&mut self, room: usize) -> Option<Item<'a>> {
            let item = *self.items.get(self.at)?;
            if let Item::Run(run) = item {
                assert!(run.len() <= room, "a run given without room");
            }
            self.at += 1;
            Some(item)
        }
    }

    proptest! {
        /// A block written with runs' templates is byte for byte the block written access by
        /// access: the templates are only a faster way to the same encoding.
        #[test]
        fn templates_equal_accesses(
            defs in prop::collection::vec(
                prop::collection::vec((0u64..1 << 20, 1u32..16, any::<bool>()), 1..40), 1..8),
            picks in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), any::<u64>()), 0..300),
        ) {
            let mut runs = InstrRuns::default();
            for def in &defs {
                // Sequential fetches, or a jump where the flag says so.
                let mut addr = 0x40_0000;
                runs.push(def.iter().map(|&(jump, size, is_jump)| {
                    if is_jump { addr = jump }
                    let f = (addr, size);
                    addr += u64::from(size);
                    f
                }));
            }
            let mut items = Vec::new();
            let mut flat = Vec::new();
            for (i, is_run, x) in &picks {
                if *is_run {
                    let run = runs.get(i.index(runs.len()) as u64).unwrap();
                    items.push(Item::Run(run));
                    for (&a, &s) in run.addrs.iter().zip(run.sizes) {
                        flat.push((a, s, AccessKind::Instr, a));
                    }
                } else {
                    let kind = [AccessKind::Load, AccessKind::Store, AccessKind::Modify][(*x % 3) as usize];
                    let pc = flat.last().map_or(u64::MAX, |f: &(u64, u32, AccessKind, u64)| f.3);
                    let access = (x >> 8, (1 + x % 300) as u32, kind, pc);
                    items.push(Item::Access(access.0, access.1, access.2, access.3));
                    flat.push(access);
                }
            }
            let mut fast = BlockEncoder::default();
            let n = fast.push_from(&mut List { items, at: 0 }, MAX_BLOCK_LEN);
            let mut slow = BlockEncoder::default();
            prop_assert_eq!(slow.push_iter(flat.iter().copied()), n);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.take(&mut a);
            slow.take(&mut b);
            prop_assert_eq!(a, b);
        }
    }
}
