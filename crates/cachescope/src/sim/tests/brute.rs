//! Brute-force reference caches: plain vectors, written for obviousness, not speed.

use std::collections::{HashSet, VecDeque};

use crate::sim::policy::VictimRng;
use crate::sim::three_c::ThreeCCounts;
use crate::sim::{Geometry, Policy};

/// A naive LRU stack of `capacity` lines, most recent first.
pub struct LruStack {
    pub lines: Vec<u64>,
    pub capacity: usize,
}

impl LruStack {
    pub fn new(capacity: usize) -> LruStack {
        LruStack {
            lines: Vec::new(),
            capacity,
        }
    }

    /// True on a hit.
    pub fn access(&mut self, line: u64) -> bool {
        let hit = match self.lines.iter().position(|&l| l == line) {
            Some(i) => {
                self.lines.remove(i);
                true
            }
            None => false,
        };
        self.lines.insert(0, line);
        self.lines.truncate(self.capacity);
        hit
    }
}

/// One set of a brute-force cache.
enum Set {
    Lru(LruStack),
    Fifo(VecDeque<u64>),
    /// Ways, `None` when empty.
    Random(Vec<Option<u64>>),
    /// Ways and a 1-based heap of tree bits (`bits[n]` true: the victim is in the right half).
    Plru(Vec<Option<u64>>, Vec<bool>),
}

/// A set-associative cache built from per-set vectors.
pub struct Brute {
    sets: Vec<Set>,
    assoc: usize,
    rng: Option<VictimRng>,
}

impl Brute {
    pub fn new(g: Geometry, p: Policy) -> Brute {
        let assoc = g.assoc() as usize;
        let sets = (0..g.sets())
            .map(|_| match p {
                Policy::Lru => Set::Lru(LruStack::new(assoc)),
                Policy::Fifo => Set::Fifo(VecDeque::new()),
                Policy::Random { .. } => Set::Random(vec![None; assoc]),
                Policy::Plru => Set::Plru(vec![None; assoc], vec![false; assoc]),
            })
            .collect();
        let rng = match p {
            Policy::Random { seed } => Some(VictimRng::new(seed)),
            _ => None,
        };
        Brute { sets, assoc, rng }
    }

    /// True on a hit.
    pub fn access(&mut self, line: u64) -> bool {
        let n = self.sets.len() as u64;
        let assoc = self.assoc;
        match &mut self.sets[(line % n) as usize] {
            Set::Lru(s) => s.access(line),
            Set::Fifo(q) => {
                if q.contains(&line) {
                    return true;
                }
                q.push_front(line);
                q.truncate(assoc);
                false
            }
            Set::Random(ways) => {
                if ways.contains(&Some(line)) {
                    return true;
                }
                let w = match ways.iter().position(Option::is_none) {
                    Some(w) => w,
                    None => self.rng.as_mut().unwrap().below(assoc as u32) as usize,
                };
                ways[w] = Some(line);
                false
            }
            Set::Plru(ways, bits) => {
                let (hit, way) = match ways.iter().position(|&w| w == Some(line)) {
                    Some(w) => (true, w),
                    None => {
                        let w = ways.iter().position(Option::is_none).unwrap_or_else(|| {
                            let mut node = 1;
                            while node < assoc {
                                node = 2 * node + usize::from(bits[node]);
                            }
                            node - assoc
                        });
                        ways[w] = Some(line);
                        (false, w)
                    }
                };
                // Walk up from the leaf, pointing each node away from the way used.
                let mut node = way + assoc;
                while node > 1 {
                    bits[node / 2] = node % 2 == 0;
                    node /= 2;
                }
                hit
            }
        }
    }
}

/// 3C counts computed naively: a brute-force cache, a naive LRU stack and a set of lines seen.
pub fn three_c(g: Geometry, p: Policy, trace: &[u64]) -> (u64, ThreeCCounts) {
    let mut cache = Brute::new(g, p);
    let mut shadow = LruStack::new(g.lines() as usize);
    let mut seen = HashSet::new();
    let mut counts = ThreeCCounts::default();
    let mut misses = 0;
    for &l in trace {
        let hit = cache.access(l);
        let shadow_hit = shadow.access(l);
        let first = seen.insert(l);
        if !hit {
            misses += 1;
            if first {
                counts.cold += 1;
            } else if shadow_hit {
                counts.conflict += 1;
            } else {
                counts.capacity += 1;
            }
        }
    }
    (misses, counts)
}
