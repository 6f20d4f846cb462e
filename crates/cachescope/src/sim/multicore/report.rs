//! [`MultiCoreReport`]: what a [`MultiCore`] counted, per core and level and per level.
//! Field names are a public contract (`simulate --cores --json`).

use super::placement::ThreadPlacement;
use super::unit::CacheCounts;
use super::{CoreClock, Latencies, MultiCore, ThreadReport};
use crate::sim::{Geometry, Policy};

/// One level of the machine.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MachineLevel {
    /// `cache`, `L1`, `L1I`, `L1D`, `L2`, `L3`.
    pub name: String,
    /// Its shape.
    pub geometry: Geometry,
    /// One cache for all cores.
    pub shared: bool,
}

/// The counts of one cache: a core's copy of a private level, or a shared level.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CacheReport {
    /// Its level's name.
    pub level: String,
    /// Its core, from 0 (`None` for a shared level).
    pub core: Option<u32>,
    /// What it saw.
    #[serde(flatten)]
    pub counts: CacheCounts,
    /// misses / refs.
    pub miss_ratio: f64,
    /// used_bytes / fetched_bytes (when utilization is tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
}

/// A level's counts summed over its caches (every core's, or the one shared cache).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LevelTotals {
    /// The level's name.
    pub level: String,
    /// The sums.
    #[serde(flatten)]
    pub counts: CacheCounts,
    /// misses / refs.
    pub miss_ratio: f64,
    /// used_bytes / fetched_bytes (when utilization is tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
}

/// What a [`MultiCore`] simulation counted.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MultiCoreReport {
    /// Cores simulated.
    pub cores: u32,
    /// Replacement policy (a seeded one gives each cache its own seed from this one).
    pub policy: Policy,
    /// The levels, top down (`L1I` before `L1D` when the first level is split).
    pub levels: Vec<MachineLevel>,
    /// Each thread's core, in order of first appearance.
    pub placement: Vec<ThreadPlacement>,
    /// Every cache, level by level, a private level core by core.
    pub caches: Vec<CacheReport>,
    /// Per level, the sums over its caches.
    pub totals: Vec<LevelTotals>,
    /// What each outcome cost in modelled time.
    pub latencies: Latencies,
    /// Each core's modelled time.
    pub clocks: Vec<CoreClock>,
    /// Each thread's lookups per level, in order of first appearance.
    pub threads: Vec<ThreadReport>,
}

impl MultiCore {
    /// The counts so far.
    pub fn finish(&self) -> MultiCoreReport {
        let c = &self.config;
        let levels: Vec<MachineLevel> = c
            .l1i
            .iter()
            .map(|&g| ("L1I".to_owned(), g, false))
            .chain(
                c.levels
                    .iter()
                    .map(|l| (l.name.clone(), l.geometry, l.shared)),
            )
            .map(|(name, geometry, shared)| MachineLevel {
                name,
                geometry,
                shared,
            })
            .collect();
        let mut totals: Vec<CacheCounts> = vec![CacheCounts::default(); levels.len()];
        let caches = self
            .slots
            .iter()
            .zip(&self.units)
            .map(|(&(k, core), unit)| {
                let counts = unit.counts();
                totals[k].add(&counts);
                CacheReport {
                    level: levels[k].name.clone(),
                    core,
                    counts,
                    miss_ratio: counts.miss_ratio(),
                    utilization: counts.utilization(),
                }
            })
            .collect();
        MultiCoreReport {
            cores: c.cores,
            policy: c.policy,
            placement: self.placement.threads().to_vec(),
            caches,
            totals: levels
                .iter()
                .zip(totals)
                .map(|(l, counts)| LevelTotals {
                    level: l.name.clone(),
                    counts,
                    miss_ratio: counts.miss_ratio(),
                    utilization: counts.utilization(),
                })
                .collect(),
            levels,
            latencies: self.latencies.clone(),
            clocks: self.clocks.clone(),
            threads: self.threads(),
        }
    }
}
