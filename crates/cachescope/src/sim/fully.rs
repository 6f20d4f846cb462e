//! [`FullyAssoc`]: a fully associative cache of any number of lines, O(1) per access.
//!
//! A hash map (hashbrown with foldhash's fixed hasher) finds a line's slot. LRU and FIFO keep
//! the slots on an intrusive doubly linked list (indices into one `Vec`, most recent first):
//! LRU moves a hit to the front, FIFO does not; a miss in a full cache reuses the tail's slot.
//! Random replacement keeps lines in numbered slots and overwrites a uniformly drawn one, so
//! with the same seed it evicts exactly what a one-set [`SetAssoc`](super::SetAssoc) evicts:
//! both fill the lowest empty slot first and draw `below(assoc)` from the same generator.
//! Tree-PLRU and the RRIP family are not offered here (use a one-set `SetAssoc`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;
use hashbrown::hash_map::Entry;

use super::geometry::Geometry;
use super::policy::{Policy, VictimRng};
use super::{EMPTY, Outcome};
use crate::error::{Error, Result};

type SlotMap = HashMap<u64, u32, foldhash::fast::FixedState>;

/// The end of the list.
const NIL: u32 = u32::MAX;

/// Slots the map and lists reserve up front at most; beyond this they grow as lines arrive.
const MAX_RESERVE: usize = 1 << 22;

#[derive(Clone, Copy, Debug)]
struct Node {
    line: u64,
    prev: u32,
    next: u32,
}

/// Recency (LRU) or fill (FIFO) order of the slots, most recent first.
#[derive(Clone, Debug)]
struct List {
    nodes: Vec<Node>,
    head: u32,
    tail: u32,
    free: Vec<u32>,
}

impl List {
    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        match prev {
            NIL => self.head = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.nodes[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, i: u32) {
        let old = self.head;
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = old;
        match old {
            NIL => self.tail = i,
            h => self.nodes[h as usize].prev = i,
        }
        self.head = i;
    }
}

#[derive(Clone, Debug)]
enum Repl {
    /// LRU when `move_on_hit`, else FIFO.
    List { list: List, move_on_hit: bool },
    /// Lines by slot (EMPTY when free), the free slots below `slots.len()`, the generator.
    Random {
        slots: Vec<u64>,
        holes: BinaryHeap<Reverse<u32>>,
        rng: VictimRng,
    },
}

/// A fully associative cache. See the module documentation.
#[derive(Clone, Debug)]
pub struct FullyAssoc {
    geometry: Geometry,
    policy: Policy,
    capacity: usize,
    map: SlotMap,
    repl: Repl,
}

impl FullyAssoc {
    /// An empty cache holding `geometry.lines()` lines (the geometry's sets are ignored: every
    /// line may go anywhere). LRU, FIFO or random; tree-PLRU is refused.
    pub fn new(geometry: Geometry, policy: Policy) -> Result<FullyAssoc> {
        let capacity = usize::try_from(geometry.lines()).expect("lines fit in memory");
        let reserve = capacity.min(MAX_RESERVE);
        let list = |move_on_hit| Repl::List {
            list: List {
                nodes: Vec::with_capacity(reserve),
                head: NIL,
                tail: NIL,
                free: Vec::new(),
            },
            move_on_hit,
        };
        let repl = match policy {
            Policy::Lru => list(true),
            Policy::Fifo => list(false),
            Policy::Random { seed } => Repl::Random {
                slots: Vec::with_capacity(reserve),
                holes: BinaryHeap::new(),
                rng: VictimRng::new(seed),
            },
            p => {
                return Err(Error::InvalidParameter {
                    name: "replacement policy",
                    message: format!("{p} is simulated set by set: use a one-set SetAssoc"),
                });
            }
        };
        Ok(FullyAssoc {
            geometry,
            policy,
            capacity,
            map: SlotMap::with_capacity_and_hasher(reserve, Default::default()),
            repl,
        })
    }

    /// True for the policies this simulator runs: LRU, FIFO and random.
    pub fn supports(policy: Policy) -> bool {
        matches!(policy, Policy::Lru | Policy::Fifo | Policy::Random { .. })
    }

    /// An LRU cache of `lines` lines, for 3C shadows and tests (the line size is irrelevant).
    pub(super) fn lru_lines(lines: u64) -> Result<FullyAssoc> {
        FullyAssoc::new(Geometry::fully_associative(lines, 1)?, Policy::Lru)
    }

    /// The cache's shape.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The replacement policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// References `line`: true on a hit. A miss fills the line.
    #[inline]
    pub fn access(&mut self, line: u64) -> bool {
        self.access_outcome(line).is_hit()
    }

    /// References `line` and tells which line, if any, a miss evicted.
    pub fn access_outcome(&mut self, line: u64) -> Outcome {
        debug_assert_ne!(line, EMPTY, "line u64::MAX cannot be simulated");
        let full = self.map.len() >= self.capacity;
        let vacant = match self.map.entry(line) {
            Entry::Occupied(e) => {
                if let Repl::List {
                    list,
                    move_on_hit: true,
                } = &mut self.repl
                {
                    let i = *e.get();
                    if list.head != i {
                        list.unlink(i);
                        list.push_front(i);
                    }
                }
                return Outcome::Hit;
            }
            Entry::Vacant(v) => v,
        };
        let (slot, evicted) = match &mut self.repl {
            Repl::List { list, .. } => {
                if full {
                    let i = list.tail;
                    list.unlink(i);
                    list.push_front(i);
                    let node = &mut list.nodes[i as usize];
                    (i, Some(std::mem::replace(&mut node.line, line)))
                } else {
                    let i = match list.free.pop() {
                        Some(i) => i,
                        None => {
                            list.nodes.push(Node {
                                line,
                                prev: NIL,
                                next: NIL,
                            });
                            (list.nodes.len() - 1) as u32
                        }
                    };
                    list.nodes[i as usize].line = line;
                    list.push_front(i);
                    (i, None)
                }
            }
            Repl::Random { slots, holes, rng } => {
                if full {
                    let i = rng.below(self.capacity as u32);
                    (i, Some(std::mem::replace(&mut slots[i as usize], line)))
                } else if let Some(Reverse(i)) = holes.pop() {
                    slots[i as usize] = line;
                    (i, None)
                } else {
                    slots.push(line);
                    ((slots.len() - 1) as u32, None)
                }
            }
        };
        vacant.insert(slot);
        if let Some(old) = evicted {
            self.map.remove(&old);
        }
        Outcome::miss(evicted.unwrap_or(EMPTY))
    }

    /// True when `line` is cached; changes nothing.
    pub fn contains(&self, line: u64) -> bool {
        self.map.contains_key(&line)
    }

    /// Removes `line` if cached; true if it was there.
    pub fn invalidate(&mut self, line: u64) -> bool {
        let Some(i) = self.map.remove(&line) else {
            return false;
        };
        match &mut self.repl {
            Repl::List { list, .. } => {
                list.unlink(i);
                list.free.push(i);
            }
            Repl::Random { slots, holes, .. } => {
                slots[i as usize] = EMPTY;
                holes.push(Reverse(i));
            }
        }
        true
    }

    /// The cached lines, in no particular order.
    pub fn resident_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.map.keys().copied()
    }

    /// Lines cached now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
