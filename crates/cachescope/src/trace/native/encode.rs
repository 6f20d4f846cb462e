//! Column encoding of one block (before compression), and the encoder's slot policy.
//!
//! A block of `n` accesses is a directory of four u32 LE, the lengths of the variable-length
//! columns (`Σ L`, `E`, `X`, `Σ M` below), then seven columns (the full table, with rationale, is
//! in `docs/native-format.md`):
//!
//! 1. meta, `n` bytes: address delta length `L` (bits 0–3, 0–8 bytes), kind code (bits 4–5),
//!    explicit pc (bit 6), pc = last fetch (bit 7);
//! 2. sizes, `n` bytes: the size if 1–255, else 0 = "see the escapes";
//! 3. slots, `n` bytes: the prediction slot the address is a delta from;
//! 4. addresses, `Σ L` bytes: address − the slot's previous address, `L` bytes LE,
//!    sign-extended;
//! 5. escapes, `4 × E` bytes: per size byte 0, the size as u32 LE;
//! 6. pc lengths, `X` bytes: per explicit pc, its delta length `M` (0–8);
//! 7. pc bytes, `Σ M` bytes: per explicit pc, pc − the previous explicit pc, `M` bytes LE,
//!    sign-extended;
//! 8. (version 2) thread switches, the rest of the block, 8 bytes each: the index of the first
//!    access of the new thread's run (u32 LE) and the thread (u32 LE), in the canonical form of
//!    [`Batch`](crate::batch::Batch)'s switches; none when the block is all the main thread's.
//!
//! **Run rows (version 3).** A run of fetches of the Valgrind tool ([`super::runs`]) is one row
//! of meta byte [`RUN_META`] whose size and slot bytes hold its index in the block's run
//! dictionary (`encode/dict.rs`), laid out after the pc bytes; such a block's directory adds
//! the row count and the dictionary's length, and its header carries the runs flag. Columns 1-3
//! then hold one byte per row rather than per access. `record` spends most of its encoding
//! and compression on fetches, about three quarters of a recording's records, so a run of `k`
//! fetches as 3 bytes instead of about `4k` is most of what version 3 saves.
//!
//! **Slots.** The decoder keeps 256 addresses, all 0 at the start of a block; an access's
//! address is its delta plus the address in its slot, and then replaces it. Which slot an
//! access uses is the encoder's choice, so the policy below can improve without changing the
//! format: instruction fetches use slot 0 (deltas are the previous instruction's length, except
//! at branches); a data access with a pc uses a slot of its own per (pc, operand number since
//! the fetch), so a strided operand's delta is its stride, the same every iteration; a data
//! access without a pc uses the slot of its 64 KiB region. Loops thus become repeating byte
//! patterns in every column, which zstd stores as matches and decodes at memory speed.
//!
//! **Meta bits** are laid out for the decoder: the kind code is `3 − kind`
//! ([`AccessKind`](crate::access::AccessKind) as `u8`), so an instruction fetch is 0 and one
//! `test` finds it; bit 7 set means "the pc is the address of the most recent instruction
//! fetch" (this access's own address for a fetch), so sign-extending the byte gives the pc
//! mask; bit 6 means "the pc is in the pc columns"; neither means "no pc"; both is invalid.
//! Every delta chain starts from 0 at the block's first access, so blocks decode independently.
//!
//! The parts: `encode/slots.rs` picks the slots, `encode/push.rs` appends accesses and run
//! rows to the columns (the hot loop), `encode/dict.rs` keeps the block's run dictionary,
//! `encode/block.rs` holds the columns and hands them off.

mod block;
mod dict;
mod push;
mod slots;

pub(super) use block::read_switches;
pub(super) use block::{BlockEncoder, Columns};
pub(super) use dict::unzigzag;
pub(crate) use push::{Item, ItemSource};

/// Bits 0–3 of a meta byte: the address delta length.
pub(super) const LEN_MASK: u8 = 0xf;
/// Bits 4–5 of a meta byte: 3 − the kind's code, so an instruction fetch is 0.
pub(super) const KIND_BITS: u8 = 0x30;
/// Shift of the kind code.
pub(super) const KIND_SHIFT: u32 = 4;
/// Meta bit: the pc is stored in the pc columns.
pub(super) const PC_EXPLICIT: u8 = 0x40;
/// Meta bit: the pc is the address of the most recent instruction fetch.
pub(crate) const PC_LAST_INSTR: u8 = 0x80;
/// The meta byte of a run row (version 3): delta length 15, which no access has, kind code 0
/// (a fetch), no pc bits.
pub(super) const RUN_META: u8 = 0x0f;
/// Prediction slots.
pub(super) const SLOTS: usize = 256;
/// Most raw bytes one access can take: meta, size, slot, 8 address bytes, 4 escape bytes, a pc
/// length, 8 pc bytes and a thread switch.
const MAX_RAW_PER_ACCESS: usize = 24 + THREAD_SWITCH_LEN;
/// Bytes of one thread switch in the last column.
pub(super) const THREAD_SWITCH_LEN: usize = 8;
/// Bytes of the column directory.
pub(super) const DIRECTORY_LEN: usize = 16;

/// Most raw bytes a block of `n` accesses can take.
pub(super) fn max_raw_len(n: usize) -> usize {
    DIRECTORY_LEN + MAX_RAW_PER_ACCESS * n
}

/// Writes `value`'s 8 bytes at `col + *at` and moves `*at` on by `len`: a fixed 8-byte copy
/// then a cut, cheaper than a variable-length copy.
///
/// # Safety
/// `col + *at .. col + *at + 8` must lie in one allocation.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn put_low_bytes(col: *mut u8, at: &mut usize, value: u64, len: usize) {
    // SAFETY: the caller's bounds; unaligned writes are allowed for `[u8; 8]`.
    unsafe {
        col.add(*at)
            .cast::<[u8; 8]>()
            .write_unaligned(value.to_le_bytes())
    };
    *at += len;
}

/// Fewest bytes from which `delta` sign-extends back (0 for 0).
#[inline]
pub(super) fn byte_len(delta: u64) -> usize {
    // Zigzag moves the sign to bit 0, so its bit length is the signed bit length.
    let zigzag = (delta << 1) ^ ((delta as i64 >> 63) as u64);
    (64 - zigzag.leading_zeros() as usize).div_ceil(8)
}
