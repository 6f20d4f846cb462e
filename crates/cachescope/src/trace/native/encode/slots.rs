//! The encoder's slot policy: which prediction slot each access's address is a delta from (the
//! [format documentation](super) says why the choice is free).

use crate::access::AccessKind;
use crate::batch::NO_PC;

/// Entries of the encoder's direct-mapped key → slot cache. Collisions cost compression only.
const KEY_CACHE: usize = 4096;
/// Operand numbers above this share a slot (e.g. long `rep movs` sequences).
const MAX_OPERAND: u64 = 7;
/// An entry no key's hash matches (its tag bits are those of a hash, not of this constant,
/// only by a 2^-56 chance, which again costs compression only).
const EMPTY: u64 = u64::MAX;

/// Chooses each data access's slot: a direct-mapped cache from a key ((pc, operand number), or
/// the 64 KiB region when there is no pc) to a slot, new keys taking slots round robin.
///
/// An entry is one word: the key's hash (a bijection of the key) with its low byte replaced by
/// the slot. Two keys whose hashes differ only in that byte would share an entry, which costs
/// compression only, never correctness. Entries of 8 bytes instead of 16 (key, slot, padding)
/// make the table 32 KiB, the size of an L1 data cache: the probe is the encoding loop's
/// hottest load (docs/recording.md measures the change: a few per cent).
#[derive(Debug)]
pub(super) struct SlotPolicy {
    /// A fixed-size array, so that indexing it by a hash modulo its length needs no check.
    pub(super) keys: Box<[u64; KEY_CACHE]>,
    pub(super) next: u8,
    /// Data accesses since the last instruction fetch.
    pub(super) operand: u64,
}

impl Default for SlotPolicy {
    fn default() -> Self {
        SlotPolicy {
            keys: Box::new([EMPTY; KEY_CACHE]),
            next: 1,
            operand: 0,
        }
    }
}

/// The slot of one access under [`SlotPolicy`], its state passed apart so the encoder's loop
/// keeps `next` and `operand` in registers.
#[inline(always)]
pub(super) fn slot(
    keys: &mut [u64; KEY_CACHE],
    next: &mut u8,
    operand: &mut u64,
    kind: AccessKind,
    addr: u64,
    pc: u64,
) -> u8 {
    if kind == AccessKind::Instr {
        *operand = 0;
        return 0;
    }
    let key = if pc == NO_PC {
        (addr >> 16) | 1 << 63
    } else {
        pc.wrapping_mul(MAX_OPERAND + 1).wrapping_add(*operand) & !(1 << 63)
    };
    *operand = (*operand + 1).min(MAX_OPERAND);
    let hash = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let entry = &mut keys[(hash >> 52) as usize % KEY_CACHE];
    if (*entry ^ hash) >> 8 != 0 {
        *entry = hash & !0xff | u64::from(*next);
        *next = if *next == u8::MAX { 1 } else { *next + 1 };
    }
    *entry as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_of(p: &mut SlotPolicy, kind: AccessKind, addr: u64, pc: u64) -> u8 {
        slot(&mut p.keys, &mut p.next, &mut p.operand, kind, addr, pc)
    }

    /// A key keeps its slot while its entry holds it; new keys take slots 1..=255 round robin
    /// (slot 0 is the fetches'), and each operand of an instruction is a key of its own.
    #[test]
    fn keys_keep_their_slots_and_new_ones_take_the_next() {
        let mut p = SlotPolicy::default();
        assert_eq!(slot_of(&mut p, AccessKind::Instr, 0x400000, NO_PC), 0);
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0x1000, 0x400000), 1);
        assert_eq!(slot_of(&mut p, AccessKind::Store, 0x2000, 0x400000), 2);
        assert_eq!(slot_of(&mut p, AccessKind::Instr, 0x400004, NO_PC), 0);
        // The same instruction again: operands 0 and 1 find their slots.
        assert_eq!(slot_of(&mut p, AccessKind::Instr, 0x400000, NO_PC), 0);
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0x1040, 0x400000), 1);
        assert_eq!(slot_of(&mut p, AccessKind::Store, 0x2040, 0x400000), 2);
        // No pc: the 64 KiB region is the key.
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0x9_0000, NO_PC), 3);
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0x9_ff00, NO_PC), 3);
        // Slots wrap from 255 to 1.
        p.next = u8::MAX;
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0, 0x500000), 255);
        assert_eq!(slot_of(&mut p, AccessKind::Instr, 0x500000, NO_PC), 0);
        assert_eq!(slot_of(&mut p, AccessKind::Load, 0, 0x600000), 1);
    }
}
