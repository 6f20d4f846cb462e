//! The ground truth: an exact two-level simulation. A fully-associative LRU L1 of `l` lines
//! feeds any number of fully-associative L2s (all LRU or all random), each seeing only the L1
//! misses (non-inclusive: an L2 eviction leaves the L1 alone, an L1 hit does not touch the L2).
//! It also records the exact L2 reuse-distance histogram (StatCache distance: L2 references in
//! between), the quantity Eq. 2 predicts.

use hashbrown::HashMap;

use super::{check_policy, l2_lines};
use crate::access::{AccessKind, LineSize};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::{Layout, LogHistogram};
use crate::sim::{FullyAssoc, Geometry, Policy, TwoLevelResult};

/// The two-level simulation as an [`Analysis`] over data references (instruction fetches are
/// skipped, as in [`crate::reuse::Options`]'s default).
#[derive(Clone, Debug)]
pub struct TwoLevelAnalysis {
    shift: u32,
    line_size: u64,
    policy: Policy,
    l1_lines: u64,
    l1: FullyAssoc,
    l2: Vec<FullyAssoc>,
    l2_sizes: Vec<u64>,
    l2_misses: Vec<u64>,
    /// Line → index of its last L2 reference (the number of L2 references before it).
    last_l2: HashMap<u64, u64, foldhash::fast::FixedState>,
    /// `last_l2` grows with the distinct lines: charged to the [`crate::budget`].
    charge: crate::budget::Charge,
    refs: u64,
    l2_refs: u64,
    reuse: LogHistogram,
}

impl TwoLevelAnalysis {
    /// An L1 of `l1_lines` lines and one L2 per size of `l2_sizes_bytes` (rounded down to
    /// lines), all under `policy` (LRU, or random: L2 number `i` draws from `seed + i`).
    /// Errors on a 0-line L1 or L2, a bad line size, or another policy.
    pub fn new(
        line_size: u64,
        l1_lines: u64,
        l2_sizes_bytes: &[u64],
        policy: Policy,
    ) -> Result<TwoLevelAnalysis> {
        let ls = LineSize::new(line_size)?;
        check_policy(policy)?;
        if l1_lines == 0 {
            return Err(Error::InvalidParameter {
                name: "L1 size",
                message: "0 lines: the L1 holds at least one line".into(),
            });
        }
        let lines = l2_lines(line_size, l2_sizes_bytes)?;
        let l1 = FullyAssoc::new(
            Geometry::fully_associative(l1_lines * line_size, line_size)?,
            Policy::Lru,
        )?;
        let l2 = lines
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let p = match policy {
                    Policy::Random { seed } => Policy::Random {
                        seed: seed.wrapping_add(i as u64),
                    },
                    p => p,
                };
                FullyAssoc::new(Geometry::fully_associative(n * line_size, line_size)?, p)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(TwoLevelAnalysis {
            shift: ls.shift(),
            line_size,
            policy,
            l1_lines,
            l1,
            l2_misses: vec![0; l2.len()],
            l2,
            l2_sizes: l2_sizes_bytes.to_vec(),
            last_l2: HashMap::default(),
            charge: crate::budget::Charge::default(),
            refs: 0,
            l2_refs: 0,
            reuse: LogHistogram::new(Layout::DEFAULT),
        })
    }

    /// The counts so far.
    pub fn finish(&self) -> TwoLevelResult {
        TwoLevelResult {
            line_size: self.line_size,
            policy: self.policy.name().into(),
            l1_lines: self.l1_lines,
            refs: self.refs,
            l1_misses: self.l2_refs,
            cold: self.last_l2.len() as u64,
            l2_sizes_bytes: self.l2_sizes.clone(),
            l2_misses: self.l2_misses.clone(),
            l2_reuse: self.reuse.clone(),
        }
    }

    #[inline]
    fn access(&mut self, line: u64) {
        self.refs += 1;
        if self.l1.access(line) {
            return;
        }
        let now = self.l2_refs;
        self.l2_refs += 1;
        if let Some(prev) = self.last_l2.insert(line, now) {
            self.reuse.record(now - prev - 1);
        } else if self.last_l2.len() == self.last_l2.capacity() {
            // The next new line reallocates: a limit stops the pass at the next batch.
            self.charge.set(self.last_l2.allocation_size() * 2);
        }
        for (c, m) in self.l2.iter_mut().zip(&mut self.l2_misses) {
            if !c.access(line) {
                *m += 1;
            }
        }
    }
}

impl Analysis for TwoLevelAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for (&addr, &kind) in batch.addrs.iter().zip(&batch.kinds) {
            if kind != AccessKind::Instr {
                self.access(addr >> self.shift);
            }
        }
    }
}
