//! The weighted miniature as it was first built (a `BTreeMap` by recency stamp per set and a
//! map of resident lines), kept for the tests only: [`super::WeightedLru`] must decide every
//! access as this does (the test in `super`).

use std::collections::BTreeMap;

use super::Outcome;
use crate::attribution::Map;
use crate::sim::SetIndex;

/// A resident line: its place in its set's recency order, its weight, and the bucket it was
/// filled for.
#[derive(Clone, Copy, Debug)]
struct Resident {
    stamp: u64,
    weight: u64,
    bucket: u32,
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
pub(super) struct Reference {
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

impl Reference {
    /// A miniature of `sets` sets, each holding `capacity` units of weight, of a cache of
    /// `full_sets` sets of `ways` ways.
    pub(super) fn new(sets: u64, capacity: u64, full_sets: u64, ways: usize) -> Reference {
        Reference {
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
