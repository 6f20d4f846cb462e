//! [`MissStats`] and the cache level that counts them.
//!
//! Counts are kept at two grains. A *reference* is one trace access reaching the level; it
//! misses when any line it touches misses (Cachegrind's rule: an access straddling two lines is
//! one reference and at most one miss per level). A *line access* is one line looked up; with
//! the first-byte mapping of docs/definitions.md the two grains are equal. The 3C classes
//! count line misses.

use super::Outcome;
use super::cache::Cache;
use super::geometry::Geometry;
use super::policy::Policy;
use super::three_c::{ThreeC, ThreeCCounts};
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
    pub(super) stats: MissStats,
}

impl Level {
    pub(super) fn new(geometry: Geometry, policy: Policy, three_c: bool) -> Result<Level> {
        Ok(Level {
            cache: Cache::new(geometry, policy)?,
            three_c: if three_c {
                Some(ThreeC::new(geometry.lines())?)
            } else {
                None
            },
            stats: MissStats {
                three_c: three_c.then(ThreeCCounts::default),
                ..MissStats::default()
            },
        })
    }

    /// Looks up one line, counting it and classifying a miss.
    #[inline]
    pub(super) fn line(&mut self, line: u64) -> Outcome {
        let outcome = self.cache.access_outcome(line);
        self.count_line(line, outcome.is_hit());
        outcome
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
