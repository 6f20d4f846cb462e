//! [`MissStats`] and the cache level that counts them.
//!
//! Counts are kept at two grains. A *reference* is one trace access reaching the level; it
//! misses when any line it touches misses (Cachegrind's rule: an access straddling two lines is
//! one reference and at most one miss per level). A *line access* is one line looked up; with
//! the first-byte mapping of docs/definitions.md the two grains are equal. The 3C classes
//! count line misses. A level that tracks dirty lines ([`Dirty`]) also counts its write-backs
//! and those it receives from the level above, apart from the demand counts.

use super::Outcome;
use super::cache::Cache;
use super::dirty::{Dirty, Lookup, Op, Writes};
use super::geometry::Geometry;
use super::policy::Policy;
use super::prefetcher::{PrefetchPolicy, Prefetching};
use super::three_c::{ThreeC, ThreeCCounts};
use super::utilization::Utilization;
use crate::error::Result;

/// What one cache level saw. Field names are a public contract (`--json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MissStats {
    /// References that reached this level.
    pub refs: u64,
    /// References that missed (at most one per reference).
    pub misses: u64,
    /// Lines looked up (refs plus the second lines of straddling references).
    pub line_accesses: u64,
    /// Lines that missed.
    pub line_misses: u64,
    /// Line misses by class, when classification was asked for (they sum to `line_misses`).
    pub three_c: Option<ThreeCCounts>,
    /// Dirty lines evicted, each written to the next level or memory (present when write-backs
    /// are tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks: Option<u64>,
    /// Write-backs the level above wrote into this one: installations, not counted in `refs`
    /// (present when write-backs are tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks_received: Option<u64>,
    /// Lines this level's prefetcher brought in (present when it has one; docs/hardware.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetches: Option<u64>,
    /// Prefetched lines a demand reference hit before they were evicted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub useful_prefetches: Option<u64>,
    /// Prefetched lines evicted before any demand reference hit them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub useless_prefetches: Option<u64>,
    /// Bytes of the lines filled into this level that a reference touched while they were
    /// resident (present when utilization is tracked; docs/hardware.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes of every line filled into this level (line size × fills, the lines still
    /// resident at the end included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
}

impl MissStats {
    /// misses / refs (0 when nothing reached the level). Cold misses included.
    pub fn miss_ratio(&self) -> f64 {
        if self.refs == 0 {
            0.0
        } else {
            self.misses as f64 / self.refs as f64
        }
    }

    /// used_bytes / fetched_bytes, when utilization was tracked (0 when nothing was fetched).
    pub fn utilization(&self) -> Option<f64> {
        Some(super::utilization::ratio(
            self.used_bytes?,
            self.fetched_bytes?,
        ))
    }

    /// refs − misses.
    pub fn hits(&self) -> u64 {
        self.refs - self.misses
    }
}

/// A cache with its counters and optional 3C classifier.
#[derive(Clone, Debug)]
pub(super) struct Level {
    pub(super) cache: Cache,
    three_c: Option<ThreeC>,
    dirty: Option<Dirty>,
    prefetch: Option<Prefetching>,
    /// The touched bytes of the resident lines, when utilization is tracked.
    usage: Option<Utilization>,
    /// Write-backs of prefetch fills, for the hierarchy to write down.
    pub(super) spilled: Vec<u64>,
    /// Lines this level prefetched, for the hierarchy to ask of the levels below.
    pub(super) issued: Vec<u64>,
    pub(super) stats: MissStats,
}

impl Level {
    /// A level; with `writes` it tracks dirty lines and counts write-backs, with a `prefetch`
    /// policy other than none it prefetches.
    pub(super) fn tracking(
        geometry: Geometry,
        policy: Policy,
        three_c: bool,
        writes: Option<Writes>,
        prefetch: PrefetchPolicy,
    ) -> Result<Level> {
        let prefetching = prefetch != PrefetchPolicy::None;
        Ok(Level {
            dirty: writes.map(Dirty::new),
            prefetch: prefetching.then(|| Prefetching::new(prefetch, geometry.line_size().shift())),
            spilled: Vec::new(),
            issued: Vec::new(),
            usage: None,
            cache: Cache::new(geometry, policy)?,
            three_c: if three_c {
                Some(ThreeC::new(geometry.lines())?)
            } else {
                None
            },
            stats: MissStats {
                three_c: three_c.then(ThreeCCounts::default),
                writebacks: writes.map(|_| 0),
                writebacks_received: writes.map(|_| 0),
                prefetches: prefetching.then_some(0),
                useful_prefetches: prefetching.then_some(0),
                useless_prefetches: prefetching.then_some(0),
                ..MissStats::default()
            },
        })
    }

    /// Looks up one line, counting it and classifying a miss.
    #[inline]
    pub(super) fn line(&mut self, line: u64) -> Outcome {
        let outcome = self.cache.access_outcome(line);
        self.count_line(line, outcome.is_hit());
        if let (Some(u), Outcome::Miss { evicted }) = (&mut self.usage, outcome) {
            u.filled(line, evicted);
        }
        outcome
    }

    /// Tracks the touched bytes of every line filled from now on (call before the first
    /// access: lines already resident are not tracked).
    pub(super) fn track_utilization(&mut self) {
        let line_size = self.cache.geometry().line_size();
        self.usage = Some(Utilization::new(line_size));
    }

    /// Marks a reference's bytes on the lines of this level holding them.
    #[inline]
    pub(super) fn touch(&mut self, addr: u64, size: u32) {
        if let Some(u) = &mut self.usage {
            u.touch(addr, size);
        }
    }

    /// Invalidates `line` (it leaves without a fill): true when it was cached.
    pub(super) fn invalidate(&mut self, line: u64) -> bool {
        if let Some(u) = &mut self.usage {
            u.left(line);
        }
        self.cache.invalidate(line)
    }

    /// Puts `line` in the cache whatever the policy, not counted (an exclusive level's victim
    /// fill).
    pub(super) fn place(&mut self, line: u64) -> Outcome {
        let outcome = self.cache.access_outcome(line);
        if let (Some(u), Outcome::Miss { evicted }) = (&mut self.usage, outcome) {
            u.filled(line, evicted);
        }
        outcome
    }

    /// The counts, with the utilization's totals when tracked.
    pub(super) fn stats(&self) -> MissStats {
        let mut stats = self.stats.clone();
        if let Some(u) = &self.usage {
            let (used, fetched) = u.totals();
            (stats.used_bytes, stats.fetched_bytes) = (Some(used), Some(fetched));
        }
        stats
    }

    /// Looks up one line for `op` and counts it: under write-back tracking a store may fill
    /// nothing (no-write-allocate) and a dirty victim is a write-back; otherwise as
    /// [`Level::line`].
    #[inline]
    pub(super) fn line_op(&mut self, line: u64, op: Op) -> Lookup {
        let Some(dirty) = &mut self.dirty else {
            let (hit, evicted) = match self.line(line) {
                Outcome::Hit => (true, None),
                Outcome::Miss { evicted } => (false, evicted),
            };
            return Lookup {
                hit,
                evicted,
                writeback: None,
            };
        };
        let allocate = dirty.writes().allocate;
        let lookup = dirty.lookup(&mut self.cache, line, op);
        self.count_line(line, lookup.hit);
        self.count_writeback(lookup);
        // Every miss fills but a store's under no-write-allocate.
        if let Some(u) = &mut self.usage {
            if !lookup.hit && (allocate || op != Op::Write) {
                u.filled(line, lookup.evicted);
            }
        }
        lookup
    }

    /// A demand reference's line: [`Level::line_op`], then the prefetches it triggers (the
    /// reference at byte `addr` by instruction `pc`; see `prefetcher.rs`).
    #[inline]
    pub(super) fn demand(&mut self, line: u64, addr: u64, pc: u64, op: Op) -> Lookup {
        let lookup = self.line_op(line, op);
        let Level {
            cache,
            dirty,
            prefetch: Some(p),
            usage,
            spilled,
            issued,
            stats,
            ..
        } = self
        else {
            return lookup;
        };
        p.after_demand(
            cache,
            (dirty.as_mut(), usage.as_mut()),
            stats,
            (spilled, issued),
            line,
            addr,
            pc,
            lookup,
        );
        lookup
    }

    /// A write-back from the level above: installed dirty (an installation, not a demand
    /// reference); returns the dirty line its fill evicted, written on down in turn.
    pub(super) fn receive_writeback(&mut self, line: u64) -> Option<u64> {
        let dirty = self.dirty.as_mut()?;
        let lookup = dirty.fill(&mut self.cache, line, true);
        *self.stats.writebacks_received.get_or_insert(0) += 1;
        if let (Some(u), false) = (&mut self.usage, lookup.hit) {
            u.filled(line, lookup.evicted);
        }
        // A write-back that evicts a prefetched line unused makes that prefetch useless.
        if let Some(p) = &mut self.prefetch {
            p.evicted_by_other(&mut self.stats, lookup.evicted);
        }
        self.count_writeback(lookup);
        lookup.writeback
    }

    /// A line a prefetch in the level above fetched: filled here when absent (not a demand
    /// reference: no count but a write-back it causes). Returns whether it was here, and the
    /// dirty line its fill evicted.
    pub(super) fn install(&mut self, line: u64) -> (bool, Option<u64>) {
        if self.cache.contains(line) {
            return (true, None);
        }
        let lookup = match &mut self.dirty {
            Some(dirty) => dirty.fill(&mut self.cache, line, false),
            None => Lookup {
                hit: false,
                evicted: match self.cache.access_outcome(line) {
                    Outcome::Hit => None,
                    Outcome::Miss { evicted } => evicted,
                },
                writeback: None,
            },
        };
        if let Some(p) = &mut self.prefetch {
            p.evicted_by_other(&mut self.stats, lookup.evicted);
        }
        if let Some(u) = &mut self.usage {
            u.filled(line, lookup.evicted);
        }
        self.count_writeback(lookup);
        (false, lookup.writeback)
    }

    #[inline]
    fn count_writeback(&mut self, lookup: Lookup) {
        if lookup.writeback.is_some() {
            *self.stats.writebacks.get_or_insert(0) += 1;
        }
    }

    /// True unless this level tracks dirty lines under no-write-allocate.
    pub(super) fn writes_allocate(&self) -> bool {
        self.dirty.as_ref().is_none_or(|d| d.writes().allocate)
    }

    /// Counts a line lookup done by the caller (e.g. an exclusive level's probe).
    #[inline]
    pub(super) fn count_line(&mut self, line: u64, hit: bool) {
        self.stats.line_accesses += 1;
        self.stats.line_misses += u64::from(!hit);
        if let Some(t) = &mut self.three_c {
            if let (Some(class), Some(counts)) = (t.observe(line, hit), &mut self.stats.three_c) {
                counts.add(class);
            }
        }
    }

    /// Counts one reference that hit or missed.
    #[inline]
    pub(super) fn count_ref(&mut self, hit: bool) {
        self.stats.refs += 1;
        self.stats.misses += u64::from(!hit);
    }
}
