//! Each thread's part of a [`MultiCore`]'s counts: the lookups its references made at each
//! level (a shared level's misses split by thread, which the co-run check of
//! `corun --split-threads --simulate` compares with its predictions).

use super::MultiCore;
use super::unit::{CacheCounts, Class};

/// One level's lookups by one thread. Field names are a public contract
/// (`simulate --cores --json`, `threads`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ThreadLevel {
    /// The level's name.
    pub level: String,
    /// Lookups the thread's references made at the level, and their outcomes (the counts of
    /// the thread's misses by class; `invalidations` and `transfers` are the caches').
    pub refs: u64,
    /// Hits.
    pub hits: u64,
    /// Misses (cold + capacity + conflict + coherence).
    pub misses: u64,
    /// First references.
    pub cold: u64,
    /// Capacity misses.
    pub capacity: u64,
    /// Conflict misses.
    pub conflict: u64,
    /// Coherence misses.
    pub coherence: u64,
    /// misses / refs.
    pub miss_ratio: f64,
}

/// One thread's references in the machine.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ThreadReport {
    /// The thread.
    pub thread: crate::ThreadId,
    /// Its core.
    pub core: u32,
    /// Each level's lookups by it, top down (levels it never reached included, at 0).
    pub levels: Vec<ThreadLevel>,
}

impl MultiCore {
    /// Counts a lookup of class `c` at level `level` by the thread in place `slot`.
    #[inline]
    pub(super) fn tally(&mut self, slot: usize, level: usize, c: Class) {
        if self.tallies.len() <= slot {
            let levels = self.level_names().len();
            self.tallies
                .resize_with(slot + 1, || vec![CacheCounts::default(); levels]);
        }
        self.tallies[slot][level].count(c);
    }

    /// Each thread's lookups per level, in order of first appearance.
    pub fn threads(&self) -> Vec<ThreadReport> {
        let names = self.level_names();
        self.placement
            .threads()
            .iter()
            .enumerate()
            .map(|(slot, p)| ThreadReport {
                thread: p.thread,
                core: p.core,
                levels: names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| {
                        let c = self.tallies.get(slot).map(|t| t[k]).unwrap_or_default();
                        ThreadLevel {
                            level: name.clone(),
                            refs: c.refs,
                            hits: c.hits,
                            misses: c.misses,
                            cold: c.cold,
                            capacity: c.capacity,
                            conflict: c.conflict,
                            coherence: c.coherence,
                            miss_ratio: c.miss_ratio(),
                        }
                    })
                    .collect(),
            })
            .collect()
    }

    /// The levels' names, top down (`L1I` first when the first level is split).
    pub(super) fn level_names(&self) -> Vec<String> {
        self.config
            .l1i
            .iter()
            .map(|_| "L1I".to_owned())
            .chain(self.config.levels.iter().map(|l| l.name.clone()))
            .collect()
    }
}
