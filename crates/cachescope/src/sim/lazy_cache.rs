//! [`LazyCache`]: an LRU cache that is only built when it first has to evict.
//!
//! Until some set of an LRU cache is asked to hold more lines than it has ways, the cache holds
//! every line seen so far and misses exactly on first references; its state is then fully
//! given by the lines seen in order of their last reference. So it is built, by replaying that
//! order (no evictions, so each set ends in LRU order), only when a first reference finds its
//! set full; until then it costs a counter per set and a test per first reference. Caches
//! larger than the trace's footprint are never built: a report's 1 GiB 3C cache no longer
//! touches a 128 MiB array on every reference.

use super::cache::Cache;
use super::geometry::Geometry;
use super::policy::Policy;
use crate::error::Result;

/// A cache that is built when it first has to evict (LRU), or at once (other policies).
#[derive(Clone, Debug)]
pub(super) struct LazyCache {
    geometry: Geometry,
    policy: Policy,
    cache: Option<Cache>,
    /// Lines per set while the cache is not built.
    per_set: Vec<u32>,
}

impl LazyCache {
    pub fn new(geometry: Geometry, policy: Policy) -> Result<LazyCache> {
        // Only LRU's state is its lines' recency order; any other policy runs from the start.
        let (cache, per_set) = if policy == Policy::Lru {
            let sets = usize::try_from(geometry.sets()).expect("sets fit in memory");
            (None, vec![0; sets])
        } else {
            (Some(Cache::new(geometry, policy)?), Vec::new())
        };
        Ok(LazyCache {
            geometry,
            policy,
            cache,
            per_set,
        })
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// True once the cache is built (from then on [`LazyCache::built`] simulates it).
    pub fn is_built(&self) -> bool {
        self.cache.is_some()
    }

    /// The cache, once built.
    pub fn built(&mut self) -> Option<&mut Cache> {
        self.cache.as_mut()
    }

    /// References `line`; true on a hit. `first`: the stream has never referenced it before.
    /// `recency` gives every line referenced so far, this one last, least recent first; it is
    /// called at most once, when the cache is built.
    #[inline]
    pub fn access(&mut self, line: u64, first: bool, recency: impl FnOnce() -> Vec<u64>) -> bool {
        if self.cache.is_none() {
            if !first {
                return true;
            }
            let set = self.geometry.set_of(line) as usize;
            if u64::from(self.per_set[set]) < u64::from(self.geometry.assoc()) {
                self.per_set[set] += 1;
                return false;
            }
            self.build(recency);
        }
        let cache = self.cache.as_mut().expect("built above");
        cache.access_outcome(line).is_hit()
    }

    /// Builds the cache from the lines seen before the current one, in recency order.
    #[cold]
    fn build(&mut self, recency: impl FnOnce() -> Vec<u64>) {
        let mut cache =
            Cache::new(self.geometry, Policy::Lru).expect("an LRU cache of a valid geometry");
        let order = recency();
        for &l in &order[..order.len().saturating_sub(1)] {
            cache.access(l);
        }
        self.cache = Some(cache);
        self.per_set = Vec::new();
    }
}
