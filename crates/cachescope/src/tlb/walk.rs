//! Page walks as references: the page-table entries x86-64's four-level walk reads, at
//! synthetic addresses, so the data caches can be fed them (docs/tlb.md, "Page walks").
//!
//! A walk for the page of virtual address `va` reads, in order, the PML4 entry (indexed by
//! bits 47-39), the PDPT entry (38-30), the PD entry (29-21) and the page-table entry
//! (20-12), 8 bytes each; a 2 MiB page's walk ends at its PD entry, a 1 GiB page's at its
//! PDPT entry. No paging-structure cache is modelled: every walk reads every level, and the
//! upper levels' few entries stay in the data caches, as they would in an MMU cache.
//!
//! Each level's tables are laid out one after another in the order of the addresses they
//! map, in the kernel half of the address space, where no user trace has references: the
//! entry of level L for `va` is at `BASE_L + (va[47:0] >> shift_L) × 8`. So eight
//! neighbouring pages' entries share a 64-byte line, as they do in a real page table (one
//! 4 KiB table page maps 2 MiB contiguously), and a table's physical placement, which the
//! kernel chooses, is the one thing left out. Bits above 47 are ignored.

/// The synthetic address of the page-table entries (the last level): 2^36 entries of 8 bytes.
pub const PT_BASE: u64 = 0xffff_8000_0000_0000;
/// Of the page-directory entries (2^27 of them).
pub const PD_BASE: u64 = PT_BASE + (1 << 39);
/// Of the page-directory-pointer entries (2^18).
pub const PDPT_BASE: u64 = PD_BASE + (1 << 30);
/// Of the PML4 entries (512).
pub const PML4_BASE: u64 = PDPT_BASE + (1 << 21);

/// The instruction address given to a walk's references in a batch: no program has code
/// there, so an analysis can tell them from the program's own.
pub use crate::batch::WALK_PC;

/// Bytes of one page-table entry.
pub const ENTRY_BYTES: u32 = 8;

/// The entries a walk for the page of `1 << shift` bytes holding `va` reads, top level first:
/// four for a page below 2 MiB, three up to 1 GiB, two from 1 GiB.
#[inline]
pub fn walk_entries(va: u64, shift: u32) -> impl Iterator<Item = u64> {
    let va = va & ((1 << 48) - 1);
    let levels: usize = if shift >= 30 {
        2
    } else if shift >= 21 {
        3
    } else {
        4
    };
    [
        (PML4_BASE, 39),
        (PDPT_BASE, 30),
        (PD_BASE, 21),
        (PT_BASE, 12),
    ]
    .into_iter()
    .take(levels)
    .map(move |(base, s)| base + (va >> s) * u64::from(ENTRY_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_each_page_size() {
        let va = 0x7f12_3456_7abc_u64;
        let four: Vec<u64> = walk_entries(va, 12).collect();
        assert_eq!(
            four,
            [
                PML4_BASE + (va >> 39) * 8,
                PDPT_BASE + (va >> 30) * 8,
                PD_BASE + (va >> 21) * 8,
                PT_BASE + (va >> 12) * 8
            ]
        );
        assert_eq!(walk_entries(va, 21).count(), 3);
        assert_eq!(walk_entries(va, 30).collect::<Vec<_>>(), four[..2]);
        // Eight neighbouring 4 KiB pages share one line of page-table entries.
        let line = |a: u64| walk_entries(a, 12).last().unwrap() >> 6;
        assert_eq!(line(0x4000_0000), line(0x4000_7fff));
        assert_ne!(line(0x4000_0000), line(0x4000_8000));
        // The regions do not overlap, and the top one fits below 2^64.
        const { assert!(PT_BASE + (1 << 39) <= PD_BASE && PD_BASE + (1 << 30) <= PDPT_BASE) };
        const { assert!(PML4_BASE.checked_add(4096).is_some()) };
        assert_eq!(walk_entries(u64::MAX, 12).last().unwrap(), PD_BASE - 8);
    }
}
