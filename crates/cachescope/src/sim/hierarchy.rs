//! [`Hierarchy`]: split L1 instruction and data caches over a unified L2 and optional L3.
//!
//! By default every level is write-allocate and no write-backs are modelled: a store is looked
//! up like a load (as Cachegrind does). With [`HierarchyConfig::writes`] (non-inclusive only)
//! every level tracks dirty lines: a dirty victim is written into the level below (installed
//! there dirty, counted as a write-back received, not as a reference), and on down when that
//! fill evicts a dirty line in turn; under no-write-allocate a store that misses a level goes
//! on to the next as a store, otherwise the line is fetched from below as a read. A reference goes to L1I (instruction fetches) or L1D (data); on a
//! miss the next level is asked, and so on down to memory. What a level does with the lines
//! around it depends on [`Inclusion`]:
//!
//! - **Non-inclusive** (the default, Cachegrind's model): a level is filled on its own miss and
//!   its evictions touch no other level.
//! - **Inclusive**: a lower level holds everything above it. A line evicted from L2 is
//!   invalidated in both L1s; a line evicted from L3 in L2 and both L1s (back-invalidation).
//!   L1 hits do not refresh L2's recency, as in hardware.
//! - **Exclusive**: a line lives in at most one of L1 (either), L2 and L3. An L1 miss probes
//!   L2, then L3; a probe that hits moves the line up (it leaves that level). The line the L1
//!   fill evicts goes to L2 (a fill, not a reference), L2's victim to L3, L3's victim is dropped.
//!   The two L1s are not exclusive of each other: a line in both goes down only when the second
//!   lets it go, and a line found in the other L1 is not taken from it (it comes from memory).
//!
//! All levels share one line size. 3C classification of a lower level is over the references
//! that reach it; under exclusion it ignores the victim fills.

use super::Outcome;
use super::cache::Cache;
use super::dirty::{Op, Writes};
use super::geometry::Geometry;
use super::level::{Level, MissStats};
use super::policy::Policy;
use super::prefetcher::PrefetchPolicy;
use crate::error::{Error, Result};

mod non_inclusive;

/// How the levels of a [`Hierarchy`] share lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inclusion {
    /// Each level fills on its own misses only (Cachegrind's model).
    #[default]
    NonInclusive,
    /// Lower levels hold everything above them; their evictions back-invalidate.
    Inclusive,
    /// A line is in at most one level; L1 victims fill L2, L2 victims fill L3.
    Exclusive,
}

/// The shape of a hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HierarchyConfig {
    /// The L1 instruction cache.
    pub l1i: Geometry,
    /// The L1 data cache.
    pub l1d: Geometry,
    /// The unified L2.
    pub l2: Geometry,
    /// An optional unified L3.
    pub l3: Option<Geometry>,
    /// Replacement at every level. Under `Random { seed }`, level k (0 = L1I, 1 = L1D, 2 = L2,
    /// 3 = L3) draws from seed + k.
    pub policy: Policy,
    /// How levels share lines.
    pub inclusion: Inclusion,
    /// Track dirty lines and write-backs at every level, with this store policy (`None`: no
    /// write-backs, the default). Non-inclusive hierarchies only.
    pub writes: Option<Writes>,
    /// Each level's prefetcher: L1I, L1D, L2, L3 (default none; non-inclusive hierarchies only).
    pub prefetch: [PrefetchPolicy; 4],
    /// Call the last level `LL` in reports rather than `L2` or `L3` (the command line's
    /// `--LL`, Cachegrind's name for it).
    pub last_is_ll: bool,
}

impl HierarchyConfig {
    /// L1I, L1D and L2, LRU, non-inclusive, no L3.
    pub fn new(l1i: Geometry, l1d: Geometry, l2: Geometry) -> HierarchyConfig {
        HierarchyConfig {
            l1i,
            l1d,
            l2,
            l3: None,
            policy: Policy::Lru,
            inclusion: Inclusion::NonInclusive,
            writes: None,
            prefetch: [PrefetchPolicy::None; 4],
            last_is_ll: false,
        }
    }
}

/// Where a line was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Served {
    /// The L1 cache asked.
    L1,
    /// L2.
    L2,
    /// L3.
    L3,
    /// Nowhere: memory.
    Memory,
}

impl Served {
    fn lower(k: usize) -> Served {
        [Served::L2, Served::L3][k]
    }
}

/// A simulated cache hierarchy. See the module documentation.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    /// [L1I, L1D].
    l1: [Level; 2],
    /// `[L2]` or `[L2, L3]`.
    lower: Vec<Level>,
    inclusion: Inclusion,
    names: Vec<&'static str>,
}

fn level_policy(p: Policy, k: u64) -> Policy {
    match p.seed() {
        Some(seed) => p.with_seed(seed.wrapping_add(k)),
        None => p,
    }
}

impl Hierarchy {
    /// Empty caches shaped by `config`; `three_c` classifies every level's misses.
    pub fn new(config: &HierarchyConfig, three_c: bool) -> Result<Hierarchy> {
        let all: Vec<(&'static str, Geometry)> = [
            ("L1I", Some(config.l1i)),
            ("L1D", Some(config.l1d)),
            ("L2", Some(config.l2)),
            ("L3", config.l3),
        ]
        .into_iter()
        .filter_map(|(n, g)| g.map(|g| (n, g)))
        .collect();
        let line = config.l1d.line_size();
        if let Some((name, g)) = all.iter().find(|(_, g)| g.line_size() != line) {
            return Err(Error::InvalidParameter {
                name: "cache hierarchy",
                message: format!(
                    "all levels use one line size: L1D has {} B lines, {name} {} B",
                    line.bytes(),
                    g.line_size().bytes()
                ),
            });
        }
        let prefetching = config.prefetch.iter().any(|&p| p != PrefetchPolicy::None);
        if (config.writes.is_some() || prefetching) && config.inclusion != Inclusion::NonInclusive {
            return Err(Error::InvalidParameter {
                name: "cache hierarchy",
                message: "write-backs and prefetchers are modelled in non-inclusive hierarchies \
                          only (where a written-back or prefetched line may go is the inclusion \
                          policy's other half)"
                    .into(),
            });
        }
        if config.l3.is_none() && config.prefetch[3] != PrefetchPolicy::None {
            return Err(Error::InvalidParameter {
                name: "cache hierarchy",
                message: "a prefetcher for L3 needs an L3".into(),
            });
        }
        let mut levels = all
            .iter()
            .enumerate()
            .map(|(k, (_, g))| {
                let policy = level_policy(config.policy, k as u64);
                let prefetch = config.prefetch[k];
                Level::tracking(*g, policy, three_c, config.writes, prefetch)
            })
            .collect::<Result<Vec<_>>>()?;
        let lower = levels.split_off(2);
        let [l1i, l1d] = <[Level; 2]>::try_from(levels).expect("two L1 levels");
        Ok(Hierarchy {
            l1: [l1i, l1d],
            lower,
            inclusion: config.inclusion,
            names: {
                let mut names: Vec<&'static str> = all.iter().map(|(n, _)| *n).collect();
                if config.last_is_ll {
                    *names.last_mut().expect("levels") = "LL";
                }
                names
            },
        })
    }

    /// Looks up one line (a line address) from L1I (`instr`) or L1D; counts line accesses only.
    pub fn access_line(&mut self, line: u64, instr: bool) -> Served {
        self.access_line_op(line, instr, Op::Read, 0, 0)
    }

    /// [`Hierarchy::access_line`] for a load, store or modify (`op`) at byte `addr` by
    /// instruction `pc` (what the prefetchers learn from): with write-backs tracked, a written
    /// line turns dirty and dirty victims are written down.
    pub fn access_line_op(&mut self, line: u64, instr: bool, op: Op, addr: u64, pc: u64) -> Served {
        let side = usize::from(!instr);
        if self.inclusion == Inclusion::NonInclusive {
            return self.non_inclusive_line(line, side, op, addr, pc);
        }
        let l1_evicted = match self.l1[side].line(line) {
            Outcome::Hit => return Served::L1,
            Outcome::Miss { evicted } => evicted,
        };
        match self.inclusion {
            Inclusion::NonInclusive => unreachable!("non-inclusive lookups returned above"),
            Inclusion::Inclusive => {
                for k in 0..self.lower.len() {
                    match self.lower[k].line(line) {
                        Outcome::Hit => return Served::lower(k),
                        Outcome::Miss { evicted: Some(v) } => {
                            for above in self.l1.iter_mut().chain(&mut self.lower[..k]) {
                                above.invalidate(v);
                            }
                        }
                        Outcome::Miss { evicted: None } => {}
                    }
                }
                Served::Memory
            }
            Inclusion::Exclusive => {
                let mut served = Served::Memory;
                for (k, level) in self.lower.iter_mut().enumerate() {
                    let hit = level.invalidate(line);
                    level.count_line(line, hit);
                    if hit {
                        served = Served::lower(k);
                        break;
                    }
                }
                // A victim the other L1 still holds stays at the L1 level.
                let mut victim = l1_evicted.filter(|&v| !self.l1[1 - side].cache.contains(v));
                for level in &mut self.lower {
                    let Some(v) = victim else { break };
                    victim = match level.place(v) {
                        Outcome::Hit => None,
                        Outcome::Miss { evicted } => evicted,
                    };
                }
                served
            }
        }
    }

    /// One reference touching lines `first..=last` (equal, or a straddling access's two lines)
    /// from L1I (`instr`) or L1D. Each line goes through the hierarchy; the reference counts at
    /// every level it reaches and misses a level when any of its lines does. Returns the
    /// farthest level a line came from.
    pub fn reference(&mut self, first: u64, last: u64, instr: bool) -> Served {
        self.reference_op(first, last, instr, Op::Read, (0, 0))
    }

    /// [`Hierarchy::reference`] for a load, store or modify (`op`) at byte address and
    /// instruction `(addr, pc)` (see [`Hierarchy::access_line_op`]).
    pub fn reference_op(
        &mut self,
        first: u64,
        last: u64,
        instr: bool,
        op: Op,
        (addr, pc): (u64, u64),
    ) -> Served {
        let mut worst = self.access_line_op(first, instr, op, addr, pc);
        if last != first {
            worst = worst.max(self.access_line_op(last, instr, op, addr, pc));
        }
        self.l1[usize::from(!instr)].count_ref(worst == Served::L1);
        for (k, level) in self.lower.iter_mut().enumerate() {
            let here = Served::lower(k);
            if worst < here {
                break;
            }
            level.count_ref(worst == here);
        }
        worst
    }

    /// Tracks every level's line utilization from now on (docs/hardware.md); call before the
    /// first reference.
    pub fn track_utilization(&mut self) {
        for level in self.l1.iter_mut().chain(&mut self.lower) {
            level.track_utilization();
        }
    }

    /// Marks a reference's bytes (`size` at `addr`) on the lines holding them in the levels
    /// it can reach: L1I (`instr`) or L1D, and every lower level. Call after the reference.
    pub fn touch(&mut self, instr: bool, addr: u64, size: u32) {
        self.l1[usize::from(!instr)].touch(addr, size);
        for level in &mut self.lower {
            level.touch(addr, size);
        }
    }

    /// Each level's name and counts (with utilization totals when tracked), top down.
    pub fn level_stats(&self) -> impl Iterator<Item = (&'static str, &Cache, MissStats)> + '_ {
        self.names
            .iter()
            .zip(self.l1.iter().chain(&self.lower))
            .map(|(n, l)| (*n, &l.cache, l.stats()))
    }

    /// The caches, top down: L1I, L1D, L2 and L3 if present.
    pub fn caches(&self) -> impl Iterator<Item = &Cache> + '_ {
        self.l1.iter().chain(&self.lower).map(|l| &l.cache)
    }

    /// Each level's name (`L1I`, `L1D`, `L2`, `L3`), cache and counts, top down.
    pub fn levels(&self) -> impl Iterator<Item = (&'static str, &Cache, &MissStats)> + '_ {
        self.names
            .iter()
            .zip(self.l1.iter().chain(&self.lower))
            .map(|(n, l)| (*n, &l.cache, &l.stats))
    }

    /// How the levels share lines.
    pub fn inclusion(&self) -> Inclusion {
        self.inclusion
    }
}
