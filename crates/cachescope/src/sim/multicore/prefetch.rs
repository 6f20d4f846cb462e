//! The machine's prefetchers (docs/threads.md, "Prefetchers"): each cache's prefetcher is
//! trained by the demand references that reach it (a core's private copy by that core's
//! alone) and fills its own cache at once, as a single-core level's does (`prefetcher.rs`);
//! the lines it fetched are then asked of the caches below, in the order the single-core
//! hierarchy asks them, so one core reproduces it exactly.
//!
//! A prefetch by a private cache is a read fill of the core's own path: each private level
//! below fills the line until one holds it; when none does and another core holds it
//! modified, that core's copy supplies it as it would a read (the owner's copies become
//! clean and shared, the data written back below its last private level); otherwise the
//! shared levels fill it until one holds it. A prefetch is not a reference: it is not counted
//! in `refs` or `transfers`, costs no modelled time, and invalidates nobody.

use super::MultiCore;

impl MultiCore {
    /// After unit `u`'s demand lookup by `core` (`None`: a shared unit): the write-backs of
    /// its prefetch fills written below, and `core` released of the lines the fills evicted
    /// that it owned.
    #[inline]
    pub(super) fn after_prefetch_fills(&mut self, u: usize, core: Option<u32>) {
        while let Some(v) = self.units[u].spilled.pop() {
            self.write_back(u, v);
        }
        if let Some(core) = core {
            let n = self.units[u].prefetch_victims().len();
            for k in 0..n {
                let v = self.units[u].prefetch_victims()[k];
                self.release_if_gone(core, v);
            }
        }
    }

    /// The lines the caches of `core`'s path (the instruction side when `instr`) and the
    /// shared caches prefetched during a reference, each asked of the caches below the one
    /// that prefetched it, top down.
    pub(super) fn prefetches_down(&mut self, core: u32, instr: bool) {
        let c = core as usize;
        let depth = if instr { &self.instr[c] } else { &self.data[c] }.len();
        for i in 0..depth {
            let u = if instr {
                self.instr[c][i]
            } else {
                self.data[c][i]
            };
            if self.units[u].issued.is_empty() {
                continue;
            }
            let lines = std::mem::take(&mut self.units[u].issued);
            for &line in &lines {
                if !self.private_fill(core, instr, i + 1, line) {
                    self.shared_fill(0, line);
                }
            }
            self.units[u].issued = reuse(lines);
        }
        for j in 0..self.shared.len() {
            let u = self.shared[j];
            if self.units[u].issued.is_empty() {
                continue;
            }
            let lines = std::mem::take(&mut self.units[u].issued);
            for &line in &lines {
                self.shared_fill(j + 1, line);
            }
            self.units[u].issued = reuse(lines);
        }
    }

    /// A prefetched `line` asked of `core`'s private caches from depth `from` down: true when
    /// one held it or another core's modified copy supplied it.
    fn private_fill(&mut self, core: u32, instr: bool, from: usize, line: u64) -> bool {
        let c = core as usize;
        let depth = if instr { &self.instr[c] } else { &self.data[c] }.len();
        for i in from..depth {
            let u = if instr {
                self.instr[c][i]
            } else {
                self.data[c][i]
            };
            let (here, evicted, writeback) = self.units[u].install(line);
            if let Some(v) = writeback {
                self.write_back(u, v);
            }
            if let Some(v) = evicted {
                self.release_if_gone(core, v);
            }
            if here {
                return true;
            }
        }
        if !self.coherent || self.owner.is_empty() {
            return false;
        }
        match self.owner.get(&line) {
            Some(&owner) if owner != core => {
                // As a read: the owner's copy supplies the line and becomes shared.
                self.owner.remove(&line);
                self.hints[owner as usize].remove(line);
                self.flush_shared_copy(owner, line);
                self.contested.insert(line);
                true
            }
            _ => false,
        }
    }

    /// A prefetched `line` asked of the shared caches from index `from` down: each fills it
    /// until one holds it.
    fn shared_fill(&mut self, from: usize, line: u64) {
        for j in from..self.shared.len() {
            let u = self.shared[j];
            let (here, _, writeback) = self.units[u].install(line);
            if let Some(v) = writeback {
                self.write_back(u, v);
            }
            if here {
                return;
            }
        }
    }
}

/// An emptied list, its allocation kept.
fn reuse(mut lines: Vec<u64>) -> Vec<u64> {
    lines.clear();
    lines
}
