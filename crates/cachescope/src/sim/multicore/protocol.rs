//! The path of one reference through the machine and the coherence protocol
//! (docs/threads.md, "Coherence").
//!
//! A core looks a line up in its private levels top down, as the single-core non-inclusive
//! hierarchy does: each level fills on its own miss. When every private level misses and
//! another core holds the line modified, that core supplies it (a transfer: the shared levels
//! are not asked, and on a read the owner's copy becomes shared); otherwise the shared levels
//! are asked in turn. A write (store or modify) then makes the writer the line's one owner:
//! every other core's private copies are invalidated.
//!
//! The states are MESI's, kept where they are cheap: presence is the caches' own, and the one
//! fact presence does not give, which core holds a line modified, is a map written on a
//! change of owner only. A core writing a line it already owns, the common case, invalidates
//! nothing, and usually finds that out without the map: each core keeps a memo of lines it
//! owns ([`Hints`]), a line removed from it wherever the core's ownership ends. Exclusive and
//! shared are not told apart: no count depends on it.

use hashbrown::hash_map::Entry;

use super::MultiCore;
use super::timing::Found;
use super::unit::Class;
use crate::memo::{LowBits, Memo};
use crate::sim::{Op, Outcome};

/// Entries of each core's memo of the lines it owns (a power of two).
pub(super) const HINTS: usize = 1024;

/// One core's memo of lines it owns: a line there is one the owner map gives the core.
pub(super) type Hints = Memo<(), LowBits, HINTS>;

impl MultiCore {
    /// One reference by `core` (for the thread in place `slot`) to `line` for `op` (a store or
    /// a modify writes), from the instruction side (`instr`, split L1 only) or the data side.
    /// The reference was made at byte `addr` by instruction `pc` (what the prefetchers learn
    /// from). Returns where it was served and whether it invalidated other cores' copies.
    #[inline]
    pub(super) fn reference(
        &mut self,
        core: u32,
        slot: usize,
        line: u64,
        op: Op,
        instr: bool,
        at: (u64, u64),
    ) -> (Found, bool) {
        let c = core as usize;
        let write = op.writes();
        let depth = if instr { &self.instr[c] } else { &self.data[c] }.len();
        let mut served = None;
        // What each level is asked: a fill is fetched as a read; a store that a level did not
        // allocate goes on as a store.
        let mut asked = op;
        let mut last = None;
        for i in 0..depth {
            let u = if instr {
                self.instr[c][i]
            } else {
                self.data[c][i]
            };
            last = Some(u);
            let (outcome, class, writeback) = self.units[u].access(line, asked, at);
            self.tally(slot, self.slots[u].0, class);
            if class == Class::Coherence {
                if let Some(map) = &mut self.by_line {
                    *map.entry(line).or_insert(0) += 1;
                }
            }
            if let Some(v) = writeback {
                self.write_back(u, v);
            }
            if self.prefetching {
                self.after_prefetch_fills(u, Some(core));
            }
            match outcome {
                Outcome::Hit => {
                    served = Some(Found::Level(self.slots[u].0));
                    break;
                }
                Outcome::Miss { evicted: Some(v) } => self.release_if_gone(core, v),
                Outcome::Miss { .. } => {}
            }
            asked = self.asked_below(u, asked);
        }
        if served.is_none() && self.coherent && !self.owner.is_empty() {
            if let Some(&owner) = self.owner.get(&line) {
                if owner != core {
                    let last = last.expect("a coherent core has private levels");
                    self.units[last].counts.transfers += 1;
                    self.contested.insert(line);
                    if !write {
                        self.owner.remove(&line);
                        self.hints[owner as usize].remove(line);
                        self.flush_shared_copy(owner, line);
                    }
                    served = Some(Found::Transfer);
                }
            }
        }
        if served.is_none() {
            for j in 0..self.shared.len() {
                let u = self.shared[j];
                let (outcome, class, writeback) = self.units[u].access(line, asked, at);
                self.tally(slot, self.slots[u].0, class);
                if let Some(v) = writeback {
                    self.write_back(u, v);
                }
                if self.prefetching {
                    self.after_prefetch_fills(u, None);
                }
                if outcome.is_hit() {
                    served = Some(Found::Level(self.slots[u].0));
                    break;
                }
                asked = self.asked_below(u, asked);
            }
        }
        let invalidated = write && self.coherent && self.write(core, line);
        if self.prefetching {
            self.prefetches_down(core, instr);
        }
        (served.unwrap_or(Found::Memory), invalidated)
    }

    /// Whether a reference by `core` to `line` may meet another core's: the line has moved
    /// between cores before, or another core holds it modified. Changes nothing.
    #[inline]
    pub(super) fn contended(&self, core: u32, line: u64) -> bool {
        self.coherent
            && (self.contested.contains(line)
                || (!self.owner.is_empty()
                    && self.hints[core as usize].get(line).is_none()
                    && self.owner.get(&line).is_some_and(|&o| o != core)))
    }

    /// What a reference by `core` to `line` (`write`: a store or a modify) waits for another
    /// core: a transfer when another core holds the line modified, an invalidation when it
    /// writes a line other cores hold; 0 otherwise. Changes nothing.
    pub(super) fn coherence_wait(&self, core: u32, line: u64, write: bool) -> u64 {
        let c = core as usize;
        if !self.coherent || self.hints[c].get(line).is_some() {
            return 0;
        }
        match self.owner.get(&line) {
            Some(&o) if o != core => self.latencies.transfer,
            Some(_) => 0,
            None if write
                && self.private.iter().enumerate().any(|(d, units)| {
                    d != c && units.iter().any(|&u| self.units[u].cache.contains(line))
                }) =>
            {
                self.latencies.invalidate
            }
            None => 0,
        }
    }

    /// The op unit `u`'s miss passes down: a store it did not allocate stays a store, any
    /// other miss fetches the line (a read).
    #[inline]
    fn asked_below(&self, u: usize, asked: Op) -> Op {
        if asked == Op::Write && !self.units[u].allocates_on_write() {
            Op::Write
        } else {
            Op::Read
        }
    }

    /// A dirty `line` leaves unit `u`: written into the unit below,
    /// and each dirty line that fill evicts on down; past the last level it goes to memory.
    pub(super) fn write_back(&mut self, mut u: usize, mut line: u64) {
        while let Some(next) = self.below[u] {
            let (outcome, victim) = self.units[next].receive_writeback(line);
            if let (Outcome::Miss { evicted: Some(v) }, Some(c)) = (outcome, self.slots[next].1) {
                self.release_if_gone(c, v);
            }
            match victim {
                Some(v) => (u, line) = (next, v),
                None => return,
            }
        }
    }

    /// `core` evicted `v` from one of its private caches: if it owned it and no private
    /// cache of it holds it any more, the modified line left the core (written back).
    #[inline]
    pub(super) fn release_if_gone(&mut self, core: u32, v: u64) {
        if self.coherent
            && self.owner.get(&v) == Some(&core)
            && !self.private[core as usize]
                .iter()
                .any(|&p| self.units[p].cache.contains(v))
        {
            self.owner.remove(&v);
            self.hints[core as usize].remove(v);
        }
    }

    /// Another core read `line`, which `owner` held modified: the owner's copies become clean
    /// and the data is written back below its last private level (MESI's flush on M to S),
    /// one write-back counted there. Nothing without write-back tracking.
    pub(super) fn flush_shared_copy(&mut self, owner: u32, line: u64) {
        let o = owner as usize;
        let mut dirty = false;
        for k in 0..self.private[o].len() {
            let p = self.private[o][k];
            dirty |= self.units[p].clean(line);
        }
        if dirty {
            let last = *self.private[o].last().expect("an owner has private caches");
            self.units[last].count_writeback(Some(line));
            self.write_back(last, line);
        }
    }

    /// `core` wrote `line`: it becomes the owner, every other core's copies go. Returns
    /// whether any went.
    #[inline]
    fn write(&mut self, core: u32, line: u64) -> bool {
        let c = core as usize;
        if self.hints[c].get(line).is_some() {
            return false;
        }
        if !self.units[self.private[c][0]].allocates_on_write()
            && !self.private[c]
                .iter()
                .any(|&p| self.units[p].cache.contains(line))
        {
            // A store that allocated nowhere went on below: the other copies go, no owner.
            if let Some(before) = self.owner.remove(&line) {
                self.hints[before as usize].remove(line);
            }
            return self.invalidate_others(core, line);
        }
        match self.owner.entry(line) {
            Entry::Occupied(e) if *e.get() == core => {
                self.hints[c].insert(line, ());
                return false;
            }
            Entry::Occupied(mut e) => {
                let before = e.insert(core);
                self.hints[before as usize].remove(line);
            }
            Entry::Vacant(e) => {
                e.insert(core);
            }
        }
        self.hints[c].insert(line, ());
        self.invalidate_others(core, line)
    }

    /// Every private copy of `line` but `core`'s goes; returns whether there was one.
    fn invalidate_others(&mut self, core: u32, line: u64) -> bool {
        let mut any = false;
        for (d, units) in self.private.iter().enumerate() {
            if d != core as usize {
                for &u in units {
                    any |= self.units[u].invalidate(line);
                }
            }
        }
        if any {
            self.contested.insert(line);
        }
        any
    }
}
