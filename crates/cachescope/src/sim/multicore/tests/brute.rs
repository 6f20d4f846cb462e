//! A brute-force multi-core machine: caches of any policy as vectors of sets (the single-core
//! tests' brute force, `sim/tests/brute.rs`), the shadow, the lines seen and lost as plain
//! vectors, the owners as a list. Written for obviousness, from the rules of docs/threads.md,
//! not from the fast model's code.

use crate::access::{AccessKind, ThreadId};
use crate::sim::tests::brute::Brute;
use crate::sim::{CacheCounts, Geometry, Policy};

/// One cache of the machine.
struct Lru {
    cache: Brute,
}

impl Lru {
    fn new(g: Geometry, policy: Policy) -> Lru {
        Lru {
            cache: Brute::new(g, policy),
        }
    }

    fn holds(&self, line: u64) -> bool {
        self.cache.holds(line)
    }

    /// True on a hit; the line evicted on a miss.
    fn access(&mut self, line: u64) -> (bool, Option<u64>) {
        self.cache.access_evicting(line)
    }

    fn invalidate(&mut self, line: u64) -> bool {
        self.cache.invalidate(line)
    }
}

/// One cache with its classes and, when write-backs are tracked, its dirty lines.
struct Unit {
    /// `Some(allocate)` when write-backs are tracked.
    writes: Option<bool>,
    dirty: Vec<u64>,
    cache: Lru,
    /// The fully associative LRU shadow, most recent last.
    shadow: Vec<u64>,
    capacity: usize,
    seen: Vec<u64>,
    lost: Vec<u64>,
    counts: CacheCounts,
}

impl Unit {
    fn new(g: Geometry, policy: Policy, writes: Option<bool>) -> Unit {
        Unit {
            writes,
            dirty: Vec::new(),
            cache: Lru::new(g, policy),
            shadow: Vec::new(),
            capacity: g.lines() as usize,
            seen: Vec::new(),
            lost: Vec::new(),
            counts: CacheCounts {
                writebacks: writes.map(|_| 0),
                writebacks_received: writes.map(|_| 0),
                ..CacheCounts::default()
            },
        }
    }

    /// Evicted `v`: the write-back if it was dirty.
    fn evicted(&mut self, v: Option<u64>) -> Option<u64> {
        let v = v?;
        let was = self.dirty.contains(&v);
        self.dirty.retain(|&l| l != v);
        if was {
            *self.counts.writebacks.as_mut().unwrap() += 1;
        }
        was.then_some(v)
    }

    /// A write-back from above: filled dirty. The evicted line, and the write-back it makes.
    fn receive(&mut self, line: u64) -> (Option<u64>, Option<u64>) {
        *self.counts.writebacks_received.as_mut().unwrap() += 1;
        let (_, evicted) = self.cache.access(line);
        if !self.dirty.contains(&line) {
            self.dirty.push(line);
        }
        (evicted, self.evicted(evicted))
    }

    /// Hit, evicted line, coherence miss, write-back, for `kind` (Store and Modify write).
    fn access(&mut self, line: u64, kind: AccessKind) -> (bool, Option<u64>, bool, Option<u64>) {
        let no_fill =
            self.writes == Some(false) && kind == AccessKind::Store && !self.cache.holds(line);
        let (hit, evicted) = if no_fill {
            (false, None)
        } else {
            self.cache.access(line)
        };
        if self.writes.is_some()
            && matches!(kind, AccessKind::Store | AccessKind::Modify)
            && !no_fill
            && !self.dirty.contains(&line)
        {
            self.dirty.push(line);
        }
        let writeback = if self.writes.is_some() {
            self.evicted(evicted)
        } else {
            None
        };
        let shadow_hit = self.shadow.contains(&line);
        self.shadow.retain(|&l| l != line);
        self.shadow.push(line);
        if self.shadow.len() > self.capacity {
            self.shadow.remove(0);
        }
        let first = !self.seen.contains(&line);
        if first {
            self.seen.push(line);
        }
        let c = &mut self.counts;
        c.refs += 1;
        if hit {
            c.hits += 1;
            return (true, None, false, None);
        }
        c.misses += 1;
        let was_lost = self.lost.contains(&line);
        self.lost.retain(|&l| l != line);
        if first {
            c.cold += 1;
        } else if !shadow_hit {
            c.capacity += 1;
        } else if was_lost {
            c.coherence += 1;
        } else {
            c.conflict += 1;
        }
        (false, evicted, !first && shadow_hit && was_lost, writeback)
    }
}

/// The machine. Units are kept as the fast model reports them: level by level, a private
/// level core by core.
pub struct Machine {
    cores: u32,
    /// (level, core or None for shared) of each unit.
    pub slots: Vec<(usize, Option<u32>)>,
    units: Vec<Unit>,
    split: bool,
    /// (line, core) for every line a core holds modified.
    owners: Vec<(u64, u32)>,
    pins: Vec<(ThreadId, u32)>,
    /// (thread, core) in order of first appearance.
    pub placement: Vec<(ThreadId, u32)>,
    /// (line, coherence misses).
    pub by_line: Vec<(u64, u64)>,
    /// `Some(allocate)` when write-backs are tracked.
    writes: Option<bool>,
}

impl Machine {
    /// `levels` top down, `(geometry, shared)`, the first preceded by `l1i` when split.
    pub fn new(
        cores: u32,
        l1i: Option<Geometry>,
        levels: &[(Geometry, bool)],
        pins: &[(ThreadId, u32)],
        writes: Option<bool>,
    ) -> Machine {
        Machine::with_policy(cores, l1i, levels, pins, writes, Policy::Lru)
    }

    /// [`Machine::new`] with `policy` at every cache; a seeded one draws from seed + level +
    /// core × levels (0 for a shared level), as the configuration documents it.
    pub fn with_policy(
        cores: u32,
        l1i: Option<Geometry>,
        levels: &[(Geometry, bool)],
        pins: &[(ThreadId, u32)],
        writes: Option<bool>,
        policy: Policy,
    ) -> Machine {
        let all: Vec<(Geometry, bool)> = l1i
            .iter()
            .map(|&g| (g, false))
            .chain(levels.iter().copied())
            .collect();
        let mut m = Machine {
            cores,
            slots: Vec::new(),
            units: Vec::new(),
            split: l1i.is_some(),
            owners: Vec::new(),
            pins: pins.to_vec(),
            placement: Vec::new(),
            by_line: Vec::new(),
            writes,
        };
        for (k, &(g, shared)) in all.iter().enumerate() {
            let cores: Vec<Option<u32>> = if shared {
                vec![None]
            } else {
                (0..cores).map(Some).collect()
            };
            for c in cores {
                let at = (k + c.unwrap_or(0) as usize * all.len()) as u64;
                let p = policy
                    .seed()
                    .map_or(policy, |s| policy.with_seed(s.wrapping_add(at)));
                m.slots.push((k, c));
                m.units.push(Unit::new(g, p, writes));
            }
        }
        m
    }

    pub fn counts(&self) -> Vec<CacheCounts> {
        self.units.iter().map(|u| u.counts).collect()
    }

    fn core_of(&mut self, t: ThreadId) -> u32 {
        if let Some(&(_, c)) = self.placement.iter().find(|&&(x, _)| x == t) {
            return c;
        }
        let unpinned = self
            .placement
            .iter()
            .filter(|(x, _)| !self.pins.iter().any(|(p, _)| p == x))
            .count() as u32;
        let c = match self.pins.iter().find(|&&(p, _)| p == t) {
            Some(&(_, c)) => c,
            None => unpinned % self.cores,
        };
        self.placement.push((t, c));
        c
    }

    /// The units of `core`'s private levels on one side, top down.
    fn private_path(&self, core: u32, instr: bool) -> Vec<usize> {
        (0..self.units.len())
            .filter(|&u| {
                let (k, c) = self.slots[u];
                c == Some(core) && (!self.split || if instr { k != 1 } else { k != 0 })
            })
            .collect()
    }

    fn owner(&self, line: u64) -> Option<u32> {
        self.owners
            .iter()
            .find(|&&(l, _)| l == line)
            .map(|&(_, c)| c)
    }

    fn holds_privately(&self, core: u32, line: u64) -> bool {
        (0..self.units.len())
            .any(|u| self.slots[u].1 == Some(core) && self.units[u].cache.holds(line))
    }

    /// The unit a write-back from `u` goes to: its core's next private level (an L1D never
    /// below an L1I), else the first shared level below; `None`: memory.
    fn below(&self, u: usize) -> Option<usize> {
        let (k, c) = self.slots[u];
        let private = (0..self.units.len())
            .filter(|&v| {
                let (k2, c2) = self.slots[v];
                c.is_some() && c2 == c && k2 > k && !(self.split && k2 == 1)
            })
            .min_by_key(|&v| self.slots[v].0);
        private.or_else(|| {
            (0..self.units.len())
                .filter(|&v| self.slots[v].1.is_none() && self.slots[v].0 > k)
                .min_by_key(|&v| self.slots[v].0)
        })
    }

    /// `line` written back from unit `u`, and on down.
    fn write_back(&mut self, mut u: usize, mut line: u64) {
        while let Some(next) = self.below(u) {
            let (evicted, again) = self.units[next].receive(line);
            if let (Some(v), Some(c)) = (evicted, self.slots[next].1) {
                self.release(c, v);
            }
            match again {
                Some(v) => (u, line) = (next, v),
                None => return,
            }
        }
    }

    /// `core` no longer holds `v` in any private cache: it owns it no more.
    fn release(&mut self, core: u32, v: u64) {
        let coherent = self.cores > 1 && self.slots.iter().any(|&(_, c)| c.is_some());
        if coherent && self.owner(v) == Some(core) && !self.holds_privately(core, v) {
            self.owners.retain(|&(l, _)| l != v);
        }
    }

    /// One access by `thread`.    /// One access by `thread`.
    pub fn access(&mut self, thread: ThreadId, kind: AccessKind, line: u64) {
        let core = self.core_of(thread);
        let instr = kind == AccessKind::Instr;
        if instr && !self.split {
            return;
        }
        let write = matches!(kind, AccessKind::Store | AccessKind::Modify);
        let path = self.private_path(core, instr);
        let has_private = self.slots.iter().any(|&(_, c)| c.is_some());
        let coherent = self.cores > 1 && has_private;
        let mut found = false;
        let mut asked = kind;
        for &u in &path {
            let (hit, evicted, coherence, writeback) = self.units[u].access(line, asked);
            if coherence {
                match self.by_line.iter_mut().find(|(l, _)| *l == line) {
                    Some(e) => e.1 += 1,
                    None => self.by_line.push((line, 1)),
                }
            }
            if let Some(v) = writeback {
                self.write_back(u, v);
            }
            if hit {
                found = true;
                break;
            }
            if let Some(v) = evicted {
                self.release(core, v);
            }
            asked = self.asked_below(asked);
        }
        if !found && coherent {
            if let Some(d) = self.owner(line).filter(|&d| d != core) {
                self.units[*path.last().unwrap()].counts.transfers += 1;
                if !write {
                    self.owners.retain(|&(l, _)| l != line);
                    // The owner's copies turn clean: one write-back from its last level.
                    let mut was_dirty = false;
                    for u in 0..self.units.len() {
                        if self.slots[u].1 == Some(d) && self.units[u].dirty.contains(&line) {
                            self.units[u].dirty.retain(|&l| l != line);
                            was_dirty = true;
                        }
                    }
                    if was_dirty {
                        let last = (0..self.units.len())
                            .filter(|&u| self.slots[u].1 == Some(d))
                            .max_by_key(|&u| self.slots[u].0)
                            .unwrap();
                        *self.units[last].counts.writebacks.as_mut().unwrap() += 1;
                        self.write_back(last, line);
                    }
                }
                found = true;
            }
        }
        if !found {
            for u in 0..self.units.len() {
                if self.slots[u].1.is_some() {
                    continue;
                }
                let (hit, _, _, writeback) = self.units[u].access(line, asked);
                if let Some(v) = writeback {
                    self.write_back(u, v);
                }
                if hit {
                    break;
                }
                asked = self.asked_below(asked);
            }
        }
        if write && coherent && self.owner(line) != Some(core) {
            self.owners.retain(|&(l, _)| l != line);
            // A store that filled no private cache of its core went on below: no owner.
            if self.holds_privately(core, line) || self.writes != Some(false) {
                self.owners.push((line, core));
            }
            for u in 0..self.units.len() {
                if matches!(self.slots[u].1, Some(c) if c != core) {
                    self.units[u].dirty.retain(|&l| l != line);
                    if self.units[u].cache.invalidate(line) {
                        self.units[u].counts.invalidations += 1;
                        self.units[u].lost.push(line);
                    }
                }
            }
        }
    }

    /// What a level's miss asks of the next: a store under no-write-allocate stays a store,
    /// anything else fetches the line.
    fn asked_below(&self, asked: AccessKind) -> AccessKind {
        if self.writes == Some(false) && asked == AccessKind::Store {
            AccessKind::Store
        } else {
            AccessKind::Load
        }
    }
}
