//! Stack locals as structures of their own: every live frame's arrays and structures
//! (`function:local`), placed as the trace's call events unfold.
//!
//! On x86-64 a `call` stores its return address at the new stack top, so the callee's
//! canonical frame address (CFA) is that store's address plus 8; the tool records the store
//! just before the call event. A local at `DW_OP_fbreg(offset)` under a `DW_OP_call_frame_cfa`
//! frame base ([`crate::attribution::types::LocalVar`]) then lives at `CFA + offset` for as
//! long as its frame does. A jump into a function (a tail call, a PLT stub's jump) keeps the
//! frame below's CFA. Frames whose CFA is unknown (a thread's root, a signal handler, a call
//! whose store is not found) place nothing: their references stay in the `stack` bucket.
//! Each (function, local) is one bucket of kind [`BucketKind::Stack`]; each frame's copy of
//! it is one instance, as a heap block is one instance of its site.

use std::collections::BTreeMap;

use super::{BucketKind, BucketMap, Map};
use crate::access::{AccessKind, ThreadId};
use crate::attribution::types::{DataType, LocalsSkipped, ModuleTypes};
use crate::batch::{Batch, CallEvent, CallOp, EnterKind};

/// One live frame: its CFA, when known, and the starts of the locals it placed.
#[derive(Debug)]
struct Live {
    cfa: Option<u64>,
    placed: Vec<u64>,
}

/// Every thread's live frames and the locals they placed.
#[derive(Debug, Default)]
pub(super) struct Frames {
    threads: Vec<(ThreadId, Vec<Live>)>,
    /// Per module index: its types (the locals among them), read at the first call into it
    /// and kept for the structures' types after the pass ([`BucketMap::read_types`]).
    tables: Vec<Option<ModuleTypes>>,
    /// (module, local index) → bucket.
    ids: Map<(usize, usize), u32>,
    /// Bucket → the local's type.
    pub types: Map<u32, DataType>,
    /// Live locals: start → (end, bucket).
    pub live: BTreeMap<u64, (u64, u32)>,
    /// The last data record of the last batch: its thread and, for an 8-byte store, its
    /// address (a call at the start of a batch stored its return address in the one before).
    carry: Option<(ThreadId, Option<u64>)>,
    /// Call events applied.
    pub events: u64,
    /// Calls into a function with locals whose return-address store was not found.
    pub unplaced: u64,
    /// What the modules' debug information could not place.
    pub skipped: LocalsSkipped,
}

impl Frames {
    fn stack(&mut self, thread: ThreadId) -> &mut Vec<Live> {
        let i = match self.threads.iter().position(|(t, _)| *t == thread) {
            Some(i) => i,
            None => {
                self.threads.push((thread, Vec::new()));
                self.threads.len() - 1
            }
        };
        &mut self.threads[i].1
    }
}

/// The return address the call before `batch`'s access `at` stored, by `thread`: the data
/// record just before it (instruction fetches and other threads' records skipped) when that
/// is an 8-byte store.
fn return_store(
    batch: &Batch,
    at: usize,
    thread: ThreadId,
    carry: Option<(ThreadId, Option<u64>)>,
) -> Option<u64> {
    let mut found = None;
    for (run, t) in batch.thread_runs() {
        if run.start >= at {
            break;
        }
        if t != thread {
            continue;
        }
        if let Some(j) = (run.start..run.end.min(at))
            .rev()
            .find(|&j| batch.kinds[j] != AccessKind::Instr)
        {
            found = Some(j);
        }
    }
    match found {
        Some(j) => is_store8(batch, j),
        None => match carry {
            Some((t, store)) if t == thread => store,
            _ => None,
        },
    }
}

/// Access `j`'s address when it is an 8-byte store.
fn is_store8(batch: &Batch, j: usize) -> Option<u64> {
    (batch.kinds[j] == AccessKind::Store && batch.sizes[j] == 8).then_some(batch.addrs[j])
}

impl BucketMap {
    /// Applies call event `e` of `batch` to the live frames: a frame entered places its
    /// function's locals at its CFA, a frame left takes them away.
    pub fn apply_call(&mut self, batch: &Batch, e: &CallEvent) {
        self.frames.events += 1;
        match e.op {
            CallOp::Enter { key, kind } => {
                let below = self.frames.stack(e.thread).last().and_then(|f| f.cfa);
                let cfa = match kind {
                    EnterKind::Call | EnterKind::Plt => {
                        return_store(batch, e.at as usize, e.thread, self.frames.carry)
                            .map(|a| a + 8)
                    }
                    EnterKind::Jump => below,
                    EnterKind::Root | EnterKind::Signal => None,
                };
                let placed = match kind {
                    EnterKind::Signal => Vec::new(),
                    _ => self.place(key, cfa),
                };
                self.frames.stack(e.thread).push(Live { cfa, placed });
            }
            CallOp::Leave { frames } => {
                let stack = self.frames.stack(e.thread);
                let keep = stack.len().saturating_sub(frames as usize);
                let gone: Vec<u64> = stack.drain(keep..).flat_map(|f| f.placed).collect();
                self.unplace(&gone);
            }
            CallOp::Reset => {
                self.frames.threads.clear();
                if !self.frames.live.is_empty() {
                    self.frames.live.clear();
                    self.forget();
                }
            }
        }
    }

    /// Remembers the last data record of `batch`, for a call event at the start of the next.
    pub fn batch_done(&mut self, batch: &Batch) {
        for (run, t) in batch.thread_runs() {
            if let Some(j) = run.rev().find(|&j| batch.kinds[j] != AccessKind::Instr) {
                self.frames.carry = Some((t, is_store8(batch, j)));
            }
        }
    }

    /// The locals of the function entered at `key` placed at `cfa`: their starts.
    fn place(&mut self, key: u64, cfa: Option<u64>) -> Vec<u64> {
        let Some(m) = self.module_index(key) else {
            return Vec::new();
        };
        if self.frames.tables.len() <= m {
            self.frames.tables.resize(m + 1, None);
        }
        if self.frames.tables[m].is_none() {
            let types = ModuleTypes::load(&self.modules[m].path);
            self.frames.skipped.location_lists += types.locals_skipped.location_lists;
            self.frames.skipped.frame_base += types.locals_skipped.frame_base;
            self.frames.tables[m] = Some(types);
        }
        let link = key.wrapping_sub(self.modules[m].bias);
        let table = &self.frames.tables[m].as_ref().expect("read").locals;
        let first = table.partition_point(|l| l.entry < link);
        let n = table[first..].partition_point(|l| l.entry == link);
        if n == 0 {
            return Vec::new();
        }
        let Some(cfa) = cfa else {
            self.frames.unplaced += 1;
            return Vec::new();
        };
        let mut placed = Vec::with_capacity(n);
        for j in first..first + n {
            let l = &self.frames.tables[m].as_ref().expect("read").locals[j];
            let start = cfa.wrapping_add_signed(l.offset);
            let end = start + (l.ty.elements() * l.ty.element.size).max(1);
            let id = match self.frames.ids.get(&(m, j)) {
                Some(&id) => id,
                None => {
                    let (name, ty) = (format!("{}:{}", l.function, l.name), l.ty.clone());
                    let id = self.add(name, BucketKind::Stack, Vec::new());
                    self.frames.ids.insert((m, j), id);
                    self.frames.types.insert(id, ty);
                    id
                }
            };
            // A frame left without its event (a longjmp the tool missed): drop what it left.
            let stale: Vec<u64> = self
                .frames
                .live
                .range(..end)
                .rev()
                .take_while(|(_, (e, _))| *e > start)
                .map(|(s, _)| *s)
                .collect();
            for s in stale {
                self.frames.live.remove(&s);
            }
            self.frames.live.insert(start, (end, id));
            placed.push(start);
        }
        self.forget();
        placed
    }

    /// Takes the locals starting at `starts` away.
    fn unplace(&mut self, starts: &[u64]) {
        if starts.is_empty() {
            return;
        }
        for s in starts {
            self.frames.live.remove(s);
        }
        self.forget();
    }

    /// The modules whose types the frames read (a module's DWARF is read once: the
    /// structures' types start from these).
    pub fn read_types(&self) -> impl Iterator<Item = (&std::path::Path, &ModuleTypes)> {
        self.frames
            .tables
            .iter()
            .zip(&self.modules)
            .filter_map(|(t, m)| Some((m.path.as_path(), t.as_ref()?)))
    }

    /// The type of local bucket `id` (`function:local`), if it is one.
    pub fn local_type(&self, id: u32) -> Option<&DataType> {
        self.frames.types.get(&id)
    }

    /// The live local holding byte `addr`: `(start, end, bucket)`.
    pub(super) fn local_at(&self, addr: u64) -> Option<(u64, u64, u32)> {
        let (&s, &(e, id)) = self.frames.live.range(..=addr).next_back()?;
        (addr < e).then_some((s, e, id))
    }

    /// The live local holding byte `addr`, `(start, end, bucket)`, for an analysis that
    /// follows frames by [`BucketMap::apply_call`] but names after its pass.
    pub fn live_local(&self, addr: u64) -> Option<(u64, u64, u32)> {
        if self.frames.live.is_empty() {
            return None;
        }
        self.local_at(addr)
    }

    /// Notes on the stack's locals: none placed for want of call events (when the stack was
    /// referenced, `stack_used`), or what was left out.
    pub fn locals_notes(&self, stack_used: bool) -> Vec<String> {
        let mut notes = Vec::new();
        let f = &self.frames;
        if f.events == 0 && stack_used {
            notes.push(
                "the trace has no call events (recorded with --no-calls, or a format without \
                 them): the stack's arrays and structures are not told apart, all of the stack \
                 is one bucket"
                    .into(),
            );
        }
        if f.skipped.location_lists + f.skipped.frame_base > 0 {
            notes.push(format!(
                "{} local arrays or structures are placed by a location list and {} are in \
                 functions whose frame base is not the CFA: their references stay in the stack \
                 bucket",
                f.skipped.location_lists, f.skipped.frame_base
            ));
        }
        if f.unplaced > 0 {
            notes.push(format!(
                "{} frames of functions with local arrays or structures were entered without a \
                 return-address store before their call event: their locals stay in the stack \
                 bucket",
                f.unplaced
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Access;

    fn instr(pc: u64) -> Access {
        Access {
            addr: pc,
            size: 5,
            kind: AccessKind::Instr,
            pc: Some(pc),
        }
    }

    #[test]
    fn the_return_address_is_the_store_just_before_the_call() {
        let mut b = Batch::new();
        b.set_thread(1);
        b.push(Access::store(0x7000, 8));
        b.push(instr(0x400)); // the call instruction's fetch
        b.set_thread(2);
        b.push(Access::load(0x9000, 8)); // another thread's reference
        b.set_thread(1);
        b.push(Access::store(0x6ff8, 8));
        b.push(instr(0x500));
        b.push(Access::store(0x6ff0, 4));
        assert_eq!(return_store(&b, 3, 1, None), Some(0x7000));
        assert_eq!(return_store(&b, 5, 1, None), Some(0x6ff8));
        assert_eq!(
            return_store(&b, 6, 1, None),
            None,
            "a 4-byte store is no return address"
        );
        assert_eq!(
            return_store(&b, 3, 2, None),
            None,
            "a load is no return address"
        );
        // At the start of a batch: the last data record of the one before, if it was this
        // thread's.
        assert_eq!(
            return_store(&b, 0, 1, Some((1, Some(0x5000)))),
            Some(0x5000)
        );
        assert_eq!(return_store(&b, 0, 1, Some((2, Some(0x5000)))), None);
        let mut m = BucketMap::new(None);
        m.batch_done(&b);
        assert_eq!(m.frames.carry, Some((1, None)));
    }
}
