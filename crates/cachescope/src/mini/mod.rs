//! Miniature simulation (Waldspurger, Saemundsson, Ahmad & Park, "Cache Modeling and
//! Optimization using Miniature Simulations", USENIX ATC 2017): the curve of any policy
//! [`Cache`] simulates, from caches scaled down by a sampling rate.
//!
//! Lines are sampled spatially: line `L` is kept when `hash(L) < R · 2^64` (SplitMix64's
//! output function as the hash), so every reference to a kept line is kept. A cache of `S`
//! lines is emulated by a cache of `S · R` lines fed the kept references only; its miss ratio
//! is the estimate. Our readings: `S · R` is rounded to a whole cache (`max(1, round(S·R))`
//! lines fully associative; with `ways`, the number of sets rounded to a power of two), and
//! each size then samples at its own exact rate (scaled size / size), so the miniature is
//! exactly scaled; the hash is shared, so the sizes' samples nest.
//!
//! The estimate divides a miniature's misses by the references its rate should have kept,
//! `R · N` for `N` references counted, rather than by those it kept: the adjustment of SHARDS
//! (Waldspurger, Park, Garthwaite & Ahmad, FAST 2015, "SHARDS-adj"), which counts the
//! shortfall or excess of kept references as hits. A few hot lines decide how many references
//! a sample keeps, and whether they are kept changes the hits, not the misses. On the real
//! programs of docs/accuracy/mini.md it takes the mean error from about 1 pp to 0.2 pp.
//! [`MiniSim::unadjusted`] gives the plain ratio, misses over kept references.
//!
//! On a sampled stream ([`crate::spatial`], `--sampled`) the miniatures sample inside the
//! stream's sample ([`MiniSim::of_sample`]): `mix(line ^ key)` with the stream's key (the
//! hash above is key 0), thresholds no higher than the stream's, references counted from
//! the batches' spans. A miniature then keeps at most the stream's share of its cache, so the
//! small caches keep fewer sets than `min_sets` (docs/sampled.md measures what that costs).
//!
//! A policy whose state spans sets (DRRIP's duel) sees fewer sets in a miniature:
//! with fewer than 64 sets it has fewer leader sets, with one set none (it is then SRRIP).
//! Memory: the miniature caches and the kept distinct lines.

mod geometry;
mod lines;
#[cfg(test)]
mod tests;

use lines::Lines;

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::table::LineTable;
use crate::reuse::{Mrc, MrcPoint, Options, data_lines};
use crate::sim::{Cache, Geometry, Policy};
use crate::spatial::{Forgetting, Limit, mix};

/// The miniature caches standing for one size, one per policy.
#[derive(Clone, Debug)]
struct Mini {
    size_bytes: u64,
    lines: u64,
    /// Kept when `hash < threshold` (`None`: every line).
    threshold: Option<u64>,
    /// One cache per policy, in the order given, with its misses.
    caches: Vec<(Cache, u64)>,
    refs: u64,
}

/// Miniature simulations of one or more policies at many sizes; see the module documentation.
/// Several policies in one `MiniSim` share the sampling (one hash, one set of kept lines and
/// one threshold test per reference and size) and give the curves separate `MiniSim`s give.
#[derive(Clone, Debug)]
pub struct MiniSim {
    options: Options,
    policies: Vec<Policy>,
    caches: Vec<Mini>,
    /// Kept distinct lines and their hashes (for cold misses per size). A [`LineTable`], whose
    /// slots can be prefetched: on a million kept lines the witness's misses looked up one at
    /// a time in a hashbrown map were a quarter of the miniatures' time.
    seen: LineTable,
    max_threshold: Option<u64>,
    /// Per size, the first references of the lines `seen` forgot (a sampled stream's dropped
    /// lines, swept as [`Forgetting`] says): counted where `seen` would have counted them, so
    /// the curves are the same as with every line kept.
    forgotten: Vec<u64>,
    forgetting: Forgetting,
    /// The size whose caches see every kept line (its threshold is `max_threshold`; the last
    /// such, the largest when the sizes ascend, which misses least): a first reference misses
    /// in its first cache, so only those misses are looked up in `seen`.
    witness: Option<usize>,
    /// The sizes from the largest threshold (every line) down, so that each size's lines
    /// are filtered from the previous size's: the thresholds nest.
    order: Vec<usize>,
    /// The current batch's kept lines, then one size's share of them, then a scratch list
    /// to filter the next share into.
    kept: Lines,
    share: Lines,
    spare: Lines,
    /// Positions in `kept` of the witness's misses.
    missed: Vec<usize>,
    /// Every reference counted, kept or not.
    all_refs: u64,
    /// Misses over the references a size's rate should keep (SHARDS-adj), not those kept.
    adjusted: bool,
    /// Each size has a fully associative LRU cache after its policies' caches
    /// ([`MiniSim::with_fully_associative_lru`]).
    fully_lru: bool,
}

impl MiniSim {
    /// References counted so far, kept by a miniature or not.
    pub fn all_refs(&self) -> u64 {
        self.all_refs
    }

    /// Caches of `sizes_bytes` under `policy`, fully associative or of `ways` ways, sampled
    /// at `rate` in (0, 1]. Fails for an absurd rate, a size no geometry fits, or a policy the
    /// miniature geometry cannot have.
    pub fn new(
        options: Options,
        policy: Policy,
        ways: Option<u32>,
        sizes_bytes: &[u64],
        rate: f64,
    ) -> Result<MiniSim> {
        MiniSim::with_min_sets(options, policy, ways, sizes_bytes, rate, 1)
    }

    /// [`MiniSim::new`] where every set-associative miniature keeps at least `min_sets` sets
    /// (all of them, unsampled, for a cache that has no more): small caches are then simulated
    /// exactly and the miniatures of large ones are big enough for set dueling (DRRIP's 64
    /// leader sets) and for the sets' law of large numbers. Fully associative caches ignore it.
    pub fn with_min_sets(
        options: Options,
        policy: Policy,
        ways: Option<u32>,
        sizes_bytes: &[u64],
        rate: f64,
        min_sets: u64,
    ) -> Result<MiniSim> {
        MiniSim::with_policies(options, &[policy], ways, sizes_bytes, rate, min_sets)
    }

    /// [`MiniSim::with_min_sets`] for every one of `policies` (at least one) at once, sharing
    /// the sampling: [`MiniSim::finish_all`] gives the curve each policy's own `MiniSim` gives.
    pub fn with_policies(
        options: Options,
        policies: &[Policy],
        ways: Option<u32>,
        sizes_bytes: &[u64],
        rate: f64,
        min_sets: u64,
    ) -> Result<MiniSim> {
        MiniSim::of_sample(options, policies, ways, sizes_bytes, rate, min_sets, 1.0)
    }

    /// [`MiniSim::with_policies`] for a stream whose lines were sampled at `cap` already (a
    /// sampled stream, [`crate::spatial`]): no miniature keeps more than that share of a
    /// cache's sets (or lines), and a size that would keep less than one set (or line) is
    /// left out of the curves. The miniatures hash lines with the stream's key, so their
    /// samples nest inside the stream's, and count against its full references.
    pub fn of_sample(
        options: Options,
        policies: &[Policy],
        ways: Option<u32>,
        sizes_bytes: &[u64],
        rate: f64,
        min_sets: u64,
        cap: f64,
    ) -> Result<MiniSim> {
        if policies.is_empty() {
            return Err(Error::InvalidParameter {
                name: "miniature policies",
                message: "no policy given".into(),
            });
        }
        if !(rate > 0.0 && rate <= 1.0 && cap > 0.0 && cap <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "miniature sampling rate",
                message: format!("{rate} (of a sample at {cap}) is not in (0, 1]"),
            });
        }
        let ls = options.line_size.bytes();
        let mut caches = Vec::new();
        for &size_bytes in sizes_bytes {
            let lines = size_bytes / ls;
            let Some((geometry, scale)) =
                geometry::miniature(size_bytes, ways, ls, rate, min_sets, cap)?
            else {
                continue;
            };
            let threshold = (scale < 1.0).then(|| (scale * 2f64.powi(64)) as u64);
            caches.push(Mini {
                size_bytes,
                lines,
                threshold,
                caches: policies
                    .iter()
                    .map(|&p| Ok((Cache::new(geometry, p)?, 0)))
                    .collect::<Result<_>>()?,
                refs: 0,
            });
        }
        let max_threshold = if caches.iter().any(|c| c.threshold.is_none()) {
            None
        } else {
            caches.iter().filter_map(|c| c.threshold).max()
        };
        let witness = caches.iter().rposition(|c| c.threshold == max_threshold);
        let mut order: Vec<usize> = (0..caches.len()).collect();
        order.sort_by_key(|&i| {
            std::cmp::Reverse(
                caches[i]
                    .threshold
                    .map_or(u128::from(u64::MAX) + 1, u128::from),
            )
        });
        Ok(MiniSim {
            forgotten: vec![0; caches.len()],
            options,
            policies: policies.to_vec(),
            caches,
            seen: LineTable::default(),
            forgetting: Forgetting::default(),
            max_threshold,
            witness,
            order,
            kept: Lines::default(),
            share: Lines::default(),
            spare: Lines::default(),
            missed: Vec::new(),
            all_refs: 0,
            adjusted: true,
            fully_lru: false,
        })
    }

    /// Adds to each size a fully associative LRU cache of as many lines as its miniature, fed
    /// the same lines ([`MiniSim::finish_fully_associative`]): the sample's LRU in the very
    /// caches the policies ran in, without their conflicts (the sampled report's control
    /// variate, `report/sampled/curves.rs`).
    pub fn with_fully_associative_lru(mut self) -> Result<MiniSim> {
        if !self.fully_lru {
            for m in &mut self.caches {
                let g = m.caches[0].0.geometry();
                let fully = Geometry::fully_associative(g.size_bytes(), g.line_size().bytes())?;
                m.caches.push((Cache::new(fully, Policy::Lru)?, 0));
            }
            self.fully_lru = true;
        }
        Ok(self)
    }

    /// The plain estimate instead of the adjusted one: each size's misses over the references
    /// it kept (Waldspurger et al. 2017 as published), for comparisons.
    pub fn unadjusted(mut self) -> MiniSim {
        self.adjusted = false;
        self
    }

    /// The estimated curve of the first policy: method `mini`, the policy's name, one point
    /// per size.
    pub fn finish(&self) -> Mrc {
        self.curve(0)
    }

    /// The estimated curve of every policy, in the order given.
    pub fn finish_all(&self) -> Vec<Mrc> {
        (0..self.policies.len()).map(|i| self.curve(i)).collect()
    }

    /// The curve of [`MiniSim::with_fully_associative_lru`]'s caches, if they were added:
    /// method `mini`, policy `lru`, the sizes of [`MiniSim::finish_all`].
    pub fn finish_fully_associative(&self) -> Option<Mrc> {
        self.fully_lru.then(|| self.curve(self.policies.len()))
    }

    /// The curve of the `cache`-th cache of every size: a policy's, or after them the fully
    /// associative LRU one.
    fn curve(&self, cache: usize) -> Mrc {
        let policy = self.policies.get(cache).copied().unwrap_or(Policy::Lru);
        Mrc {
            method: "mini".into(),
            policy: policy.name().into(),
            line_size: self.options.line_size.bytes(),
            points: self
                .caches
                .iter()
                .zip(&self.forgotten)
                .map(|(c, &forgotten)| {
                    let cold = forgotten
                        + self
                            .seen
                            .values()
                            .filter(|&h| c.threshold.is_none_or(|t| h < t))
                            .count() as u64;
                    let refs = match c.threshold {
                        Some(t) if self.adjusted => t as f64 / 2f64.powi(64) * self.all_refs as f64,
                        _ => c.refs as f64,
                    }
                    .max(1.0);
                    let misses = c.caches[cache].1;
                    MrcPoint {
                        size_bytes: c.size_bytes,
                        lines: c.lines,
                        // The adjusted ratios can pass 1 when the kept lines are the cold ones.
                        miss_ratio: Some((misses as f64 / refs).min(1.0)),
                        miss_ratio_warm: ((misses - cold) as f64 / refs).min(1.0),
                    }
                })
                .collect(),
        }
    }
}

/// Cache by cache over a batch, each running through its share of the kept lines with its
/// sets hot and its policy matched once, rather than every cache at every reference; each
/// cache sees its lines in the same order, so the counts are the same. The sizes run from the
/// largest share down, each share filtered from the one before (the sizes that keep every
/// kept line run on `kept` itself), and as runs of references to one line (a reference right
/// after one to the same line hits and changes nothing but an RRIP line's RRPV).
impl Analysis for MiniSim {
    fn observe(&mut self, batch: &Batch) {
        let kept = &mut self.kept;
        kept.clear();
        // A sampled stream's lines hash with its key (the unkeyed hash is key 0) and its
        // references count in full.
        let key = batch.sampling().map_or(0, |s| s.key);
        // A line referenced again at once keeps its hash (a sixth of a full stream's
        // references, most of a sampled one's where a stack line is sampled).
        let mut last: Option<(u64, u64)> = None;
        for line in data_lines(batch, &self.options) {
            self.all_refs += 1;
            let h = match last {
                Some((l, h)) if l == line.0 => h,
                _ => mix(line.0 ^ key),
            };
            last = Some((line.0, h));
            if self.max_threshold.is_none_or(|t| h < t) {
                kept.push(line.0, h);
            }
        }
        if let Some(s) = batch.sampling() {
            self.all_refs += s.span.iter().map(|t| t.data()).sum::<u64>() - batch.len() as u64;
        }
        self.missed.clear();
        // The share in `share` (else `kept`) and its threshold.
        let (mut filtered, mut current) = (false, self.max_threshold);
        for &i in &self.order {
            let c = &mut self.caches[i];
            if c.threshold != current {
                let t = c
                    .threshold
                    .expect("the sizes keeping every line come first");
                if filtered {
                    self.spare.keep_below(&self.share, t);
                    std::mem::swap(&mut self.spare, &mut self.share);
                } else {
                    self.share.keep_below(&self.kept, t);
                }
                (filtered, current) = (true, c.threshold);
            }
            let lines = if filtered { &self.share } else { &self.kept };
            c.refs += lines.refs();
            for (p, (cache, misses)) in c.caches.iter_mut().enumerate() {
                if Some(i) == self.witness && p == 0 {
                    // The witness keeps every kept line: `lines` is `kept` in order.
                    let missed = &mut self.missed;
                    cache.access_runs(lines.steps(), |at| missed.push(at));
                    *misses += missed.len() as u64;
                } else {
                    let mut n = 0;
                    cache.access_runs(lines.steps(), |_| n += 1);
                    *misses += n;
                }
            }
        }
        // A line's hash never changes: setting it again keeps what the first miss set. The
        // slots of 32 misses are asked for at once, so that their cache misses overlap.
        for chunk in self.missed.chunks(32) {
            for &at in chunk {
                self.seen.prefetch(self.kept.lines[at]);
            }
            for &at in chunk {
                self.seen.replace(self.kept.lines[at], self.kept.hashes[at]);
            }
        }
        if let Some(s) = batch.sampling() {
            self.forget(s.limit());
        }
    }
}

impl MiniSim {
    /// Kept lines `seen` holds (the tests' bound on it).
    #[cfg(test)]
    pub(crate) fn held_lines(&self) -> usize {
        self.seen.len()
    }

    /// Keeps every line (the tests' reference).
    #[cfg(test)]
    pub(crate) fn never_forget(mut self) -> MiniSim {
        self.forgetting = Forgetting::never();
        self
    }

    /// Forgets the kept lines a sampled stream's `limit` dropped, when a sweep is due: they
    /// never come back, so only their first references, counted per size, are left to keep.
    /// The miniature caches keep them until they are evicted (each cache is bounded already;
    /// evicting them early would change the curves).
    fn forget(&mut self, limit: Limit) {
        if !self.forgetting.due(limit, self.seen.len()) {
            return;
        }
        let (caches, forgotten) = (&self.caches, &mut self.forgotten);
        // `seen` holds each line's hash under the stream's key: the filter's own test.
        self.seen.retain(|_, h| {
            if limit.admits(h) {
                return true;
            }
            for (c, n) in caches.iter().zip(forgotten.iter_mut()) {
                *n += u64::from(c.threshold.is_none_or(|t| h < t));
            }
            false
        });
        self.forgetting.swept(limit, self.seen.len());
    }
}
