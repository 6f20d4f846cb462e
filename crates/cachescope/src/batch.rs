//! [`Batch`]: a run of accesses stored column by column.
//!
//! Readers fill batches and analyses consume them. Columns (structure of arrays) let an analysis
//! that needs only addresses scan one dense slice, and let the native format decode each column
//! with a tight loop.

use crate::access::{Access, AccessKind};

/// The number of accesses readers aim to put in one batch: large enough that per-batch costs
/// vanish, small enough (1.5 MiB of columns) to stay in L2/L3 while every analysis reads it.
pub const BATCH_LEN: usize = 64 * 1024;

/// Sentinel in [`Batch::pcs`] for "instruction address unknown".
pub const NO_PC: u64 = 0;

/// Accesses in trace order, one column per field. All four columns always have the same length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Byte address of each access.
    pub addrs: Vec<u64>,
    /// Size in bytes of each access (at least 1).
    pub sizes: Vec<u32>,
    /// Kind of each access.
    pub kinds: Vec<AccessKind>,
    /// Instruction address of each access, or [`NO_PC`] when unknown.
    pub pcs: Vec<u64>,
}

impl Batch {
    /// An empty batch with room for [`BATCH_LEN`] accesses.
    pub fn new() -> Batch {
        Batch::with_capacity(BATCH_LEN)
    }

    /// An empty batch with room for `n` accesses.
    pub fn with_capacity(n: usize) -> Batch {
        Batch {
            addrs: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            pcs: Vec::with_capacity(n),
        }
    }

    /// Number of accesses.
    #[inline]
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// True when the batch holds no access.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// True once the batch holds [`BATCH_LEN`] accesses or more.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.addrs.len() >= BATCH_LEN
    }

    /// Removes every access, keeping the allocations.
    pub fn clear(&mut self) {
        self.addrs.clear();
        self.sizes.clear();
        self.kinds.clear();
        self.pcs.clear();
    }

    /// Keeps the accesses before the `n + 1`-th one that `counted` accepts (all of them if
    /// there are no more than `n`), and returns how many accepted ones were kept. For prefixes of a trace
    /// measured in counted references (data references, say).
    pub fn keep_counted(&mut self, n: u64, counted: impl Fn(AccessKind) -> bool) -> u64 {
        let mut seen = 0;
        for (i, &k) in self.kinds.iter().enumerate() {
            if seen == n {
                self.truncate(i);
                return seen;
            }
            seen += u64::from(counted(k));
        }
        seen
    }

    /// Keeps the first `len` accesses.
    pub fn truncate(&mut self, len: usize) {
        self.addrs.truncate(len);
        self.sizes.truncate(len);
        self.kinds.truncate(len);
        self.pcs.truncate(len);
    }

    /// Appends one access.
    #[inline]
    pub fn push(&mut self, a: Access) {
        self.push_raw(a.addr, a.size, a.kind, a.pc.unwrap_or(NO_PC));
    }

    /// Appends one access given as columns (`pc` = [`NO_PC`] when unknown).
    #[inline]
    pub fn push_raw(&mut self, addr: u64, size: u32, kind: AccessKind, pc: u64) {
        self.addrs.push(addr);
        self.sizes.push(size);
        self.kinds.push(kind);
        self.pcs.push(pc);
    }

    /// The access at `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Access {
        let pc = self.pcs[i];
        Access {
            addr: self.addrs[i],
            size: self.sizes[i],
            kind: self.kinds[i],
            pc: (pc != NO_PC).then_some(pc),
        }
    }

    /// The accesses in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Access> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl Extend<Access> for Batch {
    fn extend<I: IntoIterator<Item = Access>>(&mut self, iter: I) {
        for a in iter {
            self.push(a);
        }
    }
}

impl FromIterator<Access> for Batch {
    fn from_iter<I: IntoIterator<Item = Access>>(iter: I) -> Batch {
        let mut b = Batch::with_capacity(0);
        b.extend(iter);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_round_trip() {
        let a = Access {
            addr: 0x1000,
            size: 8,
            kind: AccessKind::Modify,
            pc: Some(0x400),
        };
        let b = Access::load(0x2000, 4);
        let batch: Batch = [a, b].into_iter().collect();
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.iter().collect::<Vec<_>>(), vec![a, b]);
    }

    #[test]
    fn keep_counted_cuts_after_the_nth_counted_access() {
        let i = Access {
            kind: AccessKind::Instr,
            ..Access::load(0x400, 4)
        };
        let d = |a| Access::load(a, 8);
        let all: Batch = [i, d(0), i, d(8), i, d(16)].into_iter().collect();
        let data = |k| k != AccessKind::Instr;
        for (n, kept, len) in [(0, 0, 0), (1, 1, 2), (2, 2, 4), (3, 3, 6), (9, 3, 6)] {
            let mut b = all.clone();
            assert_eq!(b.keep_counted(n, data), kept, "n = {n}");
            assert_eq!(b.len(), len, "n = {n}");
            assert_eq!(
                b.iter().collect::<Vec<_>>(),
                all.iter().take(len).collect::<Vec<_>>()
            );
        }
    }
}
