//! [`ThreeCSweep`]: several caches with their 3C miss classes, the fully associative LRU
//! shadows of all of them replaced by one stack-distance computation.
//!
//! A [`SimAnalysis`] with 3C classes keeps, per cache, a set of the lines seen and a fully
//! associative LRU shadow of the cache's capacity (two hash-map operations per reference per
//! cache). But a fully associative LRU cache of `C` lines hits exactly when the reference's
//! stack distance is below `C` (Mattson et al. 1970; docs/definitions.md), and a first
//! reference is one without a stack distance. So one [`StackDistance`](crate::reuse::StackDistance) per reference classifies
//! the misses of every cache: cold without a distance, conflict when the distance is below the
//! cache's lines, capacity otherwise. The counts are those of [`SimAnalysis`] with
//! [`SimOptions::three_c`] and the first-byte mapping, one [`SimReport`] per cache; and the
//! distances' histogram is that of a [`StackDistanceAnalysis`], so a pass that wants both
//! computes the distances once. A probe cache ([`ThreeCSweep::set_probe`]) rides along the
//! same way for another analysis that wants per-reference outcomes (the phases' ground truth).
//!
//! [`SimAnalysis`]: super::SimAnalysis
//! [`SimOptions::three_c`]: super::SimOptions::three_c

use super::TwoLevelResult;
use super::geometry::Geometry;
use super::lazy_cache::LazyCache;
use super::level::MissStats;
use super::policy::Policy;
use super::simulate::{LevelReport, LineMapping, SimReport};
use super::three_c::{MissClass, ThreeCCounts};
use super::two_level_lru::TwoLevelLru;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::{Options, StackDistanceAnalysis, StackDistances};

/// Caches of one line size fed the data references, with their 3C classes from one stack
/// distance per reference: cold without a distance, conflict when the distance is below the
/// cache's lines (a fully associative LRU cache of that size would have hit), capacity
/// otherwise. Reports as one [`super::SimAnalysis`] with 3C classes per cache gives, and the
/// distances' histogram as [`StackDistanceAnalysis`] gives.
#[derive(Clone, Debug)]
pub struct ThreeCSweep {
    sd: StackDistanceAnalysis,
    caches: Vec<(LazyCache, MissStats)>,
    /// A two-level simulation fed the same distances ([`ThreeCSweep::with_two_level`]).
    two_level: Option<TwoLevelLru>,
    /// With a probe ([`ThreeCSweep::set_probe`]), the last of `caches`: the positions in the
    /// batch of the references it missed, in order.
    probe_misses: Option<Vec<usize>>,
    /// The current batch's lines and their distances, for the caches already built.
    lines: Vec<u64>,
    distances: Vec<Option<u64>>,
    /// Per cache, the position in the batch from which it runs over `lines` (after the
    /// distances are known); `usize::MAX` while it is not built.
    from: Vec<usize>,
}

impl ThreeCSweep {
    /// One cache per geometry (all with `options`' line size), each with `policy`, fed the
    /// references `options` counts (data references by default, as [`super::SimAnalysis`]).
    pub fn new(options: Options, geometries: &[Geometry], policy: Policy) -> Result<ThreeCSweep> {
        let Some(first) = geometries.first() else {
            return Err(Error::InvalidParameter {
                name: "3C caches",
                message: "no cache given".into(),
            });
        };
        if geometries
            .iter()
            .any(|g| g.line_size() != options.line_size)
        {
            return Err(Error::InvalidParameter {
                name: "3C caches",
                message: format!(
                    "the caches of one sweep have its line size, {} bytes (first: {first})",
                    options.line_size.bytes()
                ),
            });
        }
        let caches = geometries
            .iter()
            .map(|&g| {
                let stats = MissStats {
                    three_c: Some(ThreeCCounts::default()),
                    ..MissStats::default()
                };
                Ok((LazyCache::new(g, policy)?, stats))
            })
            .collect::<Result<_>>()?;
        Ok(ThreeCSweep {
            sd: StackDistanceAnalysis::new(options),
            caches,
            two_level: None,
            probe_misses: None,
            lines: Vec::new(),
            distances: Vec::new(),
            from: Vec::new(),
        })
    }

    /// Also feeds `two_level` every reference with its stack distance, so that the two-level
    /// simulation's L1 comes from the distances computed here.
    pub fn with_two_level(mut self, two_level: TwoLevelLru) -> ThreeCSweep {
        self.two_level = Some(two_level);
        self
    }

    /// Also simulates an LRU cache of `geometry` (the sweep's line size, else an error), not
    /// reported with the others, whose misses in each batch [`ThreeCSweep::batch_probe_misses`]
    /// lists: for another analysis of the same references that needs that cache's outcomes.
    pub fn set_probe(&mut self, geometry: Geometry) -> Result<()> {
        let line_size = self.caches[0].0.geometry().line_size();
        if geometry.line_size() != line_size {
            return Err(Error::InvalidParameter {
                name: "probe cache",
                message: format!("{geometry} has not the sweep's line size"),
            });
        }
        let probe = (LazyCache::new(geometry, Policy::Lru)?, MissStats::default());
        if self.probe_misses.is_some() {
            *self.caches.last_mut().expect("the probe is there") = probe;
        } else {
            self.caches.push(probe);
        }
        self.probe_misses = Some(Vec::new());
        Ok(())
    }

    /// With a probe, the positions (among the counted references) of the last batch's
    /// references that missed it, in order.
    pub fn batch_probe_misses(&self) -> Option<&[usize]> {
        self.probe_misses.as_deref()
    }

    /// The two-level simulation's counts, when [`ThreeCSweep::with_two_level`] added one.
    pub fn two_level(&self) -> Option<TwoLevelResult> {
        self.two_level.as_ref().map(TwoLevelLru::finish)
    }

    /// The stack distances of the references seen, as [`StackDistanceAnalysis::finish`].
    pub fn distances(&self) -> StackDistances {
        self.sd.finish()
    }

    /// The stack distance of each reference of the last batch observed, in order (`None`: a
    /// first reference), for another analysis of the same references to share.
    pub fn batch_distances(&self) -> &[Option<u64>] {
        &self.distances
    }

    /// One report per cache, in the order given, as [`super::SimAnalysis::finish`] gives it.
    pub fn finish(&self) -> Vec<SimReport> {
        let reported = self.caches.len() - usize::from(self.probe_misses.is_some());
        self.caches[..reported]
            .iter()
            .map(|(cache, stats)| SimReport {
                mapping: LineMapping::FirstByte,
                inclusion: None,
                levels: vec![LevelReport {
                    name: "cache",
                    geometry: cache.geometry(),
                    policy: cache.policy(),
                    stats: stats.clone(),
                    walks: None,
                }],
            })
            .collect()
    }
}

/// Counts one miss of a cache of `lines` lines, classified by its stack distance.
#[inline]
fn count_miss(stats: &mut MissStats, lines: u64, distance: Option<u64>) {
    stats.misses += 1;
    stats.line_misses += 1;
    let class = match distance {
        None => MissClass::Cold,
        Some(d) if d < lines => MissClass::Conflict,
        Some(_) => MissClass::Capacity,
    };
    if let Some(counts) = &mut stats.three_c {
        counts.add(class);
    }
}

/// The caches not yet built are fed during the distance computation (they only need the first
/// references, and their building needs the stack as it is then); the built ones afterwards,
/// cache by cache over the batch with their sets hot, each seeing the same lines in the same
/// order, so the counts are the same.
impl Analysis for ThreeCSweep {
    fn observe(&mut self, batch: &Batch) {
        let caches = &mut self.caches;
        let two_level = &mut self.two_level;
        // The probe is the last cache: its misses are listed, not counted.
        let probe = caches.len() - 1;
        let mut probe_misses = self.probe_misses.as_mut();
        if let Some(m) = probe_misses.as_mut() {
            m.clear();
        }
        let (lines, distances, from) = (&mut self.lines, &mut self.distances, &mut self.from);
        lines.clear();
        distances.clear();
        from.clear();
        from.extend(
            caches
                .iter()
                .map(|(c, _)| if c.is_built() { 0 } else { usize::MAX }),
        );
        self.sd.observe_each(batch, |stack, line, distance| {
            if let Some(t) = two_level.as_mut() {
                t.access(line, distance);
            }
            lines.push(line);
            distances.push(distance);
            // A cache not built hits every line seen before: only first references touch it.
            if distance.is_some() {
                return;
            }
            for (i, ((cache, stats), from)) in caches.iter_mut().zip(from.iter_mut()).enumerate() {
                if *from != usize::MAX {
                    continue;
                }
                let hit = cache.access(line, true, || stack.lines_by_recency());
                if cache.is_built() {
                    *from = lines.len();
                }
                if !hit {
                    match probe_misses.as_mut() {
                        Some(m) if i == probe => m.push(lines.len() - 1),
                        _ => count_miss(stats, cache.geometry().lines(), distance),
                    }
                }
            }
        });
        if let Some(t) = two_level.as_mut() {
            t.flush();
        }
        for (i, ((cache, stats), &from)) in caches.iter_mut().zip(from.iter()).enumerate() {
            // Every cache takes every reference, built or not.
            stats.refs += lines.len() as u64;
            stats.line_accesses += lines.len() as u64;
            let (Some(built), Some(rest)) = (cache.built(), lines.get(from..)) else {
                continue;
            };
            match probe_misses.as_mut() {
                Some(m) if i == probe => {
                    built.access_each(rest.iter().copied(), |miss| m.push(from + miss));
                }
                _ => {
                    let cache_lines = built.geometry().lines();
                    let rest_distances = &distances[from..];
                    built.access_each(rest.iter().copied(), |miss| {
                        count_miss(stats, cache_lines, rest_distances[miss]);
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::models::l2::TwoLevelAnalysis;
    use crate::sim::{SimAnalysis, SimOptions};
    use proptest::prelude::*;

    proptest! {
        /// The same reports as one SimAnalysis with 3C classes per cache, and the same
        /// two-level counts as TwoLevelAnalysis (LRU).
        #[test]
        fn equals_one_three_c_simulation_per_cache(
            trace in proptest::collection::vec((0u64..300, 0u8..3), 0..3000),
            split in 0usize..3000,
            l1_lines in 1u64..40,
        ) {
            let geometries: Vec<Geometry> = [(256, 1), (512, 2), (1024, 4), (4096, 8), (16384, 2)]
                .iter()
                .map(|&(size, ways)| Geometry::new(size, ways, 32).unwrap())
                .collect();
            let accesses: Vec<Access> = trace
                .iter()
                .map(|&(line, kind)| match kind {
                    0 => Access::load(line * 32 + 3, 4),
                    1 => Access::store(line * 32, 8),
                    _ => Access { kind: crate::AccessKind::Instr, ..Access::load(line * 32, 4) },
                })
                .collect();
            let split = split.min(accesses.len());
            let batches: Vec<Batch> = [&accesses[..split], &accesses[split..]]
                .iter()
                .map(|part| part.iter().copied().collect())
                .collect();
            let options = Options { line_size: crate::LineSize::new(32).unwrap(), ..Options::default() };
            let l2_sizes = [512, 1024, 4096, 8192];
            let mut sweep = ThreeCSweep::new(options, &geometries, Policy::Lru)
                .unwrap()
                .with_two_level(TwoLevelLru::new(32, l1_lines, &l2_sizes));
            let mut two_level =
                TwoLevelAnalysis::new(32, l1_lines, &l2_sizes, Policy::Lru).unwrap();
            let mut sd = StackDistanceAnalysis::new(options);
            let opts = SimOptions {
                mapping: LineMapping::FirstByte,
                three_c: true,
                ..SimOptions::default()
            };
            let mut sims: Vec<SimAnalysis> = geometries
                .iter()
                .map(|&g| SimAnalysis::cache(g, Policy::Lru, opts).unwrap())
                .collect();
            for b in &batches {
                sweep.observe(b);
                sd.observe(b);
                two_level.observe(b);
                sims.iter_mut().for_each(|s| s.observe(b));
            }
            let expect: Vec<SimReport> = sims.iter().map(|s| s.finish()).collect();
            prop_assert_eq!(sweep.finish(), expect);
            prop_assert_eq!(sweep.distances(), sd.finish());
            prop_assert_eq!(sweep.two_level(), Some(two_level.finish()));
        }
    }

    proptest! {
        /// A probe's misses are those of the same LRU cache simulated alone, reference by
        /// reference, across batches cut anywhere, and the probe changes no report.
        #[test]
        fn probe_misses_equal_one_cache_alone(
            trace in proptest::collection::vec((0u64..400, any::<bool>()), 0..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..4),
            probe in (0u32..5, 0u32..4),
        ) {
            let probe = Geometry::new(64 << (probe.0 + probe.1), 1 << probe.1, 64).unwrap();
            let accesses: Vec<Access> = trace
                .iter()
                .map(|&(line, data)| match data {
                    true => Access::load(line * 64 + 5, 4),
                    false => Access { kind: crate::AccessKind::Instr, ..Access::load(line * 64, 4) },
                })
                .collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(accesses.len())).collect();
            cuts.extend([0, accesses.len()]);
            cuts.sort_unstable();
            let geometries = [Geometry::new(1024, 2, 64).unwrap()];
            let mut plain = ThreeCSweep::new(Options::default(), &geometries, Policy::Lru).unwrap();
            let mut sweep = plain.clone();
            sweep.set_probe(probe).unwrap();
            let mut alone = crate::sim::Cache::new(probe, Policy::Lru).unwrap();
            for w in cuts.windows(2) {
                let batch: Batch = accesses[w[0]..w[1]].iter().copied().collect();
                sweep.observe(&batch);
                plain.observe(&batch);
                let expect: Vec<usize> = batch
                    .iter()
                    .filter(|a| a.kind != crate::AccessKind::Instr)
                    .enumerate()
                    .filter(|&(_, a)| !alone.access(a.addr >> 6))
                    .map(|(i, _)| i)
                    .collect();
                prop_assert_eq!(sweep.batch_probe_misses(), Some(&expect[..]));
            }
            prop_assert_eq!(sweep.finish(), plain.finish());
        }
    }

    #[test]
    fn mixed_line_sizes_or_no_cache_are_refused() {
        let a = Geometry::new(1024, 2, 32).unwrap();
        let b = Geometry::new(1024, 2, 64).unwrap();
        let options = Options::default(); // 64-byte lines
        assert!(ThreeCSweep::new(options, &[a, b], Policy::Lru).is_err());
        assert!(ThreeCSweep::new(options, &[b], Policy::Lru).is_ok());
        assert!(ThreeCSweep::new(options, &[], Policy::Lru).is_err());
        let mut sweep = ThreeCSweep::new(options, &[b], Policy::Lru).unwrap();
        assert!(sweep.set_probe(a).is_err());
        assert!(sweep.set_probe(b).is_ok());
    }
}
