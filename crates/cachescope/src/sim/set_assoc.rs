//! [`SetAssoc`]: a set-associative cache over line addresses, any policy.
//!
//! Tags are the full line addresses (as Cachegrind does), `assoc` per set in one flat vector;
//! a line's set is [`SetIndex::of`] it (low bits, or the remainder for other set counts).
//! For LRU and FIFO a set is kept in order, most recent first, with empty ways at the end: a
//! hit at position `i` under LRU shifts positions `0..i` down by one (Cachegrind's own layout,
//! cheap because most hits are at position 0); a miss shifts the whole set and drops the last
//! line. Random, tree-PLRU and the RRIP family (see [`rrip`](super::rrip)) keep lines in their
//! ways. Each access is a scan of one set:
//! O(assoc), which is what hardware-like associativities want; large fully associative caches
//! use [`FullyAssoc`](super::FullyAssoc) instead (see [`Cache`](super::Cache)).

use super::geometry::Geometry;
use super::policy::{Policy, VictimRng, plru_touch, plru_victim};
use super::rrip::{Insertion, Rrip, victim, victim8};
use super::set_index::SetIndex;
use super::set_scan::{ordered, scan, ways_holding};
use super::{EMPTY, Outcome};
use crate::error::{Error, Result};

/// Largest associativity tree-PLRU supports (its bits live in one `u64` per set).
const MAX_PLRU_WAYS: u32 = 64;

/// The replacement state beyond the tags.
#[derive(Clone, Debug)]
enum State {
    Lru,
    Fifo,
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
    index: SetIndex,
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
            Policy::Fifo => State::Fifo,
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
            index: geometry.set_index(),
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
        self.index.of(line) as usize * self.assoc
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
            State::Fifo => ordered(set, line, false),
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
                let way = r.miss(self.index.of(line), start, set.len(), empty) - start;
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
        self.access_runs(lines.into_iter().map(|l| (l, false)), miss);
    }

    /// [`SetAssoc::access_each`] over runs: `(line, again)` references `line`, then once more
    /// when `again` (a hit, not reported). A run of one line is then one step: a reference
    /// right after one to the same line changes nothing but an RRIP line's RRPV, set to 0.
    pub fn access_runs(
        &mut self,
        runs: impl IntoIterator<Item = (u64, bool)>,
        miss: impl FnMut(usize),
    ) {
        let runs = runs.into_iter();
        match (&self.state, self.assoc) {
            (State::Lru, 2) => self.ordered_fixed::<2, true>(runs.map(|(l, _)| l), miss),
            (State::Lru, 4) => self.ordered_fixed::<4, true>(runs.map(|(l, _)| l), miss),
            (State::Lru, 8) => self.ordered_fixed::<8, true>(runs.map(|(l, _)| l), miss),
            (State::Lru, 16) => self.ordered_fixed::<16, true>(runs.map(|(l, _)| l), miss),
            (State::Fifo, 2) => self.ordered_fixed::<2, false>(runs.map(|(l, _)| l), miss),
            (State::Fifo, 4) => self.ordered_fixed::<4, false>(runs.map(|(l, _)| l), miss),
            (State::Fifo, 8) => self.ordered_fixed::<8, false>(runs.map(|(l, _)| l), miss),
            (State::Fifo, 16) => self.ordered_fixed::<16, false>(runs.map(|(l, _)| l), miss),
            (State::Rrip(_), 2) => self.rrip_fixed::<2>(runs, miss),
            (State::Rrip(_), 4) => self.rrip_fixed::<4>(runs, miss),
            (State::Rrip(_), 8) => self.rrip_fixed::<8>(runs, miss),
            (State::Rrip(_), 16) => self.rrip_fixed::<16>(runs, miss),
            (State::Lru, _) => {
                self.run(runs.map(|(l, _)| l), miss, |set, line| {
                    ordered(set, line, true)
                });
            }
            (State::Fifo, _) => {
                self.run(runs.map(|(l, _)| l), miss, |set, line| {
                    ordered(set, line, false)
                });
            }
            (State::Random(_) | State::Plru(..) | State::Rrip(_), _) => {
                let mut miss = miss;
                for (i, (l, again)) in runs.enumerate() {
                    if !self.access(l) {
                        miss(i);
                        if again {
                            self.access(l);
                        }
                    }
                }
            }
        }
    }

    /// Misses of `lines` under a policy that needs nothing but the set.
    #[inline]
    fn run(
        &mut self,
        lines: impl Iterator<Item = u64>,
        mut miss: impl FnMut(usize),
        f: impl Fn(&mut [u64], u64) -> Outcome,
    ) {
        let (index, assoc) = (self.index, self.assoc);
        for (i, line) in lines.enumerate() {
            let start = index.of(line) as usize * assoc;
            if !f(&mut self.tags[start..start + assoc], line).is_hit() {
                miss(i);
            }
        }
    }

    /// LRU (`MOVE`) or FIFO misses of `lines` with `A` ways.
    fn ordered_fixed<const A: usize, const MOVE: bool>(
        &mut self,
        lines: impl Iterator<Item = u64>,
        mut miss: impl FnMut(usize),
    ) {
        let index = self.index;
        for (i, line) in lines.enumerate() {
            let start = index.of(line) as usize * A;
            let set: &mut [u64; A] = (&mut self.tags[start..start + A])
                .try_into()
                .expect("a set has A ways");
            if !ordered(set, line, MOVE).is_hit() {
                miss(i);
            }
        }
    }

    /// RRIP-family misses of `runs` with `A` ways: the set's tags compared at once, a miss
    /// as [`Rrip::miss`] does it for [`SetAssoc::access_outcome`] (the RRPV to insert, then the
    /// first empty way or the victim), on the set's RRPVs as a fixed-size array; a run's
    /// second reference (a hit after a hit changes nothing) sets the filled line's RRPV to 0.
    fn rrip_fixed<const A: usize>(
        &mut self,
        runs: impl Iterator<Item = (u64, bool)>,
        mut miss: impl FnMut(usize),
    ) {
        let SetAssoc {
            index,
            tags,
            state: State::Rrip(r),
            ..
        } = self
        else {
            unreachable!("rrip_fixed runs RRIP caches only");
        };
        for (i, (line, again)) in runs.enumerate() {
            let set_index = index.of(line);
            let start = set_index as usize * A;
            let set: &mut [u64; A] = (&mut tags[start..start + A])
                .try_into()
                .expect("a set has A ways");
            let hits = ways_holding(set, line);
            if hits != 0 {
                r.hit(start + hits.trailing_zeros() as usize);
                continue;
            }
            let value = r.insertion(set_index);
            let rrpv: &mut [u8; A] = (&mut r.rrpv[start..start + A])
                .try_into()
                .expect("a set has A ways");
            let empty = ways_holding(set, EMPTY);
            let way = if empty != 0 {
                empty.trailing_zeros() as usize
            } else if let Ok(eight) = <&mut [u8; 8]>::try_from(&mut rrpv[..]) {
                victim8(eight)
            } else {
                victim(rrpv)
            };
            rrpv[way] = if again { 0 } else { value };
            set[way] = line;
            miss(i);
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
        match self.state {
            // Keep the order and the empty ways at the end.
            State::Lru | State::Fifo => {
                set[i..].rotate_left(1);
                set[set.len() - 1] = EMPTY;
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
