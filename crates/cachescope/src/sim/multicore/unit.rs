//! [`Unit`]: one cache of the machine (a core's private cache or a shared one) with its four
//! miss classes and its counts.
//!
//! The classes extend the 3C of `three_c.rs` by one (docs/threads.md, "Miss classes"): a
//! miss is **cold** on the cache's first reference to the line; otherwise **capacity** when
//! the fully associative LRU shadow (same capacity, fed every reference this cache sees and
//! never invalidated) misses too; otherwise **coherence** when this cache lost the line to
//! another core's write since it last held it; otherwise **conflict**.

use hashbrown::HashSet;

use crate::error::Result;
use crate::sim::{Cache, Geometry, Outcome, Policy, ThreeC};

/// What one cache saw. Field names are a public contract (`simulate --cores --json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheCounts {
    /// Lines looked up (each reference that reached the cache looks up one line).
    pub refs: u64,
    /// Lookups that found the line.
    pub hits: u64,
    /// Lookups that did not (hits + misses = refs).
    pub misses: u64,
    /// Misses on the cache's first reference to the line.
    pub cold: u64,
    /// Misses a fully associative LRU cache of the same capacity has too.
    pub capacity: u64,
    /// The remaining misses: cold + capacity + conflict + coherence = misses.
    pub conflict: u64,
    /// Misses on a line lost to another core's write since the cache last held it, which
    /// that fully associative cache would have kept.
    pub coherence: u64,
    /// Lines this cache lost because another core wrote them.
    pub invalidations: u64,
    /// Misses of every private level of its core that another core's modified copy served
    /// (counted at the core's last private level; 0 at shared levels).
    pub transfers: u64,
}

impl CacheCounts {
    /// misses / refs (0 when nothing reached the cache).
    pub fn miss_ratio(&self) -> f64 {
        if self.refs == 0 {
            0.0
        } else {
            self.misses as f64 / self.refs as f64
        }
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &CacheCounts) {
        self.refs += other.refs;
        self.hits += other.hits;
        self.misses += other.misses;
        self.cold += other.cold;
        self.capacity += other.capacity;
        self.conflict += other.conflict;
        self.coherence += other.coherence;
        self.invalidations += other.invalidations;
        self.transfers += other.transfers;
    }
}

/// One cache with its classifier.
#[derive(Clone, Debug)]
pub(super) struct Unit {
    pub(super) cache: Cache,
    classes: ThreeC,
    /// Lines taken by another core's write and not filled again since.
    lost: HashSet<u64, foldhash::fast::FixedState>,
    pub(super) counts: CacheCounts,
}

impl Unit {
    pub(super) fn new(geometry: Geometry, policy: Policy) -> Result<Unit> {
        Ok(Unit {
            cache: Cache::new(geometry, policy)?,
            classes: ThreeC::new(geometry.lines())?,
            lost: HashSet::default(),
            counts: CacheCounts::default(),
        })
    }

    /// Looks `line` up, filling it on a miss; counts and classifies. The bool is true for a
    /// coherence miss.
    #[inline]
    pub(super) fn access(&mut self, line: u64) -> (Outcome, bool) {
        let outcome = self.cache.access_outcome(line);
        let (first, shadow_hit) = self.classes.facts(line);
        let c = &mut self.counts;
        c.refs += 1;
        if outcome.is_hit() {
            c.hits += 1;
            return (outcome, false);
        }
        c.misses += 1;
        // A line the cache never saw cannot have been taken from it.
        let lost = !first && !self.lost.is_empty() && self.lost.remove(&line);
        let coherence = if first {
            c.cold += 1;
            false
        } else if !shadow_hit {
            c.capacity += 1;
            false
        } else if lost {
            c.coherence += 1;
            true
        } else {
            c.conflict += 1;
            false
        };
        (outcome, coherence)
    }

    /// Removes `line` because another core wrote it; true if it was cached.
    #[inline]
    pub(super) fn invalidate(&mut self, line: u64) -> bool {
        let had = self.cache.invalidate(line);
        if had {
            self.counts.invalidations += 1;
            self.lost.insert(line);
        }
        had
    }
}
