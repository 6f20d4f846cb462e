//! The non-inclusive path with dirty lines and prefetchers: a demand down the levels, the
//! write-backs it causes written down, the lines the levels prefetched fetched through the
//! levels below them (docs/hardware.md).

use super::{Hierarchy, Served};
use crate::sim::dirty::Op;

impl Hierarchy {
    /// A non-inclusive lookup: the line is asked of each level until one holds it, each
    /// missing level filling on its own miss; a dirty victim (of a demand or a prefetch fill)
    /// is written into the level below first.
    pub(super) fn non_inclusive_line(
        &mut self,
        line: u64,
        side: usize,
        op: Op,
        addr: u64,
        pc: u64,
    ) -> Served {
        let served = self.demand_path(line, side, op, addr, pc);
        self.prefetches_down(side);
        served
    }

    /// The lines the levels prefetched, asked of the levels below each (after the demand's own
    /// path): filled where absent, down to the first level that holds them.
    fn prefetches_down(&mut self, side: usize) {
        for k in 0..=self.lower.len() {
            let level = if k == 0 {
                &mut self.l1[side]
            } else {
                &mut self.lower[k - 1]
            };
            if level.issued.is_empty() {
                continue;
            }
            let lines = std::mem::take(&mut level.issued);
            for &l in &lines {
                self.fetch_below(k, l);
            }
        }
    }

    /// A prefetched line asked of lower levels `k…`: each fills it until one holds it.
    fn fetch_below(&mut self, mut k: usize, line: u64) {
        while k < self.lower.len() {
            let (here, writeback) = self.lower[k].install(line);
            self.write_back(k + 1, writeback);
            if here {
                break;
            }
            k += 1;
        }
    }

    /// A demand's path down the levels (see [`Hierarchy::non_inclusive_line`]).
    fn demand_path(&mut self, line: u64, side: usize, op: Op, addr: u64, pc: u64) -> Served {
        let l1 = self.l1[side].demand(line, addr, pc, op);
        self.write_back(0, l1.writeback);
        while let Some(v) = self.l1[side].spilled.pop() {
            self.write_back(0, Some(v));
        }
        if l1.hit {
            return Served::L1;
        }
        // A store that did not allocate goes down as a store; a fill is fetched as a read.
        let allocate = self.l1[side].writes_allocate();
        let below = if op == Op::Write && !allocate {
            Op::Write
        } else {
            Op::Read
        };
        for k in 0..self.lower.len() {
            let got = self.lower[k].demand(line, addr, pc, below);
            self.write_back(k + 1, got.writeback);
            while let Some(v) = self.lower[k].spilled.pop() {
                self.write_back(k + 1, Some(v));
            }
            if got.hit {
                return Served::lower(k);
            }
        }
        Served::Memory
    }

    /// Writes `line` (a dirty victim) into lower level `k`, and each dirty line that evicts
    /// on down; past the last level it goes to memory.
    fn write_back(&mut self, mut k: usize, mut line: Option<u64>) {
        while let (Some(v), Some(level)) = (line, self.lower.get_mut(k)) {
            line = level.receive_writeback(v);
            k += 1;
        }
    }
}
