//! [`WeightedLru`]: a set-associative LRU cache whose lines carry weights, the miniature of a
//! sample whose lines were taken at different rates (`per_structure.rs`). A line sampled at
//! rate `r` stands for `1 / r` lines of the full stream; in a miniature of `sets · ρ` sets
//! (each standing for `1 / ρ` of the full cache's sets) it takes `ρ / r` of a way. Weights are
//! kept in integer units of `ρ` ways: a line at rate `ρ` weighs `1 / ρ` units (one way), a line
//! at rate 1 weighs one unit, and a set holds `ways / ρ` units. A miss fills the line at the
//! most-recently-used end and evicts from the least-recently-used end until the set's load is
//! within its capacity again; the line just filled is never evicted, so a set holds at least
//! one line. With every line at weight `1 / ρ` this is the plain LRU miniature; at `ρ = 1` the
//! full cache itself (a test in `per_structure.rs` holds the exact attribution to it).

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

/// See the module documentation.
#[derive(Debug)]
pub(super) struct WeightedLru {
    index: SetIndex,
    /// Each set's resident lines by recency stamp (oldest first).
    order: Vec<BTreeMap<u64, u64>>,
    load: Vec<u64>,
    capacity: u64,
    lines: Map<u64, Resident>,
    clock: u64,
}

impl WeightedLru {
    /// A cache of `sets` sets each holding `capacity` units of weight.
    pub(super) fn new(sets: u64, capacity: u64) -> WeightedLru {
        WeightedLru {
            index: SetIndex::new(sets),
            order: vec![BTreeMap::new(); sets as usize],
            load: vec![0; sets as usize],
            capacity,
            lines: Map::default(),
            clock: 0,
        }
    }

    /// An access to `line`, of `weight` units, filled for `bucket` on a miss.
    pub(super) fn access(&mut self, line: u64, weight: u64, bucket: u32) -> Outcome {
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
        let mut c = WeightedLru::new(1, 4);
        for (l, b) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
            assert!(c.access(l, 1, b).miss);
        }
        assert!(!c.access(1, 1, 10).miss); // 1 is now the most recent
        let o = c.access(9, 3, 90);
        assert_eq!(o.victim, Some(20));
        assert!(!c.access(1, 1, 10).miss);
        assert!(c.access(2, 1, 20).miss);
    }

    #[test]
    fn a_line_heavier_than_its_set_is_still_filled() {
        let mut c = WeightedLru::new(2, 2);
        assert!(c.access(0, 5, 0).miss);
        assert!(!c.access(0, 5, 0).miss);
        assert_eq!(c.access(2, 1, 1).victim, Some(0));
    }
}
