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

//!
//! Lines are slots of a table, numbered as [`WeightedLru::add`] meets them, so the caller's one
//! lookup of a line (its class, `per_structure.rs`) finds its slot; each set's resident lines
//! are a list through the slots, most recent first: a hit, a fill and an eviction cost a few
//! stores, not an ordered map's search (the first version's, `weighted/reference.rs`, which a
//! test holds this to).

use crate::sim::SetIndex;

#[cfg(test)]
mod reference;

/// No slot: the end of a list.
const NIL: u32 = u32::MAX;

/// A line of the sample: its weight, and while it is resident its neighbours in its set's
/// list and the bucket it was filled for.
#[derive(Clone, Copy, Debug)]
struct Slot {
    line: u64,
    weight: u64,
    /// The next more recent and the next less recent resident line of the set.
    newer: u32,
    older: u32,
    bucket: u32,
    resident: bool,
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

/// Each set's most recent distinct lines, newest first, at most `ways` of them: one table of
/// `ways` entries a set (an entry's place computed, not read from a list's header).
#[derive(Clone, Debug)]
struct Recents {
    ways: usize,
    entries: Vec<Recent>,
    lens: Vec<u32>,
}

impl Recents {
    fn new(sets: usize, ways: usize) -> Recents {
        let none = Recent {
            stamp: 0,
            line: 0,
            bucket: 0,
        };
        Recents {
            ways,
            entries: vec![none; sets * ways],
            lens: vec![0; sets],
        }
    }

    /// Set `set`'s recent lines, newest first.
    fn of(&self, set: usize) -> &[Recent] {
        let base = set * self.ways;
        &self.entries[base..base + self.lens[set] as usize]
    }

    /// Where `line` is in `set` (how many lines of the set are newer), if it is among them.
    fn find(&self, set: usize, line: u64) -> Option<(usize, u64)> {
        let of = self.of(set);
        of.iter()
            .position(|r| r.line == line)
            .map(|p| (p, of[p].stamp))
    }

    /// `line` met now in `set`; a hit keeps the bucket the line was filled for.
    fn touch(&mut self, set: usize, mut r: Recent, miss: bool) {
        let (base, len) = (set * self.ways, self.lens[set] as usize);
        let entries = &mut self.entries[base..base + self.ways];
        let at = match entries[..len].iter().position(|x| x.line == r.line) {
            Some(p) => {
                if !miss {
                    r.bucket = entries[p].bucket;
                }
                p
            }
            None if len < self.ways => {
                self.lens[set] += 1;
                len
            }
            None => self.ways - 1,
        };
        // Shift the newer ones down over the line's place (or the oldest, or the first free).
        entries.copy_within(0..at, 1);
        entries[0] = r;
    }
}

/// The bucket of the `n`-th newest (from 0) line other than `line` in two sets of recent
/// lines, each newest first, whose stamps are all distinct.
fn nth_newest_other(a: &[Recent], b: &[Recent], line: u64, mut n: usize) -> Option<u32> {
    let (mut i, mut j) = (0, 0);
    loop {
        let r = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.stamp > y.stamp => {
                i += 1;
                x
            }
            (_, Some(y)) => {
                j += 1;
                y
            }
            (Some(x), None) => {
                i += 1;
                x
            }
            (None, None) => return None,
        };
        if r.line == line {
            continue;
        }
        if n == 0 {
            return Some(r.bucket);
        }
        n -= 1;
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(super) struct WeightedLru {
    /// The full cache's sets and ways, and the recent lines at rate 1 of each set.
    full_index: SetIndex,
    ways: usize,
    full_recent: Recents,
    /// The recent lines at rate `ρ` of each miniature set.
    sampled_recent: Recents,
    index: SetIndex,
    /// Each set's most and least recent resident line.
    newest: Vec<u32>,
    oldest: Vec<u32>,
    load: Vec<u64>,
    capacity: u64,
    slots: Vec<Slot>,
    clock: u64,
}

impl WeightedLru {
    /// A miniature of `sets` sets, each holding `capacity` units of weight, of a cache of
    /// `full_sets` sets of `ways` ways.
    pub(super) fn new(sets: u64, capacity: u64, full_sets: u64, ways: usize) -> WeightedLru {
        WeightedLru {
            full_index: SetIndex::new(full_sets),
            ways,
            full_recent: Recents::new(full_sets as usize, ways),
            sampled_recent: Recents::new(sets as usize, ways),
            index: SetIndex::new(sets),
            newest: vec![NIL; sets as usize],
            oldest: vec![NIL; sets as usize],
            load: vec![0; sets as usize],
            capacity,
            slots: Vec::new(),
            clock: 0,
        }
    }

    /// A slot for `line`, of `weight` units (1 for a line at rate 1), not met before: the
    /// number [`WeightedLru::access`] takes. A table of 2³² − 1 lines is full (past the
    /// memory of the caller's map of lines, 16 bytes each at least).
    pub(super) fn add(&mut self, line: u64, weight: u64) -> u32 {
        let id = u32::try_from(self.slots.len())
            .ok()
            .filter(|&id| id != NIL)
            .expect("fewer than 2^32 - 1 sampled lines");
        self.slots.push(Slot {
            line,
            weight,
            newer: NIL,
            older: NIL,
            bucket: 0,
            resident: false,
        });
        id
    }

    /// The weight slot `id` was added with.
    pub(super) fn weight(&self, id: u32) -> u64 {
        self.slots[id as usize].weight
    }

    /// An access to the line of slot `id` (at rate 1, `full`, when its weight is one unit),
    /// filled for `bucket` on a miss.
    pub(super) fn access(&mut self, id: u32, full: bool, bucket: u32) -> Outcome {
        let line = self.slots[id as usize].line;
        let m = self.index.of(line) as usize;
        if !full {
            let out = self.aggregate(id, m, bucket);
            let r = Recent {
                stamp: self.clock,
                line,
                bucket,
            };
            self.sampled_recent.touch(m, r, out.miss);
            return out;
        }
        // In its own set: the newer lines at rate 1 there, and the lines at rate ρ of its
        // miniature set met since its last use.
        let j = self.full_index.of(line) as usize;
        let sampled = self.sampled_recent.of(m);
        let miss = match self.full_recent.find(j, line) {
            None => true,
            Some((newer, t)) => {
                newer + sampled.iter().take_while(|r| r.stamp > t).count() >= self.ways
            }
        };
        // The `ways`-th newest other line of the set, which the fill pushes out.
        let victim = if miss {
            let own = self.full_recent.of(j);
            nth_newest_other(own, sampled, line, self.ways - 1)
        } else {
            None
        };
        // The line's weight in the miniature's order, for the lines at rate ρ.
        self.aggregate(id, m, bucket);
        let r = Recent {
            stamp: self.clock,
            line,
            bucket,
        };
        self.full_recent.touch(j, r, miss);
        Outcome { miss, victim }
    }

    /// The miniature's weighted order: an access to slot `id` of set `set`.
    fn aggregate(&mut self, id: u32, set: usize, bucket: u32) -> Outcome {
        self.clock += 1;
        if self.slots[id as usize].resident {
            if self.newest[set] != id {
                self.unlink(id, set);
                self.push_newest(id, set);
            }
            return Outcome {
                miss: false,
                victim: None,
            };
        }
        let mut victim = None;
        self.load[set] += self.slots[id as usize].weight;
        while self.load[set] > self.capacity && self.oldest[set] != NIL {
            let old = self.oldest[set];
            self.unlink(old, set);
            let s = &mut self.slots[old as usize];
            s.resident = false;
            self.load[set] -= s.weight;
            victim.get_or_insert(s.bucket);
        }
        let s = &mut self.slots[id as usize];
        s.resident = true;
        s.bucket = bucket;
        self.push_newest(id, set);
        Outcome { miss: true, victim }
    }

    /// Takes resident slot `id` out of its set's list.
    fn unlink(&mut self, id: u32, set: usize) {
        let Slot { newer, older, .. } = self.slots[id as usize];
        match newer {
            NIL => self.newest[set] = older,
            n => self.slots[n as usize].older = older,
        }
        match older {
            NIL => self.oldest[set] = newer,
            o => self.slots[o as usize].newer = newer,
        }
    }

    /// Puts slot `id` at the most recent end of its set's list.
    fn push_newest(&mut self, id: u32, set: usize) {
        let first = self.newest[set];
        let s = &mut self.slots[id as usize];
        s.newer = NIL;
        s.older = first;
        match first {
            NIL => self.oldest[set] = id,
            f => self.slots[f as usize].newer = id,
        }
        self.newest[set] = id;
    }
}

#[cfg(test)]
mod tests {
    use super::reference::Reference;
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A [`WeightedLru`] addressed by line, each line's slot added at its first access.
    struct ByLine(WeightedLru, HashMap<u64, u32>);

    impl ByLine {
        fn new(sets: u64, capacity: u64, full_sets: u64, ways: usize) -> ByLine {
            ByLine(
                WeightedLru::new(sets, capacity, full_sets, ways),
                HashMap::new(),
            )
        }

        fn access(&mut self, line: u64, weight: u64, full: bool, bucket: u32) -> Outcome {
            let c = &mut self.0;
            let id = *self.1.entry(line).or_insert_with(|| c.add(line, weight));
            assert_eq!(c.weight(id), weight);
            c.access(id, full, bucket)
        }
    }

    #[test]
    fn a_heavy_line_evicts_light_ones_until_it_fits() {
        // One set of 4 units: four light lines, then a line of weight 3 evicts the three
        // oldest (the first of them named as the victim).
        let mut c = ByLine::new(1, 4, 1, 4);
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
        let mut c = ByLine::new(2, 2, 2, 2);
        assert!(c.access(0, 5, false, 0).miss);
        assert!(!c.access(0, 5, false, 0).miss);
        assert_eq!(c.access(2, 1, false, 1).victim, Some(0));
    }

    #[test]
    fn a_full_rate_line_keeps_its_own_sets_conflicts() {
        // A miniature of one set of 8 units (2 ways at ρ = 1/4) for a cache of 4 sets of 2
        // ways: three lines at rate 1 in one full set miss in turn, though the miniature
        // would hold all three; a line at rate ρ met between counts as one line of the set.
        let mut c = ByLine::new(1, 8, 4, 2);
        for l in [0, 4, 8, 0, 4, 8] {
            assert!(c.access(l, 1, true, 0).miss, "line {l}");
        }
        let mut c = ByLine::new(1, 8, 4, 2);
        assert!(c.access(0, 1, true, 0).miss);
        assert!(c.access(1, 4, false, 1).miss);
        assert!(!c.access(0, 1, true, 0).miss);
        assert!(c.access(5, 4, false, 2).miss);
        assert_eq!(c.access(4, 1, true, 3).victim, Some(0));
    }

    proptest! {
        #[test]
        fn decides_every_access_as_the_first_version(
            steps in prop::collection::vec((0u64..48, 0u32..5), 1..600),
            sampled in prop::collection::vec(any::<bool>(), 48),
            g in 0usize..5,
        ) {
            // Miniatures of 1-4 sets at ρ = 1/4, 1/2 or 1 (a line at rate ρ weighs `up`, one
            // at rate 1 weighs 1, every line at rate 1 when ρ is) of caches of 1-4 ways; each
            // line's class is fixed.
            let (sets, up, ways) = [(1, 4, 2), (2, 2, 1), (4, 4, 4), (1, 2, 3), (2, 1, 2)][g];
            let (capacity, full_sets) = (ways as u64 * up, sets * up);
            let mut old = Reference::new(sets, capacity, full_sets, ways);
            let mut new = ByLine::new(sets, capacity, full_sets, ways);
            for (line, bucket) in steps {
                let full = !sampled[line as usize] || up == 1;
                let w = if full { 1 } else { up };
                prop_assert_eq!(
                    new.access(line, w, full, bucket),
                    old.access(line, w, full, bucket),
                    "line {}", line
                );
            }
        }
    }
}
