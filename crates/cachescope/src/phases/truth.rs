//! The ground truth: each interval's L2 hit rate from the exact simulator.
//!
//! The L2 ([`PhaseOptions::l2`], exact [`Cache`] under [`PhaseOptions::policy`]) sees every data
//! reference (loads, stores and modifies, one lookup each at the line of the first byte), or,
//! with [`PhaseOptions::l1`], the L1's misses (non-inclusive, no write-backs: the model of
//! `sim`). The caches stay warm across intervals: interval `j`'s hit rate is what a full
//! simulation sees during `j`. An interval with no L2 access has hit rate 1 (nothing missed).
//! A pass that simulates the same L2 anyway hands over its misses instead
//! ([`GroundTruth::fed`]: the report's 3C sweep, `crate::sim::ThreeCSweep::set_probe`).

use super::options::PhaseOptions;
use super::signature::Signer;
use crate::error::Result;
use crate::sim::Cache;

/// L2 accesses and hits of one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct L2Counts {
    /// References that reached the L2.
    pub accesses: u64,
    /// Those that hit.
    pub hits: u64,
}

impl L2Counts {
    /// Hits over accesses; 1 when there was no access.
    pub fn hit_rate(self) -> f64 {
        if self.accesses == 0 {
            1.0
        } else {
            self.hits as f64 / self.accesses as f64
        }
    }
}

/// An optional L1 in front of an L2, both empty at first.
#[derive(Clone, Debug)]
pub(crate) struct Caches {
    l1: Option<(Cache, u32)>,
    l2: Cache,
    l2_shift: u32,
}

impl Caches {
    pub(crate) fn new(o: &PhaseOptions) -> Result<Caches> {
        let l1 = match o.l1 {
            Some(g) => Some((Cache::new(g, o.policy)?, g.line_size().shift())),
            None => None,
        };
        Ok(Caches {
            l1,
            l2: Cache::new(o.l2, o.policy)?,
            l2_shift: o.l2.line_size().shift(),
        })
    }

    /// Simulates the data references at `addrs`, adding to `counts`.
    #[inline]
    pub(crate) fn run(&mut self, addrs: &[u64], counts: &mut L2Counts) {
        let shift = self.l2_shift;
        match &mut self.l1 {
            None => {
                let misses = self.l2.access_all(addrs.iter().map(|a| a >> shift));
                counts.accesses += addrs.len() as u64;
                counts.hits += addrs.len() as u64 - misses;
            }
            Some((l1, l1_shift)) => {
                for &a in addrs {
                    if !l1.access(a >> *l1_shift) {
                        counts.accesses += 1;
                        counts.hits += u64::from(self.l2.access(a >> shift));
                    }
                }
            }
        }
    }
}

/// Warm simulation over the whole trace, with counts per interval.
#[derive(Clone, Debug)]
pub(crate) struct GroundTruth {
    /// `None` when the misses are fed ([`GroundTruth::feed_misses`]).
    caches: Option<Caches>,
    current: L2Counts,
    done: Vec<L2Counts>,
}

impl GroundTruth {
    pub(crate) fn new(o: &PhaseOptions) -> Result<GroundTruth> {
        Ok(GroundTruth {
            caches: Some(Caches::new(o)?),
            current: L2Counts::default(),
            done: Vec::new(),
        })
    }

    /// A ground truth told each reference's outcome ([`GroundTruth::feed_misses`]) instead of
    /// simulating its caches.
    pub(crate) fn fed(mut self) -> GroundTruth {
        self.caches = None;
        self
    }

    /// True when made with [`GroundTruth::fed`].
    pub(crate) fn is_fed(&self) -> bool {
        self.caches.is_none()
    }

    /// Counts `refs` L2 references of the current interval, `misses` of which missed.
    #[inline]
    pub(crate) fn feed_misses(&mut self, refs: usize, misses: usize) {
        self.current.accesses += refs as u64;
        self.current.hits += (refs - misses) as u64;
    }

    /// Counts of every finished interval.
    pub(crate) fn intervals(&self) -> &[L2Counts] {
        &self.done
    }

    /// Merges finished intervals in pairs, adding their counts ([`crate::phases::merge`]).
    pub(crate) fn merge_pairs(&mut self, from: usize, pairs: usize) {
        crate::phases::merge::merge_pairs(&mut self.done, 1, from, pairs, |a, b| L2Counts {
            accesses: a.accesses + b.accesses,
            hits: a.hits + b.hits,
        });
    }
}

impl Signer for GroundTruth {
    #[inline]
    fn feed(&mut self, addrs: &[u64], _column: usize) {
        let caches = self
            .caches
            .as_mut()
            .expect("a ground truth not fed simulates");
        caches.run(addrs, &mut self.current);
    }

    fn close(&mut self) {
        self.done.push(std::mem::take(&mut self.current));
    }
}
