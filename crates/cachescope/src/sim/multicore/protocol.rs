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
//! nothing, and usually finds that out without the map: each core keeps a direct-mapped memo
//! of lines it owns ([`HINTS`] per core), cleared wherever its ownership ends. Exclusive and
//! shared are not told apart: no count depends on it.

use hashbrown::hash_map::Entry;

use super::MultiCore;
use crate::sim::{EMPTY, Outcome};

/// Slots of each core's memo of the lines it owns (a power of two).
pub(super) const HINTS: usize = 1024;

/// The memo slot of `line` for `core`.
#[inline]
fn hint_slot(core: u32, line: u64) -> usize {
    core as usize * HINTS + (line as usize & (HINTS - 1))
}

/// `core` no longer owns `line`: out of its memo.
#[inline]
fn forget(hints: &mut [u64], core: u32, line: u64) {
    let slot = hint_slot(core, line);
    if hints[slot] == line {
        hints[slot] = EMPTY;
    }
}

impl MultiCore {
    /// One reference by `core` to `line`: a write (store, modify) or a read, from the
    /// instruction side (`instr`, split L1 only) or the data side.
    #[inline]
    pub(super) fn reference(&mut self, core: u32, line: u64, write: bool, instr: bool) {
        let c = core as usize;
        let path = if instr { &self.instr[c] } else { &self.data[c] };
        let mut found = false;
        for &u in path {
            let (outcome, coherence) = self.units[u].access(line);
            if coherence {
                if let Some(map) = &mut self.by_line {
                    *map.entry(line).or_insert(0) += 1;
                }
            }
            match outcome {
                Outcome::Hit => {
                    found = true;
                    break;
                }
                Outcome::Miss { evicted: Some(v) } if self.coherent => {
                    // A modified line that leaves the core's last private cache is written
                    // back: the core no longer owns it.
                    if self.owner.get(&v) == Some(&core)
                        && !self.private[c]
                            .iter()
                            .any(|&p| self.units[p].cache.contains(v))
                    {
                        self.owner.remove(&v);
                        forget(&mut self.hints, core, v);
                    }
                }
                Outcome::Miss { .. } => {}
            }
        }
        if !found && self.coherent && !self.owner.is_empty() {
            if let Some(&owner) = self.owner.get(&line) {
                if owner != core {
                    let last = *path.last().expect("a coherent core has private levels");
                    self.units[last].counts.transfers += 1;
                    if !write {
                        self.owner.remove(&line);
                        forget(&mut self.hints, owner, line);
                    }
                    found = true;
                }
            }
        }
        if !found {
            for &u in &self.shared {
                if self.units[u].access(line).0.is_hit() {
                    break;
                }
            }
        }
        if write && self.coherent {
            self.write(core, line);
        }
    }

    /// `core` wrote `line`: it becomes the owner, every other core's copies go.
    #[inline]
    fn write(&mut self, core: u32, line: u64) {
        let slot = hint_slot(core, line);
        if self.hints[slot] == line {
            return;
        }
        match self.owner.entry(line) {
            Entry::Occupied(e) if *e.get() == core => {
                self.hints[slot] = line;
                return;
            }
            Entry::Occupied(mut e) => {
                let before = e.insert(core);
                forget(&mut self.hints, before, line);
            }
            Entry::Vacant(e) => {
                e.insert(core);
            }
        }
        self.hints[slot] = line;
        for (d, units) in self.private.iter().enumerate() {
            if d != core as usize {
                for &u in units {
                    self.units[u].invalidate(line);
                }
            }
        }
    }
}
