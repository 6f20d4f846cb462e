//! Symbols: global and static variables from ELF symbol tables, and instruction addresses →
//! function, file and line through DWARF.
//!
//! A [`Module`] is one ELF file (the executable or a shared library) and its *load bias*, the
//! amount added to its link-time addresses where it was mapped: 0 for a non-PIE executable,
//! the mapping's start for a PIE executable or a library (computed from the memory map and
//! the file's first `PT_LOAD` segment, see [`load_bias`]). Variables are the `STT_OBJECT`
//! symbols with a size in a data section (`.data`, `.bss`, `.rodata`…; thread-local ones are
//! left out, their addresses differ per thread). Code lines come from addr2line's `Loader`
//! (DWARF line tables, falling back to the symbol table for the function name), demangled
//! (Rust, then C++), and are cached per instruction address because many references share one.
//!
//! The symbol-table fallback only names a function whose symbol *contains* the address (its
//! size known): in a stripped library the nearest preceding exported symbol is usually some
//! unrelated function. An address no symbol covers is named by its module and link-time
//! offset (`libc.so.6+0x9f2a0`, `sort+0x5a3c`), which `objdump -d` and `addr2line -e` read.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use hashbrown::HashMap;
use object::{Object, ObjectKind, ObjectSection, ObjectSegment};

mod debug_file;
pub mod layout;
mod plt;
mod tables;
#[cfg(test)]
mod tests;
pub use tables::demangle;
use tables::{file_name, functions, variables};

/// A global or static variable: its run-time address range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Demangled name.
    pub name: String,
    /// First byte (load bias added).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Where an instruction comes from in the source.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct CodeLine {
    /// Demangled function name, when a symbol or DWARF covers the address.
    pub function: Option<String>,
    /// Source file (file name only), when DWARF line tables cover the address.
    pub file: Option<String>,
    /// Source line.
    pub line: Option<u32>,
    /// The instruction address itself when nothing better is known (else 0).
    pub address: u64,
    /// The file name of the module holding the address, when no source line is known.
    pub module: Option<String>,
    /// The address's link-time offset in that module (what `objdump -d` shows), when
    /// `module` is set.
    pub offset: u64,
}

impl CodeLine {
    /// `function file:line`, `function module+0xOFFSET`, `module+0xOFFSET`,
    /// `function 0xADDR` or `0xADDR`, whichever is known.
    pub fn label(&self) -> String {
        match (&self.function, &self.file, self.line) {
            (Some(f), Some(file), Some(l)) => format!("{f} {file}:{l}"),
            (None, Some(file), Some(l)) => format!("{file}:{l}"),
            (Some(f), _, _) if self.address == 0 => f.clone(),
            (Some(f), _, _) => format!("{f} {}", self.place()),
            _ => self.place(),
        }
    }

    /// `module+0xOFFSET` when the module is known, else `0xADDR`.
    fn place(&self) -> String {
        match &self.module {
            Some(m) => format!("{m}+0x{:x}", self.offset),
            None => format!("0x{:x}", self.address),
        }
    }

    /// `function(file:line)`, the form heap allocation sites are named with.
    pub fn site(&self) -> String {
        match (&self.function, &self.file, self.line) {
            (Some(f), Some(file), Some(l)) => format!("{f}({file}:{l})"),
            (Some(f), _, _) => f.clone(),
            _ => self.place(),
        }
    }
}

/// One ELF file mapped into the program, with its variables and its debug information.
pub struct Module {
    /// The file.
    pub path: PathBuf,
    /// Added to link-time addresses to get run-time addresses.
    pub bias: u64,
    /// Its global and static variables, at run-time addresses, sorted by start.
    pub variables: Vec<Variable>,
    /// The file whose DWARF lines name its code: itself, or its separate debug file.
    lines_from: Option<PathBuf>,
    /// DWARF (and symbol table) lookups, made on the first lookup (`None` inside when the file
    /// could not be loaded). Made eagerly, a distribution's libc debug file held 12-33 MB of
    /// parsed abbreviations from the attribution's start to its end, while lines are only
    /// looked up after the pass, for the code and heap sites the report names.
    loader: std::cell::OnceCell<Option<addr2line::Loader>>,
    /// True when the file has DWARF line information.
    pub has_debug_info: bool,
    /// True when the file has a static symbol table (`.symtab`, gone when stripped).
    pub has_symbols: bool,
    /// Run-time addresses its loadable segments span (empty when unknown).
    pub span: (u64, u64),
    /// Its writable loadable segments (`.data`, `.bss`, …) at run-time addresses: the
    /// address region its static data lives in, whether or not symbols name it.
    pub data_segments: Vec<(u64, u64)>,
    /// Functions with a known size: (start, end, name) at link-time addresses, sorted.
    functions: Vec<(u64, u64, String)>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("path", &self.path)
            .field("bias", &self.bias)
            .field("variables", &self.variables.len())
            .field("has_debug_info", &self.has_debug_info)
            .finish()
    }
}

/// The load bias of `data` (an ELF file) mapped at `map_start` from file offset `map_offset`:
/// `map_start − map_offset − (p_vaddr − p_offset)` of the `PT_LOAD` segment holding that
/// offset (page-aligned as the loader maps it). `None` when no segment holds it.
pub fn load_bias(file: &object::File<'_>, map_start: u64, map_offset: u64) -> Option<u64> {
    const PAGE: u64 = 0xfff;
    file.segments().find_map(|seg| {
        let (off, size) = seg.file_range();
        let (off_a, vaddr_a) = (off & !PAGE, seg.address() & !PAGE);
        (map_offset >= off_a && map_offset < off + size.max(1)).then(|| {
            map_start
                .wrapping_sub(map_offset - off_a)
                .wrapping_sub(vaddr_a)
        })
    })
}

impl Module {
    /// The name of bytes `[from, to)` of `var` (one of its variables), as its fields or
    /// elements where the DWARF of its types says (`counters.b`, `slots[1]`,
    /// `slots[0]..slots[3]`), else as its offsets (`counters+8-15`). `layouts` caches each
    /// variable's layout between calls.
    pub fn field_name(
        &self,
        var: &Variable,
        from: u64,
        to: u64,
        layouts: &mut HashMap<(PathBuf, u64), Option<layout::Layout>>,
    ) -> String {
        let (a, b) = (
            from.saturating_sub(var.start),
            to.min(var.end).saturating_sub(var.start),
        );
        // The whole variable, or a part of one whose type says nothing finer.
        let offsets = |a: u64, b: u64| {
            if a == 0 && b >= var.end - var.start {
                var.name.clone()
            } else {
                format!("{}+{}-{}", var.name, a, b.saturating_sub(1))
            }
        };
        let file = self.lines_from.clone().unwrap_or_else(|| self.path.clone());
        let link = var.start.wrapping_sub(self.bias);
        let layout = layouts
            .entry((file.clone(), link))
            .or_insert_with(|| layout::variable_layout(&file, link));
        match layout {
            Some(l) => {
                let (first, last) = (l.path(a), l.path(b.saturating_sub(1).max(a)));
                if first.is_empty() && matches!(l, layout::Layout::Scalar(_)) {
                    var.name.clone()
                } else if first.is_empty() {
                    offsets(a, b)
                } else if first == last {
                    format!("{}{first}", var.name)
                } else {
                    format!("{}{first}..{}{last}", var.name, var.name)
                }
            }
            None => offsets(a, b),
        }
    }

    /// Loads `path`. `mapped` is where it was mapped (start, file offset) when a memory map
    /// is known; without one, a non-PIE executable's link addresses are used as they are and
    /// a position-independent file gets bias 0 (its addresses will then not match, which the
    /// caller notes). Never fails: an unreadable or non-ELF file gives an empty module.
    pub fn load(path: &Path, mapped: Option<(u64, u64)>) -> (Module, Vec<String>) {
        let mut notes = Vec::new();
        let mut module = Module {
            path: path.to_owned(),
            bias: 0,
            variables: Vec::new(),
            lines_from: None,
            loader: std::cell::OnceCell::new(),
            has_debug_info: false,
            has_symbols: false,
            span: (0, 0),
            data_segments: Vec::new(),
            functions: Vec::new(),
        };
        let data = match std::fs::read(path) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!(
                    "cannot read {} ({e}): its variables and code lines are unknown",
                    path.display()
                ));
                return (module, notes);
            }
        };
        let file = match object::File::parse(&*data) {
            Ok(f) => f,
            Err(e) => {
                notes.push(format!(
                    "{} is not an object file ({e}): its variables and code lines are unknown",
                    path.display()
                ));
                return (module, notes);
            }
        };
        module.bias = match mapped {
            Some((start, offset)) => load_bias(&file, start, offset).unwrap_or(0),
            None => {
                if file.kind() != ObjectKind::Executable {
                    notes.push(format!(
                        "no memory map: {} is position-independent, so its link addresses \
                         are used unchanged and its variables will not match",
                        path.display()
                    ));
                }
                0
            }
        };
        module.variables = variables(&file, module.bias);
        module.functions = functions(&[&file]);
        module.data_segments = file
            .segments()
            .filter(|s| {
                matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_W != 0)
            })
            .map(|s| {
                let start = s.address().wrapping_add(module.bias);
                (start, start.wrapping_add(s.size()))
            })
            .filter(|r| r.0 < r.1)
            .collect();
        module.span = file
            .segments()
            .map(|s| (s.address(), s.address() + s.size()))
            .fold((u64::MAX, 0), |a, s| (a.0.min(s.0), a.1.max(s.1)));
        module.span = if module.span.0 < module.span.1 {
            (
                module.span.0.wrapping_add(module.bias),
                module.span.1.wrapping_add(module.bias),
            )
        } else {
            (0, 0)
        };
        module.has_symbols = file.symbols().next().is_some();
        module.has_debug_info = has_lines(&file);
        // A distribution's library keeps its symbols and lines in a separate debug file:
        // its functions and lines name the code (its variables are left to the file's own
        // symbols, which name the exported ones).
        let mut lines_from = path.to_owned();
        if !module.has_debug_info || !module.has_symbols {
            let root = Path::new(debug_file::DEBUG_ROOT);
            if let Some(debug) = debug_file::find(&file, path, root) {
                if let Ok(data) = std::fs::read(&debug) {
                    if let Ok(separate) = object::File::parse(&*data) {
                        module.functions = functions(&[&file, &separate]);
                        module.has_symbols |= separate.symbols().next().is_some();
                        if !module.has_debug_info && has_lines(&separate) {
                            module.has_debug_info = true;
                            lines_from = debug;
                        }
                    }
                }
            }
        }
        module.lines_from = Some(lines_from);
        (module, notes)
    }

    /// True when the file was read and parsed as an object file.
    pub fn loaded(&self) -> bool {
        self.span != (0, 0) || !self.functions.is_empty() || !self.variables.is_empty()
    }

    /// The source location of the instruction at run-time address `pc`: the innermost
    /// frame, so the function the line belongs to, inlining included.
    pub fn code_line(&self, pc: u64) -> CodeLine {
        self.frames(pc).swap_remove(0)
    }

    /// The logical frames at run-time address `pc`, innermost first: the function holding
    /// the instruction, then each function it was inlined into, at the line of the inlined
    /// call (`pool_take` inlined into `make_key` inlined into `main` gives three). Never
    /// empty.
    pub fn frames(&self, pc: u64) -> Vec<CodeLine> {
        let probe = pc.wrapping_sub(self.bias);
        let bare = CodeLine {
            address: pc,
            module: self
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned()),
            offset: probe,
            ..CodeLine::default()
        };
        let mut out = Vec::new();
        if let Some(loader) = self.loader() {
            if let Ok(mut frames) = loader.find_frames(probe) {
                while let Ok(Some(frame)) = frames.next() {
                    let mut c = bare.clone();
                    if let Some(func) = &frame.function {
                        c.function = func.demangle().ok().map(Cow::into_owned);
                    }
                    if let Some(loc) = &frame.location {
                        c.file = loc.file.map(file_name);
                        c.line = loc.line;
                    }
                    out.push(c);
                }
            }
        }
        if out.is_empty() {
            out.push(bare);
        }
        for c in &mut out {
            if c.function.is_none() {
                c.function = self.function_at(probe).map(demangle);
            }
            if c.line.is_some() {
                (c.address, c.module, c.offset) = (0, None, 0);
            }
        }
        out
    }

    /// The source file of the instruction at run-time address `pc` as its DWARF line table
    /// names it (compilation directory joined: usually an absolute path), for tools that open
    /// the source (`cg_annotate`). [`CodeLine::file`] is this path's last component.
    pub fn source_path(&self, pc: u64) -> Option<String> {
        let loader = self.loader()?;
        let location = loader.find_location(pc.wrapping_sub(self.bias)).ok()??;
        location.file.map(str::to_owned)
    }

    /// The DWARF lookups, loaded on the first call.
    fn loader(&self) -> Option<&addr2line::Loader> {
        self.loader
            .get_or_init(|| {
                let path = self.lines_from.as_ref()?;
                addr2line::Loader::new(path).ok()
            })
            .as_ref()
    }

    /// The function whose symbol covers link-time address `probe`.
    fn function_at(&self, probe: u64) -> Option<&str> {
        let i = self.functions.partition_point(|f| f.0 <= probe);
        let (_, end, name) = self.functions.get(i.checked_sub(1)?)?;
        (probe < *end).then_some(name.as_str())
    }
}

/// `file` has DWARF line information.
fn has_lines(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_line")
        .is_some_and(|s| s.size() > 0)
}

/// Instruction address → [`CodeLine`], over a set of modules, cached per address.
#[derive(Debug, Default)]
pub struct Symbolizer {
    cache: HashMap<u64, CodeLine, foldhash::fast::FixedState>,
}

impl Symbolizer {
    /// The code line of `pc`, found in `module` (or the bare address when `None`).
    pub fn code_line(&mut self, pc: u64, module: Option<&Module>) -> CodeLine {
        if let Some(c) = self.cache.get(&pc) {
            return c.clone();
        }
        let c = self.frames(pc, module).swap_remove(0);
        self.cache.insert(pc, c.clone());
        c
    }

    /// The logical frames at `pc` in `module`, innermost first (see [`Module::frames`]).
    pub fn frames(&mut self, pc: u64, module: Option<&Module>) -> Vec<CodeLine> {
        match module {
            Some(m) => m.frames(pc),
            None => vec![CodeLine {
                address: pc,
                ..CodeLine::default()
            }],
        }
    }
}
