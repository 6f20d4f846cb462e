//! Stat buckets (Buck & Hollingsworth §2.2): address → the bucket it belongs to at this point
//! of the trace.
//!
//! - one bucket per global or static variable of the executable and every mapped library
//!   ([`Module`] variables at run-time addresses);
//! - one bucket per heap allocation *path* (the raw return addresses of the call); paths are
//!   named at the end by the first two frames outside the C library and allocator wrappers,
//!   and paths with the same name merge into one bucket ([`BucketMap::finish_names`]);
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

use super::Map;
use super::events::{EventKind, Mapping};
use super::symbols::{CodeLine, Module, Symbolizer};

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
    /// The last range found and its bucket (valid until the next heap event).
    last: (u64, u64, u32),
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
            last: (1, 0, OTHER),
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
                self.last = (1, 0, OTHER);
            }
            EventKind::Free { addr } => {
                self.saw_heap_events = true;
                self.heap.remove(addr);
                self.last = (1, 0, OTHER);
            }
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
                self.last = (1, 0, OTHER);
            }
        } else if m.path.starts_with('/') {
            let i = self.load_module(Path::new(&m.path), Some((m.start, m.offset)));
            if !self.ranges.iter().any(|r| r.0 == m.start) {
                self.ranges.push((m.start, m.end, i));
                self.ranges.sort_unstable_by_key(|r| r.0);
            }
            self.last = (1, 0, OTHER);
        }
    }

    /// The bucket of byte address `addr` now.
    #[inline]
    pub fn lookup(&mut self, addr: u64) -> u32 {
        let (lo, hi, id) = self.last;
        if addr >= lo && addr < hi {
            return id;
        }
        let found = self.find(addr);
        if let Some(r) = found {
            self.last = r;
            return r.2;
        }
        if self.stacks.iter().any(|&(lo, hi)| addr >= lo && addr < hi) {
            STACK
        } else {
            OTHER
        }
    }

    fn find(&self, addr: u64) -> Option<(u64, u64, u32)> {
        if let Some((&s, &(e, id))) = self.heap.range(..=addr).next_back() {
            if addr < e {
                return Some((s, e, id));
            }
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

    /// The module an instruction address belongs to: by the memory map, or the one module
    /// loaded without a map.
    pub fn module_of(&self, pc: u64) -> Option<&Module> {
        if self.ranges.is_empty() {
            // No map: only the program loaded at its link addresses, within its segments.
            return self
                .modules
                .first()
                .filter(|m| pc >= m.span.0 && pc < m.span.1);
        }
        let i = self.ranges.partition_point(|r| r.0 <= pc);
        let &(_, e, m) = self.ranges.get(i.checked_sub(1)?)?;
        (pc < e).then(|| &self.modules[m])
    }

    /// Notes naming the modules without a symbol table and those without debug information
    /// (one note each; Valgrind's own files left out).
    pub fn module_notes(&self) -> Vec<String> {
        let names = |f: &dyn Fn(&Module) -> bool| -> Vec<String> {
            self.modules
                .iter()
                .filter(|m| m.loaded() && !is_valgrind_file(&m.path) && f(m))
                .map(|m| m.path.display().to_string())
                .collect()
        };
        let mut notes = Vec::new();
        let stripped = names(&|m| !m.has_symbols);
        if !stripped.is_empty() {
            notes.push(format!(
                "no symbol table (stripped) in {}: only exported functions and variables have \
                 names; other code is named module+offset, unnamed static data is the bucket \
                 \"MODULE static data (no symbol)\"",
                stripped.join(", ")
            ));
        }
        let no_debug = names(&|m| !m.has_debug_info);
        if !no_debug.is_empty() {
            notes.push(format!(
                "no debug information in {}: code lines there are by function and module offset",
                no_debug.join(", ")
            ));
        }
        notes
    }

    /// Any loaded module lacks debug information or symbols.
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    /// The code line of `pc`.
    pub fn code_line(&self, symbolizer: &mut Symbolizer, pc: u64) -> CodeLine {
        symbolizer.code_line(pc, self.module_of(pc))
    }

    /// The full source path of the instruction at `pc` (see [`Module::source_path`]).
    pub fn source_path(&self, pc: u64) -> Option<String> {
        self.module_of(pc)?.source_path(pc)
    }

    /// Every bucket's final name and kind: heap paths get named by their first frames
    /// outside allocator wrappers (which can make two paths one name: the caller merges).
    pub fn finish_names(&self, symbolizer: &mut Symbolizer) -> Vec<(String, BucketKind)> {
        self.infos
            .iter()
            .map(|info| match info.kind {
                BucketKind::Heap => (self.site_name(symbolizer, &info.path), BucketKind::Heap),
                kind => (info.name.clone(), kind),
            })
            .collect()
    }

    fn site_name(&self, symbolizer: &mut Symbolizer, path: &[u64]) -> String {
        // Return addresses point after the call: look up the call instruction itself, and
        // expand it into its inlined frames (a static helper inlined into its caller is still
        // a frame of the path, at the line of the inlined call).
        let mut frames: Vec<(CodeLine, bool)> = Vec::new();
        for &ra in path {
            let pc = ra.saturating_sub(1);
            let module = self.module_of(pc);
            let runtime = module.is_some_and(|m| is_runtime_library(&m.path));
            for line in symbolizer.frames(pc, module) {
                let wrapper = runtime
                    || line
                        .function
                        .as_deref()
                        .is_some_and(|f| is_allocator_wrapper(f) || is_start_up(f));
                frames.push((line, wrapper));
            }
        }
        let mut own = frames.iter().filter(|f| !f.1).map(|f| f.0.site());
        match (own.next(), own.next()) {
            (Some(a), Some(b)) => format!("{a}-{b}"),
            (Some(a), None) => a,
            (None, _) => match frames.first() {
                Some(f) => format!("{} (heap)", f.0.site()),
                None => "heap (no call path)".into(),
            },
        }
    }
}

/// The program's start-up code below `main`: never who wants the memory.
fn is_start_up(function: &str) -> bool {
    ["_start", "__libc_start_main", "__libc_start_call_main"].contains(&function)
}

/// Valgrind's own files mapped into a recorded program (its tool, its preloads, vgdb's
/// shared memory): not the program's, so no notes about them.
fn is_valgrind_file(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p.contains("/valgrind/") || p.contains("vgdb-pipe") || p.contains("vgpreload")
}

/// The range of sorted, disjoint `ranges` holding `addr`.
fn within(ranges: &[(u64, u64, u32)], addr: u64) -> Option<(u64, u64, u32)> {
    let i = ranges.partition_point(|g| g.0 <= addr);
    let &(s, e, id) = ranges.get(i.checked_sub(1)?)?;
    (addr < e).then_some((s, e, id))
}

/// The C library, the dynamic loader, the C++ runtime and the recording interposer: frames
/// there are how memory gets allocated, not who wants it.
fn is_runtime_library(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        "libc.so",
        "libc-",
        "ld-linux",
        "libstdc++",
        "libcachescope",
        "vgpreload",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Allocation wrappers commonly defined in programs themselves.
fn is_allocator_wrapper(function: &str) -> bool {
    const WRAPPERS: [&str; 12] = [
        "malloc",
        "calloc",
        "realloc",
        "xmalloc",
        "xcalloc",
        "xrealloc",
        "xzalloc",
        "xcharalloc",
        "xmemdup",
        "ximemdup",
        "xnmalloc",
        "xstrdup",
    ];
    WRAPPERS.contains(&function) || function.starts_with("operator new")
}
