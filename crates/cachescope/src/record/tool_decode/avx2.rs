//! The decoder's AVX2 kernel: eight reference words (one cache line) per step, with one
//! escape test for all eight. Used when the CPU has AVX2 (`tool_decode::decode_run` checks at
//! run time); the scalar loop decodes what is left (the block holding an escape, the tail).
#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use crate::access::AccessKind;

/// For each 4-bit mask of instruction lanes, the `vpermd` indices that give lane `i` the
/// address of the last instruction lane at or before `i` (lane 0 where there is none).
static PICK: [[i32; 8]; 16] = pick_table();

/// For each 4-bit mask of instruction lanes, all ones in the lanes with no instruction at or
/// before them: those take the pc carried in from the words before.
static CARRY: [[i64; 4]; 16] = carry_table();

const fn pick_table() -> [[i32; 8]; 16] {
    let mut t = [[0; 8]; 16];
    let mut h = 0;
    while h < 16 {
        let (mut last, mut i) = (0, 0);
        while i < 4 {
            if (h >> i) & 1 == 1 {
                last = i as i32;
            }
            t[h][2 * i] = 2 * last;
            t[h][2 * i + 1] = 2 * last + 1;
            i += 1;
        }
        h += 1;
    }
    t
}

const fn carry_table() -> [[i64; 4]; 16] {
    let mut t = [[0; 4]; 16];
    let mut h = 0;
    while h < 16 {
        let mut i = 0;
        while i < 4 {
            // No bit at or below `i` is set.
            if h & ((2 << i) - 1) == 0 {
                t[h][i] = -1;
            }
            i += 1;
        }
        h += 1;
    }
    t
}

/// The addresses of four reference words: bits 0-47 sign-extended from bit 47, as
/// `(w & low48 ^ bit47) - bit47`, since AVX2 has no 64-bit arithmetic shift.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn address(w: __m256i, low48: __m256i, bit47: __m256i) -> __m256i {
    _mm256_sub_epi64(_mm256_xor_si256(_mm256_and_si256(w, low48), bit47), bit47)
}

/// Writes the pcs of four records whose addresses are `addrs`, instruction lanes `h`, with
/// `carry` (the last instruction's address before them, in every lane); returns the carry
/// after them. The carry's chain from one step to the next is one blend.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pcs4(addrs: __m256i, h: usize, carry: __m256i, out: *mut MaybeUninit<u64>) -> __m256i {
    // SAFETY: `h < 16` indexes the tables; the caller gives `out` room for four u64s.
    unsafe {
        let pick = _mm256_permutevar8x32_epi32(addrs, _mm256_loadu_si256(PICK[h].as_ptr().cast()));
        let none = _mm256_loadu_si256(CARRY[h].as_ptr().cast());
        _mm256_storeu_si256(out.cast(), _mm256_blendv_epi8(pick, carry, none));
        let last = _mm256_permute4x64_epi64::<0xFF>(pick);
        _mm256_blendv_epi8(last, carry, _mm256_permute4x64_epi64::<0xFF>(none))
    }
}

/// Decodes whole blocks of eight reference words from the start of `bytes` into the columns,
/// stopping before the first block that holds an escape (or is incomplete, in the input or in
/// any column); returns how many words it decoded (a multiple of 8). `last` is the last
/// instruction record's address, carried in and out, as in the scalar loop.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decode_blocks(
    bytes: &[u8],
    last: &mut u64,
    addrs: &mut [MaybeUninit<u64>],
    sizes: &mut [MaybeUninit<u32>],
    kinds: &mut [MaybeUninit<AccessKind>],
    pcs: &mut [MaybeUninit<u64>],
) -> usize {
    let n = (bytes.len() / 8)
        .min(addrs.len())
        .min(sizes.len())
        .min(kinds.len())
        .min(pcs.len());
    let end = n - n % 8;
    let mut i = 0;
    // SAFETY: every load and store below is of words `i..i + 8` with `i + 8 <= end <= n`, in
    // bounds of `bytes` and of every column (unaligned accesses throughout). The kind bytes
    // are `(w >> 58) & 3` of a word whose tag (bits 60-63) is 0, so 0-3: `AccessKind`'s
    // `repr(u8)` discriminants, valid values. The intrinsics need AVX2, which the caller
    // guarantees.
    unsafe {
        let tag = _mm256_set1_epi64x(-1 << 60);
        let low48 = _mm256_set1_epi64x((1 << 48) - 1);
        let bit47 = _mm256_set1_epi64x(1 << 47);
        let size_mask = _mm256_set1_epi32(0x3FF);
        let instr = _mm256_set1_epi32(3);
        // Byte 0 of each dword to bytes 0-3 of its 128-bit lane.
        #[rustfmt::skip]
        let kind_bytes = _mm256_setr_epi8(
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        );
        let mut carry = _mm256_set1_epi64x(*last as i64);
        let src = bytes.as_ptr();
        while i < end {
            let a = _mm256_loadu_si256(src.add(8 * i).cast());
            let b = _mm256_loadu_si256(src.add(8 * i + 32).cast());
            if _mm256_testz_si256(_mm256_or_si256(a, b), tag) == 0 {
                break;
            }
            let (addr_a, addr_b) = (address(a, low48, bit47), address(b, low48, bit47));
            _mm256_storeu_si256(addrs.as_mut_ptr().add(i).cast(), addr_a);
            _mm256_storeu_si256(addrs.as_mut_ptr().add(i + 4).cast(), addr_b);
            // The high dwords of the eight words, in order: size in bits 16-25, kind in 26-27.
            let odd = _mm256_shuffle_ps::<0xDD>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
            let hi = _mm256_permute4x64_epi64::<0xD8>(_mm256_castps_si256(odd));
            let size = _mm256_and_si256(_mm256_srli_epi32::<16>(hi), size_mask);
            _mm256_storeu_si256(sizes.as_mut_ptr().add(i).cast(), size);
            let kind = _mm256_srli_epi32::<26>(hi);
            let kb = _mm256_shuffle_epi8(kind, kind_bytes);
            let lo4 = _mm_cvtsi128_si32(_mm256_castsi256_si128(kb)) as u32;
            let hi4 = _mm_cvtsi128_si32(_mm256_extracti128_si256::<1>(kb)) as u32;
            let k8 = u64::from(lo4) | u64::from(hi4) << 32;
            kinds.as_mut_ptr().add(i).cast::<u64>().write_unaligned(k8);
            let is_instr = _mm256_cmpeq_epi32(kind, instr);
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(is_instr)) as usize;
            carry = pcs4(addr_a, m & 15, carry, pcs.as_mut_ptr().add(i));
            carry = pcs4(addr_b, m >> 4, carry, pcs.as_mut_ptr().add(i + 4));
            i += 8;
        }
        *last = _mm_cvtsi128_si64(_mm256_castsi256_si128(carry)) as u64;
    }
    i
}
