//! [`WeightedLru`]: a set-associative LRU cache whose lines carry weights, the miniature of a
//! sample whose lines were taken at different rates (`per_structure.rs`). A line sampled at
//! rate `r` stands for `1 / r` lines of the full stream; in a miniature of `sets · ρ` sets
//! (each standing for `1 / ρ` of the full cache's sets) it takes `ρ / r` of a way. Weights are
//! kept in integer units of `ρ` ways: a line at rate `ρ` weighs `1 / ρ` units (one way), a line
//! at rate 1 weighs one unit, and a set holds `ways / ρ` units. A miss fills the line at the
//! most-recently-used end and evicts from the least-recently-used end until the set's load is
//! within its capacity again; the line just filled is never evicted, so a set holds at least
//! one line. With every line at weight `1 / ρ` this is the plain LRU miniature; at `ρ = 1` the
//! full cache itself (a test in `../tests.rs` holds the exact attribution to it).
//!
//! That order decides the hits of the lines at rate `ρ` only. A line at rate 1 is one line of
//! one set of the full cache, and aggregated with the other sets of its miniature set it would
//! lose its conflicts (a few hot lines in one set miss in the cache, not in a set of `ways / ρ`
//! units). So it hits when the distinct lines met in its own full-cache set since its last use
//! are fewer than the ways: the lines at rate 1 of that set, counted exactly, and the lines at
//! rate `ρ` of its miniature set, each standing for one line of every full-cache set the
//! miniature set stands for. With every line at rate 1 this is the full cache exactly, at any
//! `ρ` (a test in `../tests.rs`).

use std::collections::BTreeMap;

use super::super::Map;
use crate::sim::SetIndex;

/// A resident line: its place in its set's recency order, its weight, and the bucket it was
/// filled for.
#[derive(Clone, Copy, Debug)]
struct Resident {
    stamp: u64,
    weight: u64,
    bucket: u32,
}

/// One access's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Outcome {
    pub miss: bool,
    /// The bucket of the least recently used line the miss evicted first, if any.
    pub victim: Option<u32>,
}

/// A line met recently: when, which, and the bucket it was filled for.
#[derive(Clone, Copy, Debug)]
struct Recent {
    stamp: u64,
    line: u64,
    bucket: u32,
}

/// The most recent distinct lines of one set, newest first, at most `ways` of them.
#[derive(Clone, Debug, Default)]
struct Recents(Vec<Recent>);

impl Recents {
    /// Where `line` is (how many lines of the set are newer), if it is among them.
    fn find(&self, line: u64) -> Option<(usize, u64)> {
        self.0
            .iter()
            .position(|r| r.line == line)
            .map(|p| (p, self.0[p].stamp))
    }

    /// `line` met now; a hit keeps the bucket the line was filled for.
    fn touch(&mut self, mut r: Recent, ways: usize, miss: bool) {
        if let Some(p) = self.0.iter().position(|x| x.line == r.line) {
            let old = self.0.remove(p);
            if !miss {
                r.bucket = old.bucket;
            }
        }
        self.0.insert(0, r);
        self.0.truncate(ways);
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(super) struct WeightedLru {
    /// The full cache's sets and ways, and the recent lines at rate 1 of each set.
    full_index: SetIndex,
    ways: usize,
    full_recent: Vec<Recents>,
    /// The recent lines at rate `ρ` of each miniature set.
    sampled_recent: Vec<Recents>,
    index: SetIndex,
    /// Each set's resident lines by recency stamp (oldest first).
    order: Vec<BTreeMap<u64, u64>>,
    load: Vec<u64>,
    capacity: u64,
    lines: Map<u64, Resident>,
    clock: u64,
}

impl WeightedLru {
    /// A miniature of `sets` sets, each holding `capacity` units of weight, of a cache of
    /// `full_sets` sets of `ways` ways.
    pub(super) fn new(sets: u64, capacity: u64, full_sets: u64, ways: usize) -> WeightedLru {
        WeightedLru {
            full_index: SetIndex::new(full_sets),
            ways,
            full_recent: vec![Recents::default(); full_sets as usize],
            sampled_recent: vec![Recents::default(); sets as usize],
            index: SetIndex::new(sets),
            order: vec![BTreeMap::new(); sets as usize],
            load: vec![0; sets as usize],
            capacity,
            lines: Map::default(),
            clock: 0,
        }
    }

    /// An access to `line`, of `weight` units (1 for a line at rate 1, in which case `full`),
    /// filled for `bucket` on a miss.
    pub(super) fn access(&mut self, line: u64, weight: u64, full: bool, bucket: u32) -> Outcome {
        let m = self.index.of(line) as usize;
        if !full {
            let out = self.aggregate(line, weight, bucket);
            let r = Recent {
                stamp: self.clock,
                line,
                bucket,
            };
            self.sampled_recent[m].touch(r, self.ways, out.miss);
            return out;
        }
        // In its own set: the newer lines at rate 1 there, and the lines at rate ρ of its
        // miniature set met since its last use.
        let j = self.full_index.of(line) as usize;
        let own = &self.full_recent[j];
        let sampled = &self.sampled_recent[m];
        let miss = match own.find(line) {
            None => true,
            Some((newer, t)) => {
                newer + sampled.0.iter().filter(|r| r.stamp > t).count() >= self.ways
            }
        };
        let victim = miss.then(|| {
            // The `ways`-th newest other line of the set, which the fill pushes out.
            let mut others: Vec<&Recent> = own
                .0
                .iter()
                .chain(&sampled.0)
                .filter(|r| r.line != line)
                .collect();
            others.sort_unstable_by_key(|r| std::cmp::Reverse(r.stamp));
            others.get(self.ways - 1).map(|r| r.bucket)
        });
        // The line's weight in the miniature's order, for the lines at rate ρ.
        self.aggregate(line, weight, bucket);
        let r = Recent {
            stamp: self.clock,
            line,
            bucket,
        };
        self.full_recent[j].touch(r, self.ways, miss);
        Outcome {
            miss,
            victim: victim.flatten(),
        }
    }

    /// The miniature's weighted order: an access of `weight` units.
    fn aggregate(&mut self, line: u64, weight: u64, bucket: u32) -> Outcome {
        self.clock += 1;
        let set = self.index.of(line) as usize;
        if let Some(r) = self.lines.get_mut(&line) {
            self.order[set].remove(&r.stamp);
            r.stamp = self.clock;
            self.order[set].insert(self.clock, line);
            return Outcome {
                miss: false,
                victim: None,
            };
        }
        let mut victim = None;
        self.load[set] += weight;
        while self.load[set] > self.capacity && !self.order[set].is_empty() {
            let (_, old) = self.order[set].pop_first().expect("the set is not empty");
            let r = self
                .lines
                .remove(&old)
                .expect("an ordered line is resident");
            self.load[set] -= r.weight;
            victim.get_or_insert(r.bucket);
        }
        self.order[set].insert(self.clock, line);
        self.lines.insert(
            line,
            Resident {
                stamp: self.clock,
                weight,
                bucket,
            },
        );
        Outcome { miss: true, victim }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heavy_line_evicts_light_ones_until_it_fits() {
        // One set of 4 units: four light lines, then a line of weight 3 evicts the three
        // oldest (the first of them named as the victim).
        let mut c = WeightedLru::new(1, 4, 1, 4);
        for (l, b) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
            assert!(c.access(l, 1, false, b).miss);
        }
        assert!(!c.access(1, 1, false, 10).miss); // 1 is now the most recent
        let o = c.access(9, 3, false, 90);
        assert_eq!(o.victim, Some(20));
        assert!(!c.access(1, 1, false, 10).miss);
        assert!(c.access(2, 1, false, 20).miss);
    }

    #[test]
    fn a_line_heavier_than_its_set_is_still_filled() {
        let mut c = WeightedLru::new(2, 2, 2, 2);
        assert!(c.access(0, 5, false, 0).miss);
        assert!(!c.access(0, 5, false, 0).miss);
        assert_eq!(c.access(2, 1, false, 1).victim, Some(0));
    }

    #[test]
    fn a_full_rate_line_keeps_its_own_sets_conflicts() {
        // A miniature of one set of 8 units (2 ways at ρ = 1/4) for a cache of 4 sets of 2
        // ways: three lines at rate 1 in one full set miss in turn, though the miniature
        // would hold all three; a line at rate ρ met between counts as one line of the set.
        let mut c = WeightedLru::new(1, 8, 4, 2);
        for l in [0, 4, 8, 0, 4, 8] {
            assert!(c.access(l, 1, true, 0).miss, "line {l}");
        }
        let mut c = WeightedLru::new(1, 8, 4, 2);
        assert!(c.access(0, 1, true, 0).miss);
        assert!(c.access(1, 4, false, 1).miss);
        assert!(!c.access(0, 1, true, 0).miss);
        assert!(c.access(5, 4, false, 2).miss);
        assert_eq!(c.access(4, 1, true, 3).victim, Some(0));
    }
}
