//! The ELF symbol tables a [`Module`](super::Module) reads: sized functions (the fallback
//! when DWARF has no line) and sized data objects (the variables), demangled.

use std::borrow::Cow;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind};

use super::Variable;

/// The sized function symbols of `files` (static and dynamic; a file and its separate debug
/// file share link-time addresses), at link-time addresses, sorted.
pub(super) fn functions(files: &[&object::File<'_>]) -> Vec<(u64, u64, String)> {
    let mut out: Vec<(u64, u64, String)> = files
        .iter()
        .flat_map(|file| file.symbols().chain(file.dynamic_symbols()))
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            Some((
                s.address(),
                s.address() + s.size(),
                s.name().ok()?.to_owned(),
            ))
        })
        .collect();
    out.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1)));
    // Aliases share a start: keep the first (widest); a symbol inside another is dropped.
    let mut kept: Vec<(u64, u64, String)> = Vec::with_capacity(out.len());
    for f in out {
        if kept.last().is_none_or(|k| f.0 >= k.1) {
            kept.push(f);
        }
    }
    // What no sized symbol covers: PLT entries and start-up code (`plt.rs`).
    let mut more: Vec<(u64, u64, String)> = Vec::new();
    for file in files {
        more.extend(super::plt::plt_entries(file));
        more.extend(super::plt::unsized_functions(file, &kept));
    }
    more.retain(|f| {
        let i = kept.partition_point(|k| k.1 <= f.0);
        kept.get(i).is_none_or(|k| k.0 >= f.1)
    });
    if !more.is_empty() {
        kept.extend(more);
        kept.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1)));
        kept.dedup_by(|b, a| b.0 < a.1);
    }
    kept
}

/// Demangles Rust (`_R`, legacy `_ZN…E`) and C++ (`_Z`) symbol names; C names stay as they
/// are (a C++ demangler would read the C variable `n` as the type `__int128`).
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z") {
        addr2line::demangle_auto(Cow::Borrowed(name), None).into_owned()
    } else {
        name.to_owned()
    }
}

/// `/a/b/c.rs` → `c.rs`: tables stay narrow; the function name disambiguates.
pub(super) fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

/// The sized data objects of `file`, at run-time addresses, sorted and without overlaps.
pub(super) fn variables(file: &object::File<'_>, bias: u64) -> Vec<Variable> {
    let mut seen = hashbrown::HashSet::new();
    let mut out: Vec<Variable> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == object::SymbolKind::Data && s.size() > 0)
        .filter(|s| {
            let Some(index) = s.section_index() else {
                return false;
            };
            file.section_by_index(index).is_ok_and(|sec| {
                matches!(
                    sec.kind(),
                    SectionKind::Data
                        | SectionKind::UninitializedData
                        | SectionKind::ReadOnlyData
                        | SectionKind::ReadOnlyDataWithRel
                        | SectionKind::ReadOnlyString
                )
            })
        })
        .filter_map(|s| {
            let name = s.name().ok()?;
            seen.insert((s.address(), name.to_owned()))
                .then(|| Variable {
                    name: demangle(name),
                    start: s.address().wrapping_add(bias),
                    end: s.address().wrapping_add(bias).wrapping_add(s.size()),
                })
        })
        .collect();
    out.sort_by_key(|v| (v.start, std::cmp::Reverse(v.end)));
    // Aliases (a symbol and its versioned twin) share a start: keep the first, drop overlaps.
    let mut kept: Vec<Variable> = Vec::with_capacity(out.len());
    for v in out {
        if kept.last().is_none_or(|k| v.start >= k.end) {
            kept.push(v);
        }
    }
    kept
}
