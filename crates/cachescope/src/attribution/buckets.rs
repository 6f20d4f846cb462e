//! Stat buckets (Buck & Hollingsworth §2.2): address → the bucket it belongs to at this point
//! of the trace.
//!
//! - one bucket per global or static variable of the executable and every mapped library
//!   ([`Module`] variables at run-time addresses);
//! - one bucket per heap allocation *path* (the raw return addresses of the call); paths are
//!   named at the end by the first two frames outside the C library and allocator wrappers,
//!   and paths with the same name merge into one bucket ([`BucketMap::finish_names`]);
//! - one bucket per local array or structure of a function (`function:local`, kind
//!   [`BucketKind::Stack`]), placed in each live frame as the trace's call events unfold
//!   (`frames.rs`; an instance per frame, as a heap block is an instance of its site);
//! - the stack: every `[stack]` mapping of the memory map, grown down to 8 MiB (the usual
//!   `RLIMIT_STACK`), plus Valgrind's amd64 client stack region (`0x1f_f000_0000` up to
//!   `0x20_0000_0000`, where a lackey-traced program's main stack lives whatever the map
//!   says); with no memory map at all, also the top of the user address space
//!   (`0x7ff0_0000_0000` and up, where a native main stack lives);
//! - "other": everything else (thread stacks, anonymous mappings, the heap when there are no
//!   allocation events).
//!
//! Live heap blocks are an interval map updated as events pass, so an address reused after a
//! free belongs to the new block's bucket from the new allocation's position on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod frames;
mod instances;
mod names;

pub use instances::Site;

use names::is_valgrind_file;

use super::Map;
use super::events::{EventKind, Mapping};
use super::symbols::Module;

/// What a bucket holds. Serialized as `global`, `heap`, `stack`, `other` (a public contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BucketKind {
    /// A global or static variable.
    Global,
    /// Heap blocks allocated along one call path.
    Heap,
    /// The stack.
    Stack,
    /// Anything else.
    Other,
}

/// The bucket id of "other".
pub const OTHER: u32 = 0;
/// The bucket id of the stack.
pub const STACK: u32 = 1;

/// Main-thread stack growth room below a `[stack]` mapping.
const STACK_ROOM: u64 = 8 << 20;
/// Ranges [`BucketMap::lookup`] remembers.
const RECENT: usize = 4;
/// An empty range, which no address is in.
const NONE: (u64, u64, u32) = (1, 0, OTHER);
/// Valgrind's amd64 client stack region.
const VALGRIND_STACK: (u64, u64) = (0x1f_f000_0000, 0x20_0000_0000);
/// A native main stack with no map to say where: the top of the user address space.
const NATIVE_STACK: (u64, u64) = (0x7ff0_0000_0000, 0x8000_0000_0000);

#[derive(Clone, Debug)]
struct Info {
    name: String,
    kind: BucketKind,
    /// The allocation path of a heap bucket (return addresses, innermost first).
    path: Vec<u64>,
}

/// Address → bucket, as the trace's events unfold.
#[derive(Debug)]
pub struct BucketMap {
    infos: Vec<Info>,
    /// Global variables: (start, end, bucket), sorted, disjoint.
    globals: Vec<(u64, u64, u32)>,
    /// Modules' writable data segments, for data no variable covers: (start, end, bucket),
    /// sorted, disjoint.
    regions: Vec<(u64, u64, u32)>,
    /// Live heap blocks: start → (end, bucket).
    heap: BTreeMap<u64, (u64, u32)>,
    sites: Map<Vec<u64>, u32>,
    stacks: Vec<(u64, u64)>,
    modules: Vec<Module>,
    loaded: Map<PathBuf, usize>,
    /// Mapped file ranges: (start, end, module index), for instruction addresses.
    ranges: Vec<(u64, u64, usize)>,
    /// Notes about what is missing, for the report.
    pub notes: Vec<String>,
    /// The last ranges found and their buckets (valid until the next heap event), the
    /// oldest replaced: a loop over a few arrays alternates between their blocks, which one
    /// remembered range would miss on every turn (a search of the heap's tree each time).
    recent: [(u64, u64, u32); RECENT],
    /// The entry of `recent` replaced next.
    oldest: usize,
    /// The last stack range found that no heap block, variable or module region overlaps, so
    /// that every address in it is the stack's (valid until the next heap or map event).
    /// Without it every stack reference searched the heap, the variables and the regions.
    last_stack: (u64, u64),
    /// The live frames' locals (`frames.rs`).
    frames: frames::Frames,
    /// True once any allocation event was seen.
    pub saw_heap_events: bool,
    /// True once any memory map event was seen.
    pub saw_map: bool,
}

impl BucketMap {
    /// An empty map: only "other" and the stack heuristics. `exe`, when given, is loaded at
    /// its link addresses (a non-PIE executable; a memory map later overrides nothing for it).
    pub fn new(exe: Option<&Path>) -> BucketMap {
        let mut m = BucketMap {
            infos: vec![
                Info {
                    name: "other".into(),
                    kind: BucketKind::Other,
                    path: Vec::new(),
                },
                Info {
                    name: "stack".into(),
                    kind: BucketKind::Stack,
                    path: Vec::new(),
                },
            ],
            globals: Vec::new(),
            regions: Vec::new(),
            heap: BTreeMap::new(),
            sites: Map::default(),
            stacks: vec![VALGRIND_STACK, NATIVE_STACK],
            modules: Vec::new(),
            loaded: Map::default(),
            ranges: Vec::new(),
            notes: Vec::new(),
            recent: [NONE; RECENT],
            oldest: 0,
            last_stack: (1, 0),
            frames: frames::Frames::default(),
            saw_heap_events: false,
            saw_map: false,
        };
        if let Some(exe) = exe {
            m.load_module(exe, None);
        }
        m
    }

    /// Number of buckets so far.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Always false: "other" and the stack exist from the start.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Kind of bucket `id`.
    pub fn kind(&self, id: u32) -> BucketKind {
        self.infos[id as usize].kind
    }

    fn add(&mut self, name: String, kind: BucketKind, path: Vec<u64>) -> u32 {
        self.infos.push(Info { name, kind, path });
        (self.infos.len() - 1) as u32
    }

    fn load_module(&mut self, path: &Path, mapped: Option<(u64, u64)>) -> usize {
        if let Some(&i) = self.loaded.get(path) {
            return i;
        }
        let (module, notes) = Module::load(path, mapped);
        if !is_valgrind_file(path) {
            self.notes.extend(notes);
        }
        // The first module is the program (the executable maps lowest); the others are
        // libraries, whose variables carry the file name.
        let library = !self.modules.is_empty();
        let suffix = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        for v in &module.variables {
            let name = if library {
                format!("{} ({suffix})", v.name)
            } else {
                v.name.clone()
            };
            let id = self.add(name, BucketKind::Global, Vec::new());
            self.globals.push((v.start, v.end, id));
        }
        // Static data no symbol names (all of it in a stripped file, a library's internal
        // statics): one bucket per module, its writable segments' address region.
        if !module.data_segments.is_empty() {
            let id = self.add(
                format!("{suffix} static data (no symbol)"),
                BucketKind::Global,
                Vec::new(),
            );
            for &(start, end) in &module.data_segments {
                self.regions.push((start, end, id));
            }
            self.regions.sort_unstable_by_key(|g| g.0);
            self.regions.dedup_by(|b, a| b.0 < a.1);
        }
        self.globals.sort_unstable_by_key(|g| g.0);
        self.globals.dedup_by(|b, a| b.0 < a.1); // overlaps across modules: keep the first
        self.modules.push(module);
        let i = self.modules.len() - 1;
        self.loaded.insert(path.to_owned(), i);
        i
    }

    /// Applies one event (memory map entry, allocation, free).
    pub fn apply(&mut self, event: &EventKind) {
        match event {
            EventKind::Map(m) => self.map(m),
            EventKind::Alloc { addr, size, stack } => {
                self.saw_heap_events = true;
                let end = addr.saturating_add((*size).max(1));
                self.remove_overlaps(*addr, end);
                let id = match self.sites.get(stack) {
                    Some(&id) => id,
                    None => {
                        let id = self.add(String::new(), BucketKind::Heap, stack.clone());
                        self.sites.insert(stack.clone(), id);
                        id
                    }
                };
                self.heap.insert(*addr, (end, id));
                self.forget();
            }
            EventKind::Free { addr } => {
                self.saw_heap_events = true;
                self.heap.remove(addr);
                self.forget();
            }
            // Page sizes are the TLBs' (crate::tlb), not the buckets'.
            EventKind::HugePages { .. } => {}
        }
    }

    /// A block allocated over live ones means their frees were missed: drop them.
    fn remove_overlaps(&mut self, start: u64, end: u64) {
        let stale: Vec<u64> = self
            .heap
            .range(..end)
            .rev()
            .take_while(|(_, (e, _))| *e > start)
            .map(|(s, _)| *s)
            .collect();
        for s in stale {
            self.heap.remove(&s);
        }
    }

    fn map(&mut self, m: &Mapping) {
        self.saw_map = true;
        if m.path.starts_with("[stack") {
            let low = m.end.saturating_sub((m.end - m.start).max(STACK_ROOM));
            if !self.stacks.contains(&(low, m.end)) {
                self.stacks.push((low, m.end));
                self.stacks.retain(|&s| s != NATIVE_STACK);
                self.forget();
            }
        } else if m.path.starts_with('/') {
            let i = self.load_module(Path::new(&m.path), Some((m.start, m.offset)));
            if !self.ranges.iter().any(|r| r.0 == m.start) {
                self.ranges.push((m.start, m.end, i));
                self.ranges.sort_unstable_by_key(|r| r.0);
            }
            self.forget();
        }
    }

    /// The bucket of byte address `addr` now.
    #[inline]
    pub fn lookup(&mut self, addr: u64) -> u32 {
        if let Some(&(_, _, id)) = self.recent.iter().find(|r| addr >= r.0 && addr < r.1) {
            return id;
        }
        let (lo, hi) = self.last_stack;
        if addr >= lo && addr < hi {
            return STACK;
        }
        let found = self.find(addr);
        if let Some(r) = found {
            self.recent[self.oldest] = r;
            self.oldest = (self.oldest + 1) % RECENT;
            return r.2;
        }
        match self
            .stacks
            .iter()
            .find(|&&(lo, hi)| addr >= lo && addr < hi)
        {
            Some(&(lo, hi)) => {
                if self.nothing_else_in(lo, hi) {
                    self.last_stack = (lo, hi);
                }
                STACK
            }
            None => OTHER,
        }
    }

    /// Forgets the ranges [`BucketMap::lookup`] remembers: the buckets changed.
    fn forget(&mut self) {
        self.recent = [NONE; RECENT];
        self.last_stack = (1, 0);
    }

    /// No heap block, variable or module region overlaps `[lo, hi)`. Each kind is sorted and
    /// disjoint, so the last one starting below `hi` must end by `lo`.
    fn nothing_else_in(&self, lo: u64, hi: u64) -> bool {
        let clear = |v: &[(u64, u64, u32)]| {
            let i = v.partition_point(|r| r.0 < hi);
            i == 0 || v[i - 1].1 <= lo
        };
        let heap = self
            .heap
            .range(..hi)
            .next_back()
            .is_none_or(|(_, &(end, _))| end <= lo);
        let locals = self
            .frames
            .live
            .range(..hi)
            .next_back()
            .is_none_or(|(_, &(end, _))| end <= lo);
        heap && locals && clear(&self.globals) && clear(&self.regions)
    }

    fn find(&self, addr: u64) -> Option<(u64, u64, u32)> {
        if let Some((&s, &(e, id))) = self.heap.range(..=addr).next_back() {
            if addr < e {
                return Some((s, e, id));
            }
        }
        if let Some(r) = self.local_at(addr) {
            return Some(r);
        }
        within(&self.globals, addr).or_else(|| {
            // A region hit is only cached up to the next variable inside it.
            let (s, e, id) = within(&self.regions, addr)?;
            let next = self.globals.partition_point(|g| g.0 <= addr);
            let prev = next.checked_sub(1).map_or(s, |i| self.globals[i].1.max(s));
            let end = self.globals.get(next).map_or(e, |g| g.0.min(e));
            Some((prev.min(addr), end, id))
        })
    }

    /// The global or static variable holding byte `addr`, with its module.
    pub fn variable_at(&self, addr: u64) -> Option<(&Module, &super::symbols::Variable)> {
        self.modules.iter().find_map(|m| {
            let i = m.variables.partition_point(|v| v.start <= addr);
            let v = m.variables.get(i.checked_sub(1)?)?;
            (addr < v.end).then_some((m, v))
        })
    }

    /// The live heap block holding byte `addr`: its first byte and one past its last.
    pub fn heap_block_at(&self, addr: u64) -> Option<(u64, u64)> {
        let (&start, &(end, _)) = self.heap.range(..=addr).next_back()?;
        (addr < end).then_some((start, end))
    }

    /// The module an instruction address belongs to: by the memory map, or the one module
    /// loaded without a map.
    pub fn module_of(&self, pc: u64) -> Option<&Module> {
        self.module_index(pc).map(|m| &self.modules[m])
    }

    /// The index of [`BucketMap::module_of`]'s module.
    fn module_index(&self, pc: u64) -> Option<usize> {
        if self.ranges.is_empty() {
            // No map: only the program loaded at its link addresses, within its segments.
            return self
                .modules
                .first()
                .filter(|m| pc >= m.span.0 && pc < m.span.1)
                .map(|_| 0);
        }
        let i = self.ranges.partition_point(|r| r.0 <= pc);
        let &(_, e, m) = self.ranges.get(i.checked_sub(1)?)?;
        (pc < e).then_some(m)
    }
}

/// The range of sorted, disjoint `ranges` holding `addr`.
fn within(ranges: &[(u64, u64, u32)], addr: u64) -> Option<(u64, u64, u32)> {
    let i = ranges.partition_point(|g| g.0 <= addr);
    let &(s, e, id) = ranges.get(i.checked_sub(1)?)?;
    (addr < e).then_some((s, e, id))
}
