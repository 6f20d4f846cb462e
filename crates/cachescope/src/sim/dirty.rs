//! [`Writes`] and [`Dirty`]: what a store does to a cache that writes back.
//!
//! A write-back cache marks a line **dirty** when a store or a modify (a read and a write of
//! one location) hits or fills it; when a dirty line leaves the cache it is written to the next
//! level (or to memory): one **write-back**. Under **write-allocate** (the default, and what
//! every simulator here did before write-backs were tracked) a store that misses fills its
//! line like a load; under **no-write-allocate** it fills nothing: the write goes on to the
//! next level and the cache is left as it was (a store hit still dirties the line). A modify
//! reads first, so it fills under both. docs/hardware.md has the definitions.
//!
//! The dirty lines are kept beside the cache in a hash set rather than in its ways, so the
//! replacement code and its fast paths stay as they are; a simulation that does not ask for
//! write-backs pays nothing.

use hashbrown::HashSet;

use super::Outcome;
use super::cache::Cache;
use crate::access::AccessKind;

/// How a cache treats stores. The default is write-allocate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Writes {
    /// A store that misses fills its line (write-allocate); false: it fills nothing
    /// (no-write-allocate, the store goes to the next level).
    pub allocate: bool,
}

impl Default for Writes {
    fn default() -> Writes {
        Writes { allocate: true }
    }
}

/// What a reference asks of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A load or an instruction fetch.
    Read,
    /// A store.
    Write,
    /// A modify: read, then written.
    Modify,
}

impl Op {
    /// The op of a trace reference.
    #[inline]
    pub fn of(kind: AccessKind) -> Op {
        match kind {
            AccessKind::Store => Op::Write,
            AccessKind::Modify => Op::Modify,
            AccessKind::Load | AccessKind::Instr => Op::Read,
        }
    }

    /// True when the line ends up written (dirty).
    #[inline]
    pub fn writes(self) -> bool {
        self != Op::Read
    }
}

/// What one lookup in a write-back cache did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The line was cached.
    pub hit: bool,
    /// The line a fill evicted, dirty or not.
    pub evicted: Option<u64>,
    /// A dirty line this lookup's fill evicted: it is written to the next level.
    pub writeback: Option<u64>,
}

impl Lookup {
    /// A lookup in a cache that tracks no dirty line: its outcome, no write-back.
    #[inline]
    pub fn clean(outcome: Outcome) -> Lookup {
        match outcome {
            Outcome::Hit => Lookup {
                hit: true,
                evicted: None,
                writeback: None,
            },
            Outcome::Miss { evicted } => Lookup {
                hit: false,
                evicted,
                writeback: None,
            },
        }
    }

    /// As the cache's outcome (a no-write-allocate store that missed filled nothing: a miss
    /// that evicted nothing).
    #[inline]
    pub fn outcome(self) -> Outcome {
        if self.hit {
            Outcome::Hit
        } else {
            Outcome::Miss {
                evicted: self.evicted,
            }
        }
    }
}

/// The dirty lines of one cache and how it treats stores.
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    writes: Writes,
    lines: HashSet<u64, foldhash::fast::FixedState>,
}

impl Dirty {
    /// No dirty line yet.
    pub fn new(writes: Writes) -> Dirty {
        Dirty {
            writes,
            lines: HashSet::default(),
        }
    }

    /// How this cache treats stores.
    pub fn writes(&self) -> Writes {
        self.writes
    }

    /// Looks `line` up in `cache` for `op`: a fill unless a no-write-allocate store misses;
    /// the line becomes dirty when written; a dirty victim is a write-back.
    #[inline]
    pub fn lookup(&mut self, cache: &mut Cache, line: u64, op: Op) -> Lookup {
        if op == Op::Write && !self.writes.allocate && !cache.contains(line) {
            return Lookup {
                hit: false,
                evicted: None,
                writeback: None,
            };
        }
        self.fill(cache, line, op.writes())
    }

    /// Puts `line` in `cache` whatever the policy (a hit refreshes it), dirty when `written`:
    /// a demand fill, or a write-back arriving from the level above.
    #[inline]
    pub fn fill(&mut self, cache: &mut Cache, line: u64, written: bool) -> Lookup {
        let outcome = cache.access_outcome(line);
        if written {
            self.lines.insert(line);
        }
        let mut lookup = Lookup::clean(outcome);
        lookup.writeback = lookup.evicted.filter(|v| self.lines.remove(v));
        lookup
    }

    /// `line` left the cache other than by eviction (invalidated): true when it was dirty,
    /// so its data must be written back or handed on.
    pub fn forget(&mut self, line: u64) -> bool {
        self.lines.remove(&line)
    }

    /// True when `line` is cached and dirty.
    pub fn is_dirty(&self, line: u64) -> bool {
        self.lines.contains(&line)
    }
}
