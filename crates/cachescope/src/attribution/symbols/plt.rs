//! Names for the code no symbol sizes: PLT entries (`NAME@plt`, from the dynamic relocations
//! their jumps go through, as objdump and Callgrind name them) and start-up code whose symbols
//! have no size (`_init`, crtstuff's `__do_global_dtors_aux`: each runs to the next function
//! or its section's end).
//!
//! An x86-64 PLT entry, in `.plt` (16 bytes, the first one the resolver's), `.plt.sec` (16)
//! or `.plt.got` (8, 16 with `endbr64`), jumps through a GOT slot: `ff 25 disp32`
//! (`jmp *disp(%rip)`), after an `endbr64` and a `bnd` prefix when the program is built for
//! CET. The slot's dynamic relocation names the symbol; an entry whose slot has none (the
//! resolver's) stays unnamed.

use hashbrown::HashMap;
use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget};

/// `endbr64`.
const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];

/// The PLT entries of `file` named `NAME@plt`: (start, end, name) at link-time addresses.
pub(super) fn plt_entries(file: &object::File<'_>) -> Vec<(u64, u64, String)> {
    if file.architecture() != object::Architecture::X86_64 {
        return Vec::new();
    }
    let (Some(relocations), Some(dynsym)) =
        (file.dynamic_relocations(), file.dynamic_symbol_table())
    else {
        return Vec::new();
    };
    let slots: HashMap<u64, String> = relocations
        .filter_map(|(slot, r)| match r.target() {
            RelocationTarget::Symbol(i) => {
                let name = dynsym.symbol_by_index(i).ok()?.name().ok()?;
                (!name.is_empty()).then(|| (slot, name.to_owned()))
            }
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for section in file.sections() {
        let Ok(name) = section.name() else { continue };
        if !matches!(name, ".plt" | ".plt.sec" | ".plt.got") {
            continue;
        }
        let Ok(data) = section.data() else { continue };
        let step = if name == ".plt.got" && !data.starts_with(&ENDBR64) {
            8
        } else {
            16
        };
        for (k, entry) in data.chunks(step).enumerate() {
            let start = section.address() + (k * step) as u64;
            if let Some(slot) = got_slot(entry, start) {
                if let Some(symbol) = slots.get(&slot) {
                    out.push((start, start + entry.len() as u64, format!("{symbol}@plt")));
                }
            }
        }
    }
    out
}

/// The GOT slot the entry at `start` jumps through: `ff 25 disp32` at its start, after
/// `endbr64`, or after `endbr64` and a `bnd` prefix (`f2`).
fn got_slot(entry: &[u8], start: u64) -> Option<u64> {
    let at = [0, 4, 5].into_iter().find(|&k| {
        entry.get(k..k + 2) == Some(&[0xff, 0x25][..])
            && (k == 0 || entry.starts_with(&ENDBR64))
            && (k != 5 || entry[4] == 0xf2)
    })?;
    let disp = i32::from_le_bytes(entry.get(at + 2..at + 6)?.try_into().ok()?);
    Some((start + at as u64 + 6).wrapping_add_signed(disp.into()))
}

/// The text symbols of `file` without a size, each running to the next of `sized` (sorted,
/// link-time) or of themselves, or to its section's end.
pub(super) fn unsized_functions(
    file: &object::File<'_>,
    sized: &[(u64, u64, String)],
) -> Vec<(u64, u64, String)> {
    let mut bare: Vec<(u64, u64, String)> = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() == 0 && s.is_definition())
        .filter_map(|s| {
            let section = file.section_by_index(s.section_index()?).ok()?;
            let end = section.address() + section.size();
            let name = s.name().ok()?;
            (!name.is_empty() && s.address() < end).then(|| (s.address(), end, name.to_owned()))
        })
        .collect();
    bare.sort();
    bare.dedup_by_key(|f| f.0);
    let starts: Vec<u64> = bare.iter().map(|f| f.0).collect();
    for f in &mut bare {
        let next_bare = starts.iter().find(|&&s| s > f.0).copied();
        let i = sized.partition_point(|s| s.0 <= f.0);
        let next_sized = sized.get(i).map(|s| s.0);
        f.1 = [Some(f.1), next_bare, next_sized]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(f.1);
    }
    bare
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plt_entry_jumps_through_its_got_slot() {
        // printf@plt of examples/callgraph/calltree.c (no CET): `jmp *0x2fe2(%rip)` at 0x1030.
        let plain = [
            0xff, 0x25, 0xe2, 0x2f, 0, 0, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0,
        ];
        assert_eq!(got_slot(&plain, 0x1030), Some(0x1036 + 0x2fe2));
        // .plt.sec with CET: endbr64; bnd jmp *disp(%rip).
        let cet = [
            0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0x10, 0, 0, 0, 0x0f, 0x1f, 0x44, 0, 0,
        ];
        assert_eq!(got_slot(&cet, 0x2000), Some(0x200b + 0x10));
        // The resolver's entry pushes first; padding is no jump.
        let resolver = [
            0xff, 0x35, 1, 0, 0, 0, 0xff, 0x25, 2, 0, 0, 0, 0x0f, 0x1f, 0x40, 0,
        ];
        assert_eq!(got_slot(&resolver, 0x1020), None);
        assert_eq!(got_slot(&[0xcc; 8], 0x1040), None);
    }
}
