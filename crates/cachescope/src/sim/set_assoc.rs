//! [`SetAssoc`]: a set-associative cache over line addresses, any policy.
//!
//! Tags are the full line addresses (as Cachegrind does), `assoc` per set in one flat vector.
//! For LRU a set is kept in order, most recent first, with empty ways at the end: a hit at
//! position `i` shifts positions `0..i` down by one (Cachegrind's own layout, cheap because
//! most hits are at position 0); a miss shifts the whole set and drops the last line. FIFO
//! keeps lines in their ways and a ring pointer per set at the oldest (the next to fill, empty
//! ways first), so a miss writes one way instead of shifting the set. Random, tree-PLRU and the
//! RRIP family (see [`rrip`](super::rrip)) keep lines in their ways. Each access is a scan of
//! one set:
//! O(assoc), which is what hardware-like associativities want; large fully associative caches
//! use [`FullyAssoc`](super::FullyAssoc) instead (see [`Cache`](super::Cache)).

mod fixed;

use super::geometry::Geometry;
use super::policy::{Policy, VictimRng, plru_touch, plru_victim};
use super::rrip::{Insertion, Rrip};
use super::{EMPTY, Outcome};
use crate::error::{Error, Result};

/// Largest associativity tree-PLRU supports (its bits live in one `u64` per set).
const MAX_PLRU_WAYS: u32 = 64;

/// The replacement state beyond the tags.
#[derive(Clone, Debug)]
enum State {
    Lru,
    /// Per set, the way of its oldest line (the next filled).
    Fifo(Vec<u32>),
    Random(VictimRng),
    /// Tree bits per set, log2(assoc), and per way the (keep, set) masks a touch applies.
    Plru(Vec<u64>, u32, Vec<(u64, u64)>),
    Rrip(Box<Rrip>),
}

/// A set-associative cache. See the module documentation.
#[derive(Clone, Debug)]
pub struct SetAssoc {
    geometry: Geometry,
    policy: Policy,
    assoc: usize,
    set_mask: u64,
    tags: Vec<u64>,
    state: State,
}

impl SetAssoc {
    /// An empty cache. Fails for tree-PLRU unless the associativity is a power of two up to 64.
    pub fn new(geometry: Geometry, policy: Policy) -> Result<SetAssoc> {
        let assoc = geometry.assoc();
        let lines = usize::try_from(geometry.lines()).expect("lines fit in memory");
        let rrip = |insertion, seed| {
            State::Rrip(Box::new(Rrip::new(insertion, seed, geometry.sets(), lines)))
        };
        let state = match policy {
            Policy::Srrip => rrip(Insertion::Static, 0),
            Policy::Brrip { seed } => rrip(Insertion::Bimodal, seed),
            Policy::Drrip { seed } => rrip(Insertion::Dueling, seed),
            Policy::Opt => {
                return Err(Error::InvalidParameter {
                    name: "replacement policy",
                    message: "OPT looks ahead in the trace: simulate it with cachescope::opt \
                              (simulate --policy opt with --cache, mrc --policy opt)"
                        .into(),
                });
            }
            Policy::Lru => State::Lru,
            Policy::Fifo => State::Fifo(vec![
                0;
                usize::try_from(geometry.sets())
                    .expect("sets fit in memory")
            ]),
            Policy::Random { seed } => State::Random(VictimRng::new(seed)),
            Policy::Plru => {
                if !assoc.is_power_of_two() || assoc > MAX_PLRU_WAYS {
                    return Err(Error::InvalidParameter {
                        name: "replacement policy",
                        message: format!(
                            "tree-PLRU needs a power-of-two associativity from 1 to 64, not \
                             {assoc}; use LRU, or {} ways",
                            if assoc > MAX_PLRU_WAYS {
                                "at most 64".to_string()
                            } else {
                                let below = 1u32 << (31 - assoc.leading_zeros());
                                format!("{below} or {}", below * 2)
                            }
                        ),
                    });
                }
                let sets = usize::try_from(geometry.sets()).expect("sets fit in memory");
                let depth = assoc.trailing_zeros();
                // A touch clears the path's bits that become 0 and sets those that become 1.
                let masks = (0..assoc)
                    .map(|w| (plru_touch(u64::MAX, w, depth), plru_touch(0, w, depth)))
                    .collect();
                State::Plru(vec![0; sets], depth, masks)
            }
        };
        Ok(SetAssoc {
            geometry,
            policy,
            assoc: assoc as usize,
            set_mask: geometry.sets() - 1,
            tags: vec![EMPTY; lines],
            state,
        })
    }

    /// The cache's shape.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The replacement policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    #[inline]
    fn set_start(&self, line: u64) -> usize {
        (line & self.set_mask) as usize * self.assoc
    }

    /// References `line`: true on a hit. A miss fills the line (write-allocate).
    #[inline]
    pub fn access(&mut self, line: u64) -> bool {
        self.access_outcome(line).is_hit()
    }

    /// References `line` and tells which line, if any, a miss evicted.
    #[inline]
    pub fn access_outcome(&mut self, line: u64) -> Outcome {
        debug_assert_ne!(line, EMPTY, "line u64::MAX cannot be simulated");
        let start = self.set_start(line);
        let set = &mut self.tags[start..start + self.assoc];
        match &mut self.state {
            State::Lru => ordered(set, line, true),
            State::Fifo(next) => fifo(set, &mut next[start / self.assoc], line),
            State::Random(rng) => {
                let (hit, empty) = scan(set, line);
                if hit.is_some() {
                    return Outcome::Hit;
                }
                let way = match empty {
                    Some(w) => w,
                    None => rng.below(set.len() as u32) as usize,
                };
                Outcome::miss(std::mem::replace(&mut set[way], line))
            }
            State::Plru(bits, depth, masks) => {
                let b = &mut bits[start / set.len()];
                let (hit, empty) = scan(set, line);
                let way = match hit {
                    Some(way) => way,
                    None => empty.unwrap_or_else(|| plru_victim(*b, *depth) as usize),
                };
                let (keep, put) = masks[way];
                *b = (*b & keep) | put;
                if hit.is_some() {
                    return Outcome::Hit;
                }
                Outcome::miss(std::mem::replace(&mut set[way], line))
            }
            State::Rrip(r) => {
                let (hit, empty) = scan(set, line);
                if let Some(w) = hit {
                    r.hit(start + w);
                    return Outcome::Hit;
                }
                let way = r.miss(line & self.set_mask, start, set.len(), empty) - start;
                Outcome::miss(std::mem::replace(&mut set[way], line))
            }
        }
    }

    /// DRRIP's policy selection counter PSEL now (`None` under every other policy): above
    /// `2^(PSEL_BITS−1) − 1` the follower sets insert as BRRIP, otherwise as SRRIP.
    pub fn psel(&self) -> Option<u32> {
        match &self.state {
            State::Rrip(r) => r.psel(),
            _ => None,
        }
    }

    /// References every line of `lines` in order; returns the number of misses. The results
    /// are those of [`SetAssoc::access`]; see [`SetAssoc::access_each`] for the speed.
    pub fn access_all(&mut self, lines: impl IntoIterator<Item = u64>) -> u64 {
        let mut misses = 0;
        self.access_each(lines, |_| misses += 1);
        misses
    }

    /// References every line of `lines` in order and calls `miss(i)` for each miss, `i` its
    /// position in `lines`. The policy is matched once, and LRU, FIFO and RRIP sets of 2, 4, 8
    /// or 16 ways are scanned as fixed-size arrays (the compiler unrolls and vectorises the
    /// compare); the results are those of [`SetAssoc::access`].
    pub fn access_each(&mut self, lines: impl IntoIterator<Item = u64>, miss: impl FnMut(usize)) {
        let lines = lines.into_iter();
        match (&self.state, self.assoc) {
            (State::Lru, 2) => self.ordered_fixed::<2>(lines, miss),
            (State::Lru, 4) => self.ordered_fixed::<4>(lines, miss),
            (State::Lru, 8) => self.ordered_fixed::<8>(lines, miss),
            (State::Lru, 16) => self.ordered_fixed::<16>(lines, miss),
            (State::Fifo(_), 2) => self.fifo_fixed::<2>(lines, miss),
            (State::Fifo(_), 4) => self.fifo_fixed::<4>(lines, miss),
            (State::Fifo(_), 8) => self.fifo_fixed::<8>(lines, miss),
            (State::Fifo(_), 16) => self.fifo_fixed::<16>(lines, miss),
            (State::Rrip(_), 2) => self.rrip_fixed::<2>(lines, miss),
            (State::Rrip(_), 4) => self.rrip_fixed::<4>(lines, miss),
            (State::Rrip(_), 8) => self.rrip8(lines, miss),
            (State::Rrip(_), 16) => self.rrip_fixed::<16>(lines, miss),
            (State::Lru, _) => {
                let (mask, assoc) = (self.set_mask, self.assoc);
                let mut miss = miss;
                for (i, line) in lines.enumerate() {
                    let start = (line & mask) as usize * assoc;
                    if !ordered(&mut self.tags[start..start + assoc], line, true).is_hit() {
                        miss(i);
                    }
                }
            }
            (State::Fifo(_) | State::Random(_) | State::Plru(..) | State::Rrip(_), _) => {
                let mut miss = miss;
                for (i, l) in lines.enumerate() {
                    if !self.access(l) {
                        miss(i);
                    }
                }
            }
        }
    }

    /// True when `line` is cached; changes nothing.
    pub fn contains(&self, line: u64) -> bool {
        let start = self.set_start(line);
        self.tags[start..start + self.assoc].contains(&line)
    }

    /// Removes `line` if cached (its way becomes empty); true if it was there.
    pub fn invalidate(&mut self, line: u64) -> bool {
        let start = self.set_start(line);
        let set = &mut self.tags[start..start + self.assoc];
        let Some(i) = set.iter().position(|&t| t == line) else {
            return false;
        };
        match &self.state {
            // Keep the order and the empty ways at the end.
            State::Lru => {
                set[i..].rotate_left(1);
                set[set.len() - 1] = EMPTY;
            }
            // Keep the ring's order from the oldest: the lines older than `i` move one way on,
            // and the hole goes to the oldest's way, filled next.
            State::Fifo(next) => {
                let (oldest, n) = (next[start / set.len()] as usize, set.len());
                let mut k = i;
                while k != oldest {
                    let older = (k + n - 1) % n;
                    set[k] = set[older];
                    k = older;
                }
                set[oldest] = EMPTY;
            }
            State::Random(_) | State::Plru(..) | State::Rrip(_) => set[i] = EMPTY,
        }
        true
    }

    /// The cached lines, in no particular order.
    pub fn resident_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.tags.iter().copied().filter(|&t| t != EMPTY)
    }
}

/// One pass over a set: the way holding `line` and the first empty way.
#[inline]
fn scan(set: &[u64], line: u64) -> (Option<usize>, Option<usize>) {
    let mut empty = None;
    for (i, &t) in set.iter().enumerate() {
        if t == line {
            return (Some(i), None);
        }
        if t == EMPTY && empty.is_none() {
            empty = Some(i);
        }
    }
    (None, empty)
}

/// FIFO on a set whose oldest line is in way `*next`.
#[inline]
fn fifo(set: &mut [u64], next: &mut u32, line: u64) -> Outcome {
    if set.contains(&line) {
        return Outcome::Hit;
    }
    let way = *next as usize;
    *next = ((way + 1) % set.len()) as u32;
    Outcome::miss(std::mem::replace(&mut set[way], line))
}

/// LRU (`move_on_hit`) on a set kept most recent first.
#[inline]
fn ordered(set: &mut [u64], line: u64, move_on_hit: bool) -> Outcome {
    if set[0] == line {
        return Outcome::Hit;
    }
    for i in 1..set.len() {
        if set[i] == line {
            if move_on_hit {
                for j in (1..=i).rev() {
                    set[j] = set[j - 1];
                }
                set[0] = line;
            }
            return Outcome::Hit;
        }
    }
    let last = set[set.len() - 1];
    for j in (1..set.len()).rev() {
        set[j] = set[j - 1];
    }
    set[0] = line;
    Outcome::miss(last)
}
