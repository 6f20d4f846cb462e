//! Naming what the buckets and code addresses are: module notes, code lines, source paths,
//! and heap allocation sites named by the first frames that are the program's own.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::{BucketKind, BucketMap};
use crate::attribution::symbols::{CodeLine, Module, Symbolizer};

impl BucketMap {
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
    /// Two sites that differ in a call instruction but share a source line (two `malloc`s on
    /// one line, one function called twice on one line) are told apart by a number in the
    /// call instructions' address order, which is their order on the line: `f.c:12#1`,
    /// `f.c:12#2`.
    pub fn finish_names(&self, symbolizer: &mut Symbolizer) -> Vec<(String, BucketKind)> {
        let named: Vec<(String, BucketKind, Vec<u64>)> = self
            .infos
            .iter()
            .map(|info| match info.kind {
                BucketKind::Heap => {
                    let (name, calls) = self.site_name(symbolizer, &info.path);
                    (name, BucketKind::Heap, calls)
                }
                kind => (info.name.clone(), kind, Vec::new()),
            })
            .collect();
        // The distinct call instructions behind each heap name.
        let mut calls: HashMap<&str, BTreeSet<&[u64]>> = HashMap::new();
        for (name, kind, pcs) in &named {
            if *kind == BucketKind::Heap {
                calls.entry(name).or_default().insert(pcs);
            }
        }
        named
            .iter()
            .map(|(name, kind, pcs)| match calls.get(name.as_str()) {
                Some(sites) if sites.len() > 1 => {
                    let n = sites.iter().position(|s| s == &pcs.as_slice()).unwrap_or(0);
                    (format!("{name}#{}", n + 1), *kind)
                }
                _ => (name.clone(), *kind),
            })
            .collect()
    }

    /// Bucket `id`'s name as [`BucketMap::finish_names`] gives it, before sites sharing a
    /// name are numbered: what a structure is matched by during the pass
    /// (`attribute --pages NAME=SIZE`).
    pub(crate) fn provisional_name(&self, symbolizer: &mut Symbolizer, id: u32) -> String {
        let info = &self.infos[id as usize];
        match info.kind {
            BucketKind::Heap => self.site_name(symbolizer, &info.path).0,
            _ => info.name.clone(),
        }
    }

    /// A heap path's name, from its first two own frames, and those frames' call
    /// instructions (what tells two sites of one name apart).
    pub(super) fn site_name(
        &self,
        symbolizer: &mut Symbolizer,
        path: &[u64],
    ) -> (String, Vec<u64>) {
        // Return addresses point after the call: look up the call instruction itself, and
        // expand it into its inlined frames (a static helper inlined into its caller is still
        // a frame of the path, at the line of the inlined call).
        let mut frames: Vec<(CodeLine, bool, u64)> = Vec::new();
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
                frames.push((line, wrapper, pc));
            }
        }
        let own: Vec<&(CodeLine, bool, u64)> = frames.iter().filter(|f| !f.1).take(2).collect();
        let pcs = own.iter().map(|f| f.2).collect();
        let name = match own.as_slice() {
            [a, b] => format!("{}-{}", a.0.site(), b.0.site()),
            [a] => a.0.site(),
            _ => match frames.first() {
                Some(f) => format!("{} (heap)", f.0.site()),
                None => "heap (no call path)".into(),
            },
        };
        (name, pcs)
    }
}

/// The program's start-up code below `main`: never who wants the memory.
fn is_start_up(function: &str) -> bool {
    ["_start", "__libc_start_main", "__libc_start_call_main"].contains(&function)
}

/// Valgrind's own files mapped into a recorded program (its tool, its preloads, vgdb's
/// shared memory): not the program's, so no notes about them.
pub(super) fn is_valgrind_file(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p.contains("/valgrind/") || p.contains("vgdb-pipe") || p.contains("vgpreload")
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
