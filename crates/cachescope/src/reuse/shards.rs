//! SHARDS (Waldspurger, Park, Garthwaite & Ahmad, "Efficient MRC Construction with SHARDS",
//! FAST 2015): the LRU curve of every size from the stack distances of a spatially sampled
//! stream ([`crate::spatial`], docs/sampled.md).
//!
//! The stack distance `d` of a reuse among the sampled lines estimates `d / R` among all lines
//! (`R` the rate), and the reuse stands for `1 / R` reuses; a first reference stands for
//! `1 / R` cold misses. So `misses(C) = Σ_{d/R ≥ C} 1/R + cold / R`, and the miss ratio is
//! that over the full stream's data references, which the sampled batches count exactly
//! (SHARDS's adjustment: the shortfall or excess of sampled references against `R · N`
//! counts as hits, which is what dividing by `N` rather than by the weights does).
//!
//! The fixed-size variant (SHARDS_max): when the stream's limit falls, the lines whose hash
//! is above it leave the stack (`LiveSet::remove`), and each reuse counts with the rate in
//! force when it is made. On a full stream (a batch without sampling) every line is sampled at
//! rate 1 and the curve is the exact one (tested against [`super::StackDistanceAnalysis`]).
//!
//! Memory: about 40 bytes per sampled line (its timestamp in a map, its hash in a heap for the
//! fixed-size variant) and 8 bytes per histogram bin (exact to 4096 lines, then 256 bins per
//! octave).

use std::collections::BinaryHeap;

use super::Options;
use super::mrc::{Mrc, MrcPoint};
use super::timestamps::{LiveSet, MIN_CAPACITY};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::spatial::{Limit, LineHash};

/// Line → its live timestamp, for the sampled lines.
type Timestamps = hashbrown::HashMap<u64, u64, foldhash::fast::FixedState>;

/// Sampled stack distances; see the module documentation.
#[derive(Clone, Debug)]
pub struct ShardsAnalysis {
    options: Options,
    lines: Timestamps,
    live: LiveSet,
    /// `(hash, line)` of the sampled lines, largest hash on top (fixed-size streams only).
    by_hash: BinaryHeap<(u64, u64)>,
    /// The limit the stack's lines are under.
    limit: Limit,
    weights: Weighted,
    /// Weighted first references.
    cold: f64,
    /// Data references of the full stream.
    refs: u64,
    /// References sampled (all, on a full stream).
    sampled: u64,
    /// The line of the last access while it is still in the stack: referenced again at once,
    /// it is at distance 0 and the stack is left as it is (its timestamp stays the latest).
    last: Option<u64>,
}

impl ShardsAnalysis {
    /// An empty analysis at `options`' line size (instruction fetches are never counted).
    pub fn new(options: Options) -> ShardsAnalysis {
        ShardsAnalysis {
            options,
            lines: Timestamps::default(),
            live: LiveSet::new(MIN_CAPACITY),
            by_hash: BinaryHeap::new(),
            limit: Limit::ALL,
            weights: Weighted::default(),
            cold: 0.0,
            refs: 0,
            sampled: 0,
            last: None,
        }
    }

    /// The distances so far.
    pub fn finish(&self) -> ShardsDistances {
        ShardsDistances {
            line_size: self.options.line_size.bytes(),
            refs: self.refs,
            sampled: self.sampled,
            cold: self.cold,
            rate: self.limit.rate(),
            weights: self.weights.clone(),
        }
    }

    /// Sampled lines in the stack (the tests' bound on the tables that forget).
    pub fn held_lines(&self) -> usize {
        self.lines.len()
    }

    /// The line `line` referenced under `rate` (`weight` is `1 / rate`), `hash` the stream's
    /// line hash when it is sampled: the reference's stack distance among the sampled lines,
    /// `None` for a first reference. The hash is taken of new lines only (the heap's key).
    #[inline]
    fn access(
        &mut self,
        line: u64,
        hash: Option<&LineHash>,
        rate: f64,
        weight: f64,
    ) -> Option<u64> {
        if self.last == Some(line) {
            // A run of one line (94 % of a sampled sqlite3's references where a stack line
            // is sampled): nothing was referenced since, so no line moves in the stack.
            self.weights.add(0.0, weight);
            return Some(0);
        }
        self.last = Some(line);
        if self.live.is_full() {
            self.live.compact(self.lines.values_mut());
        }
        let now = self.live.now();
        match self.lines.insert(line, now) {
            Some(j) => {
                let d = self.live.reuse(j);
                self.weights.add(d as f64 / rate, weight);
                Some(d)
            }
            None => {
                self.live.insert();
                self.cold += weight;
                if let Some(h) = hash {
                    self.by_hash.push((h.of(line), line));
                }
                None
            }
        }
    }

    /// Drops the lines above `limit` (SHARDS_max).
    fn lower(&mut self, limit: Limit) {
        self.limit = limit;
        // The last line may leave the stack.
        self.last = None;
        while let Some(&(h, line)) = self.by_hash.peek() {
            if limit.admits(h) {
                break;
            }
            self.by_hash.pop();
            if let Some(j) = self.lines.remove(&line) {
                self.live.remove(j);
            }
        }
    }
}

impl Analysis for ShardsAnalysis {
    fn observe(&mut self, batch: &Batch) {
        self.observe_each(batch, |_, _| {});
    }
}

impl ShardsAnalysis {
    /// Observes `batch` and calls `each(line, distance)` for every counted reference, in
    /// order: its stack distance among the sampled lines in the stack (`None`: a first
    /// reference), before any weighting by the rate. So another analysis of the same sampled
    /// lines reads the distances without a stack of its own (the L1 of a sampled report's
    /// two-level model, `crate::report::sampled`).
    #[inline]
    pub fn observe_each(&mut self, batch: &Batch, mut each: impl FnMut(u64, Option<u64>)) {
        let shift = self.options.line_size.shift();
        let Some(s) = batch.sampling() else {
            for (&a, &k) in batch.addrs.iter().zip(&batch.kinds) {
                if k != AccessKind::Instr {
                    let line = a >> shift;
                    each(line, self.access(line, None, 1.0, 1.0));
                    self.refs += 1;
                    self.sampled += 1;
                }
            }
            return;
        };
        let hash = LineHash::with_key(s.key);
        for (n, &(start, limit)) in s.limits.iter().enumerate() {
            if limit < self.limit {
                self.lower(limit);
            }
            self.limit = limit;
            let end = s
                .limits
                .get(n + 1)
                .map_or(batch.len(), |&(e, _)| e as usize);
            let rate = limit.rate();
            let weight = 1.0 / rate;
            for &a in &batch.addrs[start as usize..end] {
                let line = a >> shift;
                each(line, self.access(line, Some(&hash), rate, weight));
            }
        }
        self.sampled += batch.len() as u64;
        self.refs += s.span.iter().map(|t| t.data()).sum::<u64>();
    }
}

/// What [`ShardsAnalysis`] measured: the weighted stack-distance histogram in full-stream
/// units, and the LRU curve it gives.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardsDistances {
    /// Line size in bytes.
    pub line_size: u64,
    /// Data references of the full stream.
    pub refs: u64,
    /// References sampled.
    pub sampled: u64,
    /// Estimated first references (distinct lines): sampled ones over their rate.
    pub cold: f64,
    /// The rate at the end.
    pub rate: f64,
    weights: Weighted,
}

impl ShardsDistances {
    /// Estimated reuses at a stack distance of `lines` or more (full-stream units).
    pub fn at_least(&self, lines: u64) -> f64 {
        self.weights.at_least(lines)
    }

    /// The estimated reuses per bin: `(lo, hi, weight)` with both ends included.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64, f64)> + '_ {
        self.weights.bins()
    }

    /// The LRU curve at `sizes_bytes`, method `shards`: misses per data reference of the full
    /// stream, cold included in `miss_ratio`. An empty stream has ratios 0.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        let refs = self.refs.max(1) as f64;
        let points = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / self.line_size;
                let warm = self.at_least(lines);
                MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some(((warm + self.cold) / refs).min(1.0)),
                    miss_ratio_warm: (warm / refs).min(1.0),
                }
            })
            .collect();
        Mrc {
            method: "shards".into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points,
        }
    }
}

/// Distances below this are binned exactly.
const EXACT: u64 = 1 << 12;
/// Bins per octave above it.
const PER_OCTAVE_BITS: u32 = 8;

/// Weights by distance: exact below [`EXACT`], then 256 bins per octave.
#[derive(Clone, Debug, Default, PartialEq)]
struct Weighted {
    bins: Vec<f64>,
}

impl Weighted {
    fn index(d: u64) -> usize {
        if d < EXACT {
            return d as usize;
        }
        let k = 63 - d.leading_zeros();
        let exact = EXACT.trailing_zeros();
        let mantissa = (d >> (k - PER_OCTAVE_BITS)) as usize & ((1 << PER_OCTAVE_BITS) - 1);
        EXACT as usize + (((k - exact) as usize) << PER_OCTAVE_BITS) + mantissa
    }

    /// The smallest and largest distance of bin `i`.
    fn range(i: usize) -> (u64, u64) {
        if i < EXACT as usize {
            return (i as u64, i as u64);
        }
        let j = i - EXACT as usize;
        let k = (j >> PER_OCTAVE_BITS) as u32 + EXACT.trailing_zeros();
        let m = (j & ((1 << PER_OCTAVE_BITS) - 1)) as u64;
        let step = 1u64 << (k - PER_OCTAVE_BITS);
        let lo = (1u64 << k) + m * step;
        (lo, lo + step - 1)
    }

    #[inline]
    fn add(&mut self, distance: f64, weight: f64) {
        // A distance beyond u64 saturates into the last octave.
        let i = Weighted::index(distance as u64);
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0.0);
        }
        self.bins[i] += weight;
    }

    /// Weight at `x` or more, the bin holding `x` taken in proportion.
    fn at_least(&self, x: u64) -> f64 {
        let i = Weighted::index(x);
        let mut sum: f64 = self.bins.iter().skip(i + 1).sum();
        if let Some(&w) = self.bins.get(i) {
            let (lo, hi) = Weighted::range(i);
            sum += w * (hi - x + 1) as f64 / (hi - lo + 1) as f64;
        }
        sum
    }

    fn bins(&self) -> impl Iterator<Item = (u64, u64, f64)> + '_ {
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0.0)
            .map(|(i, &w)| {
                let (lo, hi) = Weighted::range(i);
                (lo, hi, w)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::reuse::{StackDistanceAnalysis, sizes_log_range};
    use proptest::prelude::*;

    #[test]
    fn bins_cover_every_distance_once() {
        let mut last = None;
        for i in 0..(EXACT as usize + 3 * 256) {
            let (lo, hi) = Weighted::range(i);
            assert!(lo <= hi);
            if let Some(l) = last {
                assert_eq!(lo, l + 1, "bin {i}");
            }
            assert_eq!(Weighted::index(lo), i);
            assert_eq!(Weighted::index(hi), i);
            last = Some(hi);
        }
    }

    proptest! {
        /// A full stream is sampled at rate 1: the curve is the exact one.
        #[test]
        fn full_stream_is_exact(
            lines in proptest::collection::vec(0u64..300, 1..3000),
        ) {
            let batch: Batch = lines.iter().map(|&l| Access::load(l * 64, 8)).collect();
            let mut shards = ShardsAnalysis::new(Options::default());
            let mut exact = StackDistanceAnalysis::new(Options::default());
            shards.observe(&batch);
            exact.observe(&batch);
            let sizes = sizes_log_range(64, 64 << 10, 8).unwrap();
            let (a, b) = (shards.finish().mrc(&sizes), exact.finish().mrc(&sizes));
            for (p, q) in a.points.iter().zip(&b.points) {
                prop_assert!((p.miss_ratio.unwrap() - q.miss_ratio.unwrap()).abs() < 1e-12);
                prop_assert!((p.miss_ratio_warm - q.miss_ratio_warm).abs() < 1e-12);
            }
        }
    }

    /// Whole batches of a reader, for [`crate::trace::Trace::from_reader`].
    struct Whole(Option<Batch>);

    impl crate::trace::AccessReader for Whole {
        fn read_batch(&mut self, batch: &mut Batch) -> crate::Result<usize> {
            batch.clear();
            match self.0.take() {
                Some(b) => {
                    *batch = b;
                    Ok(batch.len())
                }
                None => Ok(0),
            }
        }
    }

    proptest! {
        /// SHARDS_max against brute force: an LRU list of the sampled lines, the lines above
        /// the limit dropped from it when the limit falls; each reuse weighs 1/R at its
        /// scaled distance.
        #[test]
        fn fixed_size_against_brute_force(
            lines in proptest::collection::vec(0u64..400, 1..3000),
            max in 5u64..60,
        ) {
            use crate::spatial::{SpatialFilter, SpatialOptions};
            let options = SpatialOptions { rate: 0.7, seed: 5, max_lines: Some(max), ..SpatialOptions::default() };
            let batch: Batch = lines.iter().map(|&l| Access::load(l * 64, 8)).collect();
            let mut trace = crate::trace::Trace::from_reader(
                Box::new(Whole(Some(batch))),
                crate::Source::Workload("test".into()),
            );
            trace.sampled(options, None).unwrap();
            let mut shards = ShardsAnalysis::new(Options::default());
            let mut b = Batch::new();
            let read = loop {
                match trace.read_batch(&mut b) {
                    Ok(0) => break Ok(()),
                    Ok(_) => shards.observe(&b),
                    Err(e) => break Err(e),
                }
            };
            // A stream of which no line is sampled is refused, not read as empty: only when
            // the filter keeps none of its lines.
            if let Err(e) = read {
                let mut filter = SpatialFilter::new(&options).unwrap();
                prop_assert!(!lines.iter().any(|&l| filter.keep(l)), "{}", e);
                return Ok(());
            }
            let got = shards.finish();
            // Brute force.
            let mut filter = SpatialFilter::new(&options).unwrap();
            let hash = options.hash();
            let mut stack: Vec<u64> = Vec::new();
            let (mut weights, mut cold) = (Vec::new(), 0.0);
            for &l in &lines {
                if !filter.keep(l) {
                    continue;
                }
                let limit = filter.limit();
                stack.retain(|&x| limit.admits(hash.of(x)));
                let rate = limit.rate();
                match stack.iter().position(|&x| x == l) {
                    Some(p) => {
                        stack.remove(p);
                        weights.push((p as f64 / rate, 1.0 / rate));
                    }
                    None => cold += 1.0 / rate,
                }
                stack.insert(0, l);
            }
            prop_assert!((got.cold - cold).abs() < 1e-9 * cold.max(1.0));
            prop_assert_eq!(got.refs, lines.len() as u64);
            for c in [1u64, 2, 3, 5, 8, 13, 40, 100] {
                let want: f64 = weights.iter().filter(|(d, _)| *d as u64 >= c).map(|(_, w)| w).sum();
                prop_assert!((got.at_least(c) - want).abs() < 1e-9 * want.max(1.0), "{} {} {}", c, got.at_least(c), want);
            }
        }
    }
}
