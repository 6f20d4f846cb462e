//! What a bucket is as a data structure, for the per-field counts and the layout transforms:
//! the instance an address falls in (a heap block, a variable), the global a name denotes, and
//! a heap site's name with the call that allocates it.

use super::{BucketKind, BucketMap, STACK};
use crate::attribution::symbols::{CodeLine, Module, Symbolizer};

/// A heap site's name and the call that allocates its blocks.
#[derive(Clone, Debug)]
pub struct Site {
    /// The bucket's name as the attribution gives it (`init(a.c:31)-main(a.c:50)`).
    pub name: String,
    /// The call instruction of the first frame that is the program's own, and its line.
    pub call: Option<(u64, CodeLine)>,
    /// The call instructions of the frames its name comes from (what tells sites of one name
    /// apart).
    pub calls: Vec<u64>,
}

impl Site {
    /// Its name and call instructions, `NAME@0xPC[,0xPC]`: what a change names a site by when
    /// others share its name (`NAME#N`). `None` without a call path.
    pub fn by_calls(&self) -> Option<String> {
        let pcs: Vec<String> = self.calls.iter().map(|pc| format!("{pc:#x}")).collect();
        (!pcs.is_empty()).then(|| format!("{}@{}", self.name, pcs.join(",")))
    }
}

impl BucketMap {
    /// The bucket of `addr` now and the instance holding it: a live heap block or a variable
    /// `(start, end, bucket)`; for the stack and other memory, `(addr, addr + 1, bucket)`.
    #[inline]
    pub fn lookup_range(&mut self, addr: u64) -> (u64, u64, u32) {
        if let Some(&r) = self.recent.iter().find(|r| addr >= r.0 && addr < r.1) {
            if self.kind(r.2) != BucketKind::Global || self.is_variable(&r) {
                return r;
            }
        }
        match self.find(addr) {
            // A heap block, a variable, or a frame's local (the only stack bucket `find` gives).
            Some(r)
                if matches!(self.kind(r.2), BucketKind::Heap | BucketKind::Stack)
                    || self.is_variable(&r) =>
            {
                self.recent[self.oldest] = r;
                self.oldest = (self.oldest + 1) % super::RECENT;
                r
            }
            _ => {
                let id = self.lookup(addr);
                (addr, addr + 1, id)
            }
        }
    }

    /// True when `r` is a whole variable (not a piece of a module's unnamed static data).
    fn is_variable(&self, r: &(u64, u64, u32)) -> bool {
        let i = self.globals.partition_point(|g| g.0 < r.0);
        self.globals.get(i).is_some_and(|g| g == r)
    }

    /// The global variables called `name` (its name as the attribution gives it: a library's
    /// carry the file, `var (libx.so)`): `(start, end, bucket)`.
    pub fn globals_named(&self, name: &str) -> Vec<(u64, u64, u32)> {
        self.globals
            .iter()
            .filter(|g| self.infos[g.2 as usize].name == name)
            .copied()
            .collect()
    }

    /// The global variable of bucket `id`: `(start, end)` and the module it belongs to.
    pub fn global_of(&self, id: u32) -> Option<(u64, u64, &Module)> {
        let &(start, end, _) = self.globals.iter().find(|g| g.2 == id)?;
        let module = self
            .modules
            .iter()
            .find(|m| m.variables.iter().any(|v| v.start == start))?;
        Some((start, end, module))
    }

    /// The name of bucket `id` as it is known during the pass (a heap site's is [`Self::site`]).
    pub fn name_of(&self, id: u32) -> &str {
        &self.infos[id as usize].name
    }

    /// Heap bucket `id`'s name and allocating call, symbolized now.
    pub fn site(&self, symbolizer: &mut Symbolizer, id: u32) -> Option<Site> {
        let info = self.infos.get(id as usize)?;
        if info.kind != BucketKind::Heap {
            return None;
        }
        let (name, pcs) = self.site_name(symbolizer, &info.path);
        let call = pcs
            .first()
            .map(|&pc| (pc, symbolizer.code_line(pc, self.module_of(pc))));
        Some(Site {
            name,
            call,
            calls: pcs,
        })
    }

    /// True for the stack's bucket.
    pub fn is_stack(id: u32) -> bool {
        id == STACK
    }
}
