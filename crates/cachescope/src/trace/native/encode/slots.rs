//! The encoder's slot policy: which prediction slot each access's address is a delta from (the
//! [format documentation](super) says why the choice is free).

use crate::access::AccessKind;
use crate::batch::NO_PC;

/// Entries of the encoder's direct-mapped key → slot cache. Collisions cost compression only.
const KEY_CACHE: usize = 4096;
/// Operand numbers above this share a slot (e.g. long `rep movs` sequences).
const MAX_OPERAND: u64 = 7;

/// Chooses each data access's slot: a direct-mapped cache from a key ((pc, operand number), or
/// the 64 KiB region when there is no pc) to a slot, new keys taking slots round robin.
#[derive(Debug)]
pub(super) struct SlotPolicy {
    /// A fixed-size array, so that indexing it by a hash modulo its length needs no check.
    pub(super) keys: Box<[(u64, u8); KEY_CACHE]>,
    pub(super) next: u8,
    /// Data accesses since the last instruction fetch.
    pub(super) operand: u64,
}

impl Default for SlotPolicy {
    fn default() -> Self {
        SlotPolicy {
            keys: Box::new([(u64::MAX, 0); KEY_CACHE]),
            next: 1,
            operand: 0,
        }
    }
}

/// The slot of one access under [`SlotPolicy`], its state passed apart so the encoder's loop
/// keeps `next` and `operand` in registers.
#[inline(always)]
pub(super) fn slot(
    keys: &mut [(u64, u8); KEY_CACHE],
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
    let h = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize % KEY_CACHE;
    let entry = &mut keys[h];
    if entry.0 != key {
        *entry = (key, *next);
        *next = if *next == u8::MAX { 1 } else { *next + 1 };
    }
    entry.1
}
