//! [`Cache`]: one cache of any geometry and policy, choosing the fastest exact simulator.

use super::fully::FullyAssoc;
use super::geometry::Geometry;
use super::policy::Policy;
use super::set_assoc::SetAssoc;
use super::{EMPTY, Outcome};
use crate::error::Result;

/// One-set caches with more ways than this use [`FullyAssoc`] (hash map + list, O(1) per
/// access) instead of scanning the set. Chosen by measuring both (`one_set` in benches/sim.rs,
/// uniform loads over twice the cache's lines): at 16 ways the scan does 61 M references/s and
/// the hash map 50 M, at 32 ways 38 M against 58 M.
pub const SCAN_MAX_WAYS: u32 = 16;

#[derive(Clone, Debug)]
enum Inner {
    Set(SetAssoc),
    Fully(FullyAssoc),
}

/// A cache over line addresses: set associative, or fully associative with any number of lines.
/// All policies are exact and deterministic (random replacement is seeded); a one-set cache
/// gives the same hits whichever simulator runs it.
#[derive(Clone, Debug)]
pub struct Cache {
    inner: Inner,
}

impl Cache {
    /// An empty cache. Fails for a policy the geometry cannot have (tree-PLRU needs a
    /// power-of-two associativity up to 64). Tree-PLRU and RRIP caches of one large set scan
    /// the set: O(ways) per access.
    pub fn new(geometry: Geometry, policy: Policy) -> Result<Cache> {
        let inner = if geometry.sets() == 1
            && geometry.assoc() > SCAN_MAX_WAYS
            && FullyAssoc::supports(policy)
        {
            Inner::Fully(FullyAssoc::new(geometry, policy)?)
        } else {
            Inner::Set(SetAssoc::new(geometry, policy)?)
        };
        Ok(Cache { inner })
    }

    /// The cache's shape.
    pub fn geometry(&self) -> Geometry {
        match &self.inner {
            Inner::Set(c) => c.geometry(),
            Inner::Fully(c) => c.geometry(),
        }
    }

    /// The replacement policy.
    pub fn policy(&self) -> Policy {
        match &self.inner {
            Inner::Set(c) => c.policy(),
            Inner::Fully(c) => c.policy(),
        }
    }

    /// References `line` (a line address, not a byte address): true on a hit. A miss fills it.
    #[inline]
    pub fn access(&mut self, line: u64) -> bool {
        match &mut self.inner {
            Inner::Set(c) => c.access(line),
            Inner::Fully(c) => c.access(line),
        }
    }

    /// References `line` and tells which line, if any, a miss evicted.
    #[inline]
    pub fn access_outcome(&mut self, line: u64) -> Outcome {
        match &mut self.inner {
            Inner::Set(c) => c.access_outcome(line),
            Inner::Fully(c) => c.access_outcome(line),
        }
    }

    /// DRRIP's PSEL counter now (`None` under every other policy); see [`SetAssoc::psel`].
    pub fn psel(&self) -> Option<u32> {
        match &self.inner {
            Inner::Set(c) => c.psel(),
            Inner::Fully(_) => None,
        }
    }

    /// References every line of `lines` in order; returns the number of misses. Dispatches once,
    /// so a tight loop over many lines runs the simulator's code inline.
    pub fn access_all(&mut self, lines: impl IntoIterator<Item = u64>) -> u64 {
        match &mut self.inner {
            Inner::Set(c) => c.access_all(lines),
            Inner::Fully(c) => lines.into_iter().map(|l| u64::from(!c.access(l))).sum(),
        }
    }

    /// References every line of `lines` in order and calls `miss(i)` for each miss, `i` its
    /// position in `lines`; dispatches once, as [`Cache::access_all`].
    pub fn access_each(
        &mut self,
        lines: impl IntoIterator<Item = u64>,
        mut miss: impl FnMut(usize),
    ) {
        match &mut self.inner {
            Inner::Set(c) => c.access_each(lines, miss),
            Inner::Fully(c) => {
                for (i, l) in lines.into_iter().enumerate() {
                    if !c.access(l) {
                        miss(i);
                    }
                }
            }
        }
    }

    /// [`Cache::access_each`] over runs: `(line, again)` references `line`, then once more
    /// when `again` (a hit, not reported); see [`SetAssoc::access_runs`].
    pub fn access_runs(
        &mut self,
        runs: impl IntoIterator<Item = (u64, bool)>,
        mut miss: impl FnMut(usize),
    ) {
        match &mut self.inner {
            Inner::Set(c) => c.access_runs(runs, miss),
            Inner::Fully(c) => {
                for (i, (l, again)) in runs.into_iter().enumerate() {
                    if !c.access(l) {
                        miss(i);
                        if again {
                            c.access(l);
                        }
                    }
                }
            }
        }
    }

    /// True when `line` is cached; changes nothing.
    pub fn contains(&self, line: u64) -> bool {
        match &self.inner {
            Inner::Set(c) => c.contains(line),
            Inner::Fully(c) => c.contains(line),
        }
    }

    /// Removes `line` if cached; true if it was there.
    pub fn invalidate(&mut self, line: u64) -> bool {
        match &mut self.inner {
            Inner::Set(c) => c.invalidate(line),
            Inner::Fully(c) => c.invalidate(line),
        }
    }

    /// The cached lines, in no particular order.
    pub fn resident_lines(&self) -> Vec<u64> {
        match &self.inner {
            Inner::Set(c) => c.resident_lines().collect(),
            Inner::Fully(c) => c.resident_lines().collect(),
        }
    }
}

impl Outcome {
    /// A miss that evicted `line`, or filled an empty way when `line` is the empty marker.
    #[inline]
    pub(super) fn miss(line: u64) -> Outcome {
        Outcome::Miss {
            evicted: (line != EMPTY).then_some(line),
        }
    }

    /// True for a hit.
    #[inline]
    pub fn is_hit(self) -> bool {
        matches!(self, Outcome::Hit)
    }
}
