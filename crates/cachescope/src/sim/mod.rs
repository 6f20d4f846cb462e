//! Exact cache simulators over line addresses.
//!
//! - [`Geometry`]: a validated cache shape (`32K,8,64` parses to 64 sets of 8 ways of 64-byte
//!   lines); fully associative is the one-set case, with any number of lines.
//! - [`Cache`]: one cache of any geometry under a [`Policy`] (LRU, FIFO, seeded random,
//!   tree-PLRU, and the RRIP family SRRIP, BRRIP, DRRIP of [`rrip`]). It runs [`SetAssoc`] (a scan of one set) or, for one large set,
//!   [`FullyAssoc`] (hash map + linked list, O(1) per access); both are exact, and a one-set
//!   `SetAssoc` gives the same hits as `FullyAssoc` under every policy they share.
//! - [`ThreeC`]: classifies misses as cold, capacity or conflict against a fully associative
//!   LRU shadow of the same capacity.
//! - [`Hierarchy`]: split L1I/L1D over a unified L2 and optional L3, non-inclusive (Cachegrind's
//!   model), inclusive or exclusive ([`Inclusion`]).
//! - [`SimAnalysis`]: a cache or hierarchy over a trace, with optional 3C, as an
//!   [`Analysis`](crate::analysis::Analysis); [`SimReport`] is its serde report.
//! - [`CachegrindSim`]: Valgrind Cachegrind's I1/D1/LL model, reference for reference
//!   ([`CachegrindCounts`]); `docs/cachegrind.md` says exactly what Cachegrind does and how
//!   closely a lackey trace reproduces it.
//! - [`MultiCore`]: several cores with private levels over shared ones, kept coherent
//!   (MESI-like invalidation), threads placed on cores; misses in four classes (3C and
//!   coherence) per core and level ([`MultiCoreReport`]; docs/threads.md).
//!
//! Conventions: caches work on line addresses (`addr >> log2(line size)`, see
//! [`LineSize`](crate::LineSize)); by default every cache is write-allocate and models no
//! write-backs, so loads, stores and modifies are all lookups. [`Writes`] and [`Dirty`] add
//! dirty lines, write-backs and no-write-allocate where asked ([`SimOptions::writes`]);
//! [`Utilization`] the bytes of each fetched line the program touched
//! ([`SimOptions::utilization`]). Line address `u64::MAX`, reachable only with
//! 1-byte lines, marks an empty way and cannot be simulated.
//!
//! ```
//! use cachescope::sim::{Cache, Geometry, Policy};
//!
//! // Two lines that map to the same set of a direct-mapped cache evict each other.
//! let g = Geometry::parse("4K,1,64")?; // 64 sets
//! let mut c = Cache::new(g, Policy::Lru)?;
//! assert!(!c.access(0) && !c.access(64) && !c.access(0));
//! assert!(c.access(0));
//! # Ok::<(), cachescope::Error>(())
//! ```

mod cache;
mod cachegrind;
mod dirty;
mod fully;
mod geometry;
mod hierarchy;
mod lazy_cache;
mod level;
mod multicore;
mod policy;
mod prefetcher;
pub mod rrip;
mod set_assoc;
mod set_index;
mod set_scan;
mod simulate;
mod three_c;
mod three_c_sweep;
mod two_level_lru;
mod utilization;

#[cfg(test)]
mod tests;

pub use cache::{Cache, SCAN_MAX_WAYS};
pub use cachegrind::{CachegrindCounts, CachegrindSim, RefOutcome, cachegrind_ll};
pub use dirty::{Dirty, Lookup, Op, Writes};
pub use fully::FullyAssoc;
pub use geometry::{Geometry, MAX_LINES};
pub use hierarchy::{Hierarchy, HierarchyConfig, Inclusion, Served};
pub use level::MissStats;
pub use multicore::{
    CacheCounts, CacheReport, LevelSpec, LevelTotals, MAX_CORES, MachineLevel, MultiCore,
    MultiCoreConfig, MultiCoreReport, ThreadPlacement,
};
pub use policy::Policy;
pub use prefetcher::{PrefetchPolicy, Prefetcher};
pub use set_assoc::SetAssoc;
pub use set_index::SetIndex;
pub use simulate::{LevelReport, LineMapping, SimAnalysis, SimOptions, SimReport, WalkCounts};
pub use three_c::{MissClass, ThreeC, ThreeCCounts};
pub use three_c_sweep::ThreeCSweep;
pub use two_level_lru::{TwoLevelLru, TwoLevelResult};
pub use utilization::{Touched, Utilization, ratio as utilization_ratio};

/// The tag of an empty way.
const EMPTY: u64 = u64::MAX;

/// What one cache access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The line was cached.
    Hit,
    /// The line was not cached and now is.
    Miss {
        /// The line it replaced, if the way was not empty.
        evicted: Option<u64>,
    },
}
