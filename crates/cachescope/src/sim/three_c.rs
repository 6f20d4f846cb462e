//! The 3C miss classification (Hill & Smith, "Evaluating associativity in CPU caches",
//! IEEE TC 38(12), 1989).
//!
//! For a cache of C lines fed a stream of line references, a miss is
//! - **cold** (compulsory) when the stream has never referenced the line before;
//! - **capacity** when it is not cold and a fully associative LRU cache of the same C lines,
//!   fed the same stream, misses too;
//! - **conflict** otherwise: the fully associative cache would have hit, so the miss comes from
//!   the mapping to sets (or from a policy worse than LRU).
//!
//! The classifier keeps the set of lines seen and that LRU shadow, both O(1) per reference
//! through hash maps, so it costs a few times a small cache's own simulation; it is off unless
//! asked for. A set-associative or non-LRU cache may hit where the shadow misses; such hits are
//! not misses and are not classified. cold + capacity + conflict = misses, always.

use hashbrown::HashSet;

use super::fully::FullyAssoc;
use crate::error::Result;

/// Why a miss happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MissClass {
    /// First reference to the line.
    Cold,
    /// A fully associative LRU cache of the same capacity misses too.
    Capacity,
    /// A fully associative LRU cache of the same capacity would have hit.
    Conflict,
}

/// Miss counts by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ThreeCCounts {
    /// First references.
    pub cold: u64,
    /// Misses a fully associative LRU cache of the same capacity also has.
    pub capacity: u64,
    /// The remaining misses.
    pub conflict: u64,
}

impl ThreeCCounts {
    /// Adds one miss of class `class`.
    #[inline]
    pub fn add(&mut self, class: MissClass) {
        match class {
            MissClass::Cold => self.cold += 1,
            MissClass::Capacity => self.capacity += 1,
            MissClass::Conflict => self.conflict += 1,
        }
    }

    /// cold + capacity + conflict.
    pub fn total(&self) -> u64 {
        self.cold + self.capacity + self.conflict
    }
}

/// Classifies the misses of one cache. Feed it every reference the cache sees, hits included.
#[derive(Clone, Debug)]
pub struct ThreeC {
    seen: HashSet<u64, foldhash::fast::FixedState>,
    /// `seen` grows with the distinct lines: charged to the [`crate::budget`].
    charge: crate::budget::Charge,
    shadow: FullyAssoc,
}

impl ThreeC {
    /// A classifier for a cache of `lines` lines.
    pub fn new(lines: u64) -> Result<ThreeC> {
        Ok(ThreeC {
            seen: HashSet::default(),
            charge: crate::budget::Charge::default(),
            shadow: FullyAssoc::lru_lines(lines)?,
        })
    }

    /// Records a reference to `line` that hit (`hit`) or missed in the real cache; returns the
    /// class of a miss.
    #[inline]
    pub fn observe(&mut self, line: u64, hit: bool) -> Option<MissClass> {
        let (first, shadow_hit) = self.facts(line);
        if hit {
            None
        } else if first {
            Some(MissClass::Cold)
        } else if shadow_hit {
            Some(MissClass::Conflict)
        } else {
            Some(MissClass::Capacity)
        }
    }

    /// Records a reference to `line` and returns what a class rests on: whether it is the
    /// line's first reference, and whether the shadow hit. For classifiers that add a class
    /// of their own (the multi-core model's coherence misses).
    #[inline]
    pub(crate) fn facts(&mut self, line: u64) -> (bool, bool) {
        let shadow_hit = self.shadow.access(line);
        // A line the shadow holds was seen: the set is only asked about the others.
        let first = !shadow_hit && self.seen.insert(line);
        if first && self.seen.len() == self.seen.capacity() {
            // Full: the next new line reallocates. Charge the size it will grow to, so a
            // limit stops the pass (at its next batch) before the growth, not after.
            self.charge.set(self.seen.allocation_size() * 2);
        }
        (first, shadow_hit)
    }
}
