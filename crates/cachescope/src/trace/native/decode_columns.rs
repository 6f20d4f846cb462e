//! The column loops of [`super::decode::decode_columns`]: the addresses and pcs of every
//! access (the hot loop, kept out of line), and the rare entries patched in after it (escaped
//! sizes, explicit pcs), found by a cheap scan of their marker bytes.

use super::decode::{sign_extend, word};
use super::encode::{KIND_BITS, LEN_MASK, PC_EXPLICIT, PC_LAST_INSTR, SLOTS};
use super::u32_at;

/// Flag set by [`meta_flags`] for an impossible meta byte.
pub(super) const BAD: u8 = 1;

/// [`PC_EXPLICIT`] if the byte has an explicit pc, [`BAD`] if it is impossible (a delta longer
/// than 8 bytes, or both pc bits).
#[inline(always)]
pub(super) fn meta_flags(m: u8) -> u8 {
    let both = (m & PC_EXPLICIT) != 0 && (m & PC_LAST_INSTR) != 0;
    (m & PC_EXPLICIT) | u8::from((m & LEN_MASK) > 8 || both)
}

/// Calls `f(i)` for each `i` where `hit(bytes[i])`, cheaply skipping runs of misses (the hits,
/// escaped sizes or explicit pcs, are usually rare).
#[inline(always)]
fn for_each_hit(bytes: &[u8], hit: impl Fn(u8) -> bool, mut f: impl FnMut(usize)) {
    const CHUNK: usize = 64;
    for (c, chunk) in bytes.chunks(CHUNK).enumerate() {
        if chunk.iter().fold(false, |any, &b| any | hit(b)) {
            for (k, &b) in chunk.iter().enumerate() {
                if hit(b) {
                    f(c * CHUNK + k);
                }
            }
        }
    }
}

/// Replaces each size 0 by the next escaped size; false unless the escapes are used up exactly.
pub(super) fn patch_sizes(sizes: &[u8], escapes: &[u8], out: &mut [u32]) -> bool {
    let mut wide = escapes.chunks_exact(4).map(|w| u32_at(w, 0));
    let mut ok = true;
    for_each_hit(
        sizes,
        |s| s == 0,
        |i| match wide.next() {
            Some(w) => out[i] = w,
            None => ok = false,
        },
    );
    ok && wide.next().is_none()
}

/// Addresses, each its delta plus the previous address in its slot, and the pcs that are absent
/// or the last fetch's (explicit ones are left 0 for [`patch_pcs`]); returns the delta bytes
/// used. No branch depends on the data. `col` is the address column and everything after it.
///
/// Kept out of line: inlined into [`decode_columns`](super::decode::decode_columns) it was measured 10–15% slower (the
/// surrounding code's live values push the loop's pointers out of registers).
#[inline(never)]
pub(super) fn decode_addrs_pcs(
    meta: &[u8],
    slots: &[u8],
    col: &[u8],
    addrs: &mut [u64],
    pcs: &mut [u64],
) -> usize {
    let mut table = [0u64; SLOTS];
    let Some(last_word) = col.len().checked_sub(8) else {
        return usize::MAX;
    };
    let (mut at, mut last_instr) = (0usize, 0u64);
    let out = addrs.iter_mut().zip(pcs.iter_mut());
    for ((addr, pc), (&m, &s)) in out.zip(meta.iter().zip(slots)) {
        let len = usize::from(m & LEN_MASK);
        // The clamp only binds on damaged blocks (then `at` ends wrong and the caller says so).
        let delta = sign_extend(word(col, at.min(last_word)), len);
        at += len;
        let slot = &mut table[usize::from(s)];
        let a = slot.wrapping_add(delta);
        *slot = a;
        *addr = a;
        if m & KIND_BITS == 0 {
            last_instr = a;
        }
        // Bit 7 (pc = last fetch) sign-extended is the mask.
        *pc = last_instr & (m as i8 >> 7) as u64;
    }
    at
}

/// Fills in the explicit pcs (deltas from the previous explicit pc); false unless the lengths
/// and the first `pc_bytes` bytes of `col` (which has [`PAD`](super::decode::PAD) more) are used up exactly.
pub(super) fn patch_pcs(
    meta: &[u8],
    lens: &[u8],
    col: &[u8],
    pc_bytes: usize,
    pcs: &mut [u64],
) -> bool {
    let (mut prev, mut used, mut at, mut ok) = (0u64, 0usize, 0usize, true);
    for_each_hit(
        meta,
        |m| m & PC_EXPLICIT != 0,
        |i| {
            let len = lens.get(used).map_or(0, |&l| usize::from(l));
            used += 1;
            ok &= len <= 8 && at + len <= pc_bytes;
            let delta = sign_extend(word(col, at.min(pc_bytes)), len & 15);
            prev = prev.wrapping_add(delta);
            at += len;
            pcs[i] = prev;
        },
    );
    ok && used == lens.len() && at == pc_bytes
}
