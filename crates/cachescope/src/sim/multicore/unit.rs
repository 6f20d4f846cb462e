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
use crate::sim::dirty::Lookup;
use crate::sim::prefetcher::{PrefetchPolicy, Prefetching};
use crate::sim::utilization::Utilization;
use crate::sim::{Cache, Dirty, Geometry, MissStats, Op, Outcome, Policy, ThreeC, Writes};

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
    /// Dirty lines that left this cache with their data: evicted, or cleaned when another
    /// core read a line this core held modified (present when write-backs are tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks: Option<u64>,
    /// Write-backs the cache above wrote into this one: installations, not counted in `refs`
    /// (present when write-backs are tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writebacks_received: Option<u64>,
    /// Bytes of the lines filled into this cache that a reference touched while they were
    /// resident (present when utilization is tracked; docs/hardware.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    /// Bytes of every line filled into this cache (line size × fills, the lines still
    /// resident at the end included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// Lines this cache's prefetcher brought in (present when it has one; docs/threads.md,
    /// "Prefetchers"; the names and meanings of the single-core levels' counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetches: Option<u64>,
    /// Prefetched lines a demand reference hit before they left the cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub useful_prefetches: Option<u64>,
    /// Prefetched lines that left the cache (evicted, or taken by another core's write)
    /// before any demand reference hit them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub useless_prefetches: Option<u64>,
}

impl CacheCounts {
    /// used_bytes / fetched_bytes, when utilization was tracked (0 when nothing was fetched).
    pub fn utilization(&self) -> Option<f64> {
        Some(crate::sim::utilization::ratio(
            self.used_bytes?,
            self.fetched_bytes?,
        ))
    }

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
        for (sum, add) in [
            (&mut self.writebacks, other.writebacks),
            (&mut self.writebacks_received, other.writebacks_received),
            (&mut self.used_bytes, other.used_bytes),
            (&mut self.fetched_bytes, other.fetched_bytes),
            (&mut self.prefetches, other.prefetches),
            (&mut self.useful_prefetches, other.useful_prefetches),
            (&mut self.useless_prefetches, other.useless_prefetches),
        ] {
            if let Some(n) = add {
                *sum.get_or_insert(0) += n;
            }
        }
    }
}

/// What one lookup was: a hit, or a miss of one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Hit,
    Cold,
    Capacity,
    Conflict,
    Coherence,
}

impl CacheCounts {
    /// Counts one lookup of class `c`.
    #[inline]
    pub(super) fn count(&mut self, c: Class) {
        self.refs += 1;
        match c {
            Class::Hit => {
                self.hits += 1;
                return;
            }
            Class::Cold => self.cold += 1,
            Class::Capacity => self.capacity += 1,
            Class::Conflict => self.conflict += 1,
            Class::Coherence => self.coherence += 1,
        }
        self.misses += 1;
    }
}

/// One cache with its classifier.
#[derive(Clone, Debug)]
pub(super) struct Unit {
    pub(super) cache: Cache,
    classes: ThreeC,
    /// Lines taken by another core's write and not filled again since.
    lost: HashSet<u64, foldhash::fast::FixedState>,
    /// Dirty lines, when write-backs are tracked.
    dirty: Option<Dirty>,
    /// The touched bytes of the resident lines, when utilization is tracked.
    usage: Option<Utilization>,
    /// The prefetcher, with its counts kept as a single-core level keeps them.
    prefetch: Option<(Prefetching, MissStats)>,
    /// Write-backs of the last demand's prefetch fills, for the machine to write down.
    pub(super) spilled: Vec<u64>,
    /// Lines the prefetcher fetched, for the machine to ask of the levels below.
    pub(super) issued: Vec<u64>,
    pub(super) counts: CacheCounts,
}

impl Unit {
    pub(super) fn new(geometry: Geometry, policy: Policy, writes: Option<Writes>) -> Result<Unit> {
        Ok(Unit {
            cache: Cache::new(geometry, policy)?,
            classes: ThreeC::new(geometry.lines())?,
            lost: HashSet::default(),
            dirty: writes.map(Dirty::new),
            usage: None,
            prefetch: None,
            spilled: Vec::new(),
            issued: Vec::new(),
            counts: CacheCounts {
                writebacks: writes.map(|_| 0),
                writebacks_received: writes.map(|_| 0),
                ..CacheCounts::default()
            },
        })
    }

    /// Tracks the touched bytes of every line filled from now on (before the first access).
    pub(super) fn track_utilization(&mut self) {
        self.usage = Some(Utilization::new(self.cache.geometry().line_size()));
    }

    /// Gives the cache a prefetcher (before the first access; `none` gives none).
    pub(super) fn prefetch(&mut self, policy: PrefetchPolicy) {
        if policy == PrefetchPolicy::None {
            return;
        }
        let shift = self.cache.geometry().line_size().shift();
        let stats = MissStats {
            prefetches: Some(0),
            useful_prefetches: Some(0),
            useless_prefetches: Some(0),
            ..MissStats::default()
        };
        self.prefetch = Some((Prefetching::new(policy, shift), stats));
    }

    /// The lines the last demand's prefetch fills evicted.
    pub(super) fn prefetch_victims(&self) -> &[u64] {
        self.prefetch.as_ref().map_or(&[], |(p, _)| &p.victims)
    }

    /// Marks a reference's bytes on the lines of this cache holding them.
    #[inline]
    pub(super) fn touch(&mut self, addr: u64, size: u32) {
        if let Some(u) = &mut self.usage {
            u.touch(addr, size);
        }
    }

    /// The counts, with the utilization's totals when tracked.
    pub(super) fn counts(&self) -> CacheCounts {
        let mut counts = self.counts;
        if let Some(u) = &self.usage {
            let (used, fetched) = u.totals();
            (counts.used_bytes, counts.fetched_bytes) = (Some(used), Some(fetched));
        }
        if let Some((_, s)) = &self.prefetch {
            counts.prefetches = s.prefetches;
            counts.useful_prefetches = s.useful_prefetches;
            counts.useless_prefetches = s.useless_prefetches;
            if let (Some(w), Some(more)) = (&mut counts.writebacks, s.writebacks) {
                *w += more;
            }
        }
        counts
    }

    /// Whether a store that misses fills its line here.
    pub(super) fn allocates_on_write(&self) -> bool {
        self.dirty.as_ref().is_none_or(|d| d.writes().allocate)
    }

    /// Looks `line` up for `op` (a reference at byte `addr` by instruction `pc`), filling it
    /// on a miss (unless a no-write-allocate store misses); counts and classifies, then
    /// issues the prefetches it triggers ([`Unit::spilled`], [`Unit::issued`]). Returns the
    /// outcome, its class, and a dirty victim of the fill, to be written to the level below.
    #[inline]
    pub(super) fn access(
        &mut self,
        line: u64,
        op: Op,
        (addr, pc): (u64, u64),
    ) -> (Outcome, Class, Option<u64>) {
        let (outcome, writeback) = match &mut self.dirty {
            None => (self.cache.access_outcome(line), None),
            Some(dirty) => {
                let got = dirty.lookup(&mut self.cache, line, op);
                self.count_writeback(got.writeback);
                (got.outcome(), got.writeback)
            }
        };
        let class = self.classify(line, outcome);
        self.counts.count(class);
        if let (Some(u), Outcome::Miss { evicted }) = (&mut self.usage, outcome) {
            // Every miss fills but a store's under no-write-allocate.
            if op != Op::Write || self.dirty.as_ref().is_none_or(|d| d.writes().allocate) {
                u.filled(line, evicted);
            }
        }
        if let Some((p, stats)) = &mut self.prefetch {
            let lookup = Lookup {
                hit: outcome.is_hit(),
                evicted: match outcome {
                    Outcome::Hit => None,
                    Outcome::Miss { evicted } => evicted,
                },
                writeback,
            };
            let (spilled, issued) = (&mut self.spilled, &mut self.issued);
            let filled = issued.len();
            p.after_demand(
                &mut self.cache,
                (self.dirty.as_mut(), self.usage.as_mut()),
                stats,
                (spilled, issued),
                line,
                addr,
                pc,
                lookup,
            );
            // A line filled again is no longer one another core's write took.
            if !self.lost.is_empty() {
                for l in &issued[filled..] {
                    self.lost.remove(l);
                }
            }
        }
        (outcome, class, writeback)
    }

    /// A line a prefetch of a cache above fetched: filled here when absent, not counted as a
    /// reference (a single-core level's install). Returns whether it was here, the line its
    /// fill evicted, and that line when dirty (to be written below).
    pub(super) fn install(&mut self, line: u64) -> (bool, Option<u64>, Option<u64>) {
        if self.cache.contains(line) {
            return (true, None, None);
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
        if let Some((p, stats)) = &mut self.prefetch {
            p.evicted_by_other(stats, lookup.evicted);
        }
        if let Some(u) = &mut self.usage {
            u.filled(line, lookup.evicted);
        }
        self.lost.remove(&line);
        self.count_writeback(lookup.writeback);
        (false, lookup.evicted, lookup.writeback)
    }

    /// A dirty line the cache above evicted, installed here dirty (not a reference). Returns
    /// the fill's outcome and the dirty victim it evicted in turn.
    pub(super) fn receive_writeback(&mut self, line: u64) -> (Outcome, Option<u64>) {
        let dirty = self.dirty.as_mut().expect("write-backs are tracked");
        let got = dirty.fill(&mut self.cache, line, true);
        *self.counts.writebacks_received.get_or_insert(0) += 1;
        if let (Some(u), Outcome::Miss { evicted }) = (&mut self.usage, got.outcome()) {
            u.filled(line, evicted);
        }
        // A write-back that evicts a prefetched line unused makes that prefetch useless.
        if let Some((p, stats)) = &mut self.prefetch {
            p.evicted_by_other(stats, got.evicted);
        }
        self.count_writeback(got.writeback);
        (got.outcome(), got.writeback)
    }

    /// Drops `line`'s dirty mark; true if it was dirty (its data is written back or handed on
    /// by the caller).
    pub(super) fn clean(&mut self, line: u64) -> bool {
        self.dirty.as_mut().is_some_and(|d| d.forget(line))
    }

    /// Counts one write-back the caller makes of this cache's data.
    pub(super) fn count_writeback(&mut self, line: Option<u64>) {
        if line.is_some() {
            *self.counts.writebacks.get_or_insert(0) += 1;
        }
    }

    /// Classifies a lookup (the counts are the caller's).
    #[inline]
    fn classify(&mut self, line: u64, outcome: Outcome) -> Class {
        let (first, shadow_hit) = self.classes.facts(line);
        if outcome.is_hit() {
            return Class::Hit;
        }
        // A line the cache never saw cannot have been taken from it.
        let lost = !first && !self.lost.is_empty() && self.lost.remove(&line);
        if first {
            Class::Cold
        } else if !shadow_hit {
            Class::Capacity
        } else if lost {
            Class::Coherence
        } else {
            Class::Conflict
        }
    }

    /// Removes `line` because another core wrote it; true if it was cached.
    #[inline]
    pub(super) fn invalidate(&mut self, line: u64) -> bool {
        let had = self.cache.invalidate(line);
        if let Some(u) = &mut self.usage {
            u.left(line);
        }
        // The data goes with the writer's copy: no write-back.
        self.clean(line);
        if had {
            self.counts.invalidations += 1;
            self.lost.insert(line);
            if let Some((p, stats)) = &mut self.prefetch {
                p.evicted_by_other(stats, Some(line));
            }
        }
        had
    }
}
