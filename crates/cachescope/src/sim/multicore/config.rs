//! [`MultiCoreConfig`]: the machine a [`MultiCore`](super::MultiCore) simulates, checked
//! before any work.

use super::Latencies;
use crate::access::ThreadId;
use crate::error::{Error, Result};
use crate::sim::{Geometry, Policy, PrefetchPolicy, Writes};

/// Most cores a machine may have: far beyond the threads of any recorded program, and small
/// enough that every core's empty caches fit in memory.
pub const MAX_CORES: u32 = 1024;

/// One level of the machine, top down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSpec {
    /// Its name in reports (`cache`, `L1`, `L1D`, `L2`, `L3`).
    pub name: String,
    /// Its shape (every level has the same line size).
    pub geometry: Geometry,
    /// One cache all cores share, rather than one per core.
    pub shared: bool,
}

impl LevelSpec {
    /// A private level.
    pub fn private(name: &str, geometry: Geometry) -> LevelSpec {
        LevelSpec {
            name: name.to_owned(),
            geometry,
            shared: false,
        }
    }

    /// A shared level.
    pub fn shared(name: &str, geometry: Geometry) -> LevelSpec {
        LevelSpec {
            shared: true,
            ..LevelSpec::private(name, geometry)
        }
    }
}

/// A multi-core machine: `cores` cores, each with private copies of the levels that are not
/// shared, over the shared ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiCoreConfig {
    /// Cores, 1 to [`MAX_CORES`].
    pub cores: u32,
    /// The levels the data references go through, top down. Shared levels come last: a
    /// private cache below a shared one would be fed by several cores.
    pub levels: Vec<LevelSpec>,
    /// A split first level's instruction cache (private, named `L1I`), in front of
    /// `levels[1..]`; `levels[0]` is then the data side. `None`: instruction fetches are not
    /// simulated (the first level is a data cache, as `simulate --cache` is).
    pub l1i: Option<Geometry>,
    /// Replacement at every cache. A seeded policy gives each cache its own seed (see
    /// [`MultiCoreConfig::policy_of`]).
    pub policy: Policy,
    /// Threads placed on a core of their own choosing: `(thread, core)`, cores from 0. The
    /// others go round-robin by first appearance.
    pub pins: Vec<(ThreadId, u32)>,
    /// Count each line's coherence misses ([`MultiCore::coherence_by_line`](super::MultiCore::coherence_by_line)):
    /// a hash-map update per coherence miss, nothing otherwise.
    pub by_line: bool,
    /// Track dirty lines and write-backs in every cache, with this store policy (`None`: no
    /// tracking, write-allocate, as before write-backs were counted; docs/threads.md).
    pub writes: Option<Writes>,
    /// What each outcome costs in modelled time (`None`: [`Latencies::defaults`] for these
    /// levels; docs/threads.md, "Latencies").
    pub latencies: Option<Latencies>,
    /// Track every cache's line utilization (`used_bytes`, `fetched_bytes`), as the
    /// single-core levels do (docs/hardware.md).
    pub utilization: bool,
    /// Each level's prefetcher, top down as [`MultiCoreConfig::policy_of`] numbers the levels
    /// (`L1I` first when split); missing entries have none. Every core's copy of a private
    /// level has a prefetcher of its own, trained by that core's references; a shared level
    /// has one, trained by every core's (docs/threads.md, "Prefetchers").
    pub prefetch: Vec<PrefetchPolicy>,
}

fn invalid(name: &'static str, message: String) -> Error {
    Error::InvalidParameter { name, message }
}

impl MultiCoreConfig {
    /// `cores` cores with private `levels` (mark shared ones with [`LevelSpec::shared`]), LRU,
    /// no split L1, no pins, no per-line counts.
    pub fn new(cores: u32, levels: Vec<LevelSpec>) -> MultiCoreConfig {
        MultiCoreConfig {
            cores,
            levels,
            l1i: None,
            policy: Policy::Lru,
            pins: Vec::new(),
            by_line: false,
            writes: None,
            latencies: None,
            utilization: false,
            prefetch: Vec::new(),
        }
    }

    /// The prefetcher of the level numbered `level` as in [`MultiCoreConfig::policy_of`].
    pub fn prefetch_of(&self, level: usize) -> PrefetchPolicy {
        self.prefetch.get(level).copied().unwrap_or_default()
    }

    /// Checks that the machine can be built: cores, levels, line sizes, shared levels below
    /// private ones, pins to existing cores.
    pub fn validate(&self) -> Result<()> {
        if self.cores == 0 || self.cores > MAX_CORES {
            return Err(invalid(
                "number of cores",
                format!("{}: give 1 to {MAX_CORES}", self.cores),
            ));
        }
        let Some(first) = self.levels.first() else {
            return Err(invalid("cache levels", "no level to simulate".into()));
        };
        let line = first.geometry.line_size();
        let all = self
            .l1i
            .iter()
            .chain(self.levels.iter().map(|l| &l.geometry));
        if let Some(g) = all.clone().find(|g| g.line_size() != line) {
            return Err(invalid(
                "cache levels",
                format!(
                    "all levels use one line size: {} has {} B lines, another {} B",
                    first.name,
                    line.bytes(),
                    g.line_size().bytes()
                ),
            ));
        }
        if let Some(w) = self.levels.windows(2).find(|w| w[0].shared && !w[1].shared) {
            return Err(invalid(
                "shared levels",
                format!(
                    "{} is shared but {} below it is not: a private cache cannot sit below a \
                     shared one (share {} too)",
                    w[0].name, w[1].name, w[1].name
                ),
            ));
        }
        if self.l1i.is_some() && first.shared {
            return Err(invalid(
                "shared levels",
                "the split L1 (L1I and L1D) is private to each core".into(),
            ));
        }
        if let Some(t) = &self.latencies {
            let want = self.levels.len() + usize::from(self.l1i.is_some());
            if t.levels.len() != want {
                return Err(invalid(
                    "latencies",
                    format!(
                        "{} level latencies for a machine of {want} levels",
                        t.levels.len()
                    ),
                ));
            }
        }
        let levels = self.levels.len() + usize::from(self.l1i.is_some());
        if self.prefetch.len() > levels
            && self.prefetch[levels..]
                .iter()
                .any(|&p| p != PrefetchPolicy::None)
        {
            return Err(invalid(
                "prefetch",
                format!(
                    "{} prefetchers for a machine of {levels} levels",
                    self.prefetch.len()
                ),
            ));
        }
        for (k, &(thread, core)) in self.pins.iter().enumerate() {
            if core >= self.cores {
                return Err(invalid(
                    "pin",
                    format!(
                        "thread {thread} pinned to core {core}, but the {} core{} are numbered \
                         0 to {}",
                        self.cores,
                        if self.cores == 1 { "" } else { "s" },
                        self.cores - 1
                    ),
                ));
            }
            if let Some(&(_, other)) = self.pins[..k]
                .iter()
                .find(|&&(t, c)| t == thread && c != core)
            {
                return Err(invalid(
                    "pin",
                    format!("thread {thread} pinned to both core {other} and core {core}"),
                ));
            }
        }
        Ok(())
    }

    /// The policy of the cache at `level` (0 = the first level, or `L1I` when split, which
    /// moves the others down one) of `core` (0 for a shared level): the configured policy,
    /// a seeded one drawing from seed + level + core × levels, so core 0 draws as the
    /// single-core hierarchy's levels do.
    pub fn policy_of(&self, level: usize, core: u32) -> Policy {
        let levels = self.levels.len() + usize::from(self.l1i.is_some());
        match self.policy.seed() {
            Some(seed) => self
                .policy
                .with_seed(seed.wrapping_add((level + core as usize * levels) as u64)),
            None => self.policy,
        }
    }
}
