//! Number fields without allocation: hex addresses (8 digits at once by SWAR) and decimal sizes.
//! Shared with the plain reader, whose column parsers din also uses.

/// The value of each byte as a hex digit, or 0xFF.
static HEX: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// A hex number of at least one digit at the start of `s` (no prefix) and what follows it;
/// `None` when there is no digit or the value needs more than 64 bits.
#[inline(always)]
pub(crate) fn hex_u64(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut v: u64 = 0;
    let mut n = 0;
    // Lackey prints at least 8 digits: take the first 8 at once when they are all hex.
    if let Some(first) = s.first_chunk::<8>() {
        if let Some(x) = swar_hex8(u64::from_le_bytes(*first)) {
            v = x;
            n = 8;
        }
    }
    while let Some(&b) = s.get(n) {
        let d = HEX[usize::from(b)];
        if d > 15 {
            break;
        }
        v = (v << 4) | u64::from(d);
        n += 1;
    }
    if n == 0 {
        return None;
    }
    // More than 16 digits: the value is right (bits shift out) only if the extra ones are zeros.
    if n > 16 && s[..n - 16].iter().any(|&b| b != b'0') {
        return None;
    }
    Some((v, &s[n..]))
}

/// The value of 8 hex digits packed in `x` (first digit in the low byte), or `None` unless all
/// eight bytes are hex digits. SWAR: every byte is checked and converted at once.
#[inline(always)]
pub(super) fn swar_hex8(x: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // With every byte below 0x80, adding (0x80 - k) sets a byte's high bit iff it is >= k,
    // and no carry crosses into the next byte.
    let digit = x.wrapping_add(ONES * (0x80 - 0x30)) & !x.wrapping_add(ONES * (0x80 - 0x3A));
    let lower = x | (ONES * 0x20);
    let letter =
        lower.wrapping_add(ONES * (0x80 - 0x61)) & !lower.wrapping_add(ONES * (0x80 - 0x67));
    if x & HIGH != 0 || (digit | letter) & HIGH != HIGH {
        return None;
    }
    // '0'..'9' -> 0..9, 'a'..'f' and 'A'..'F' -> 10..15.
    let v = (x & (ONES * 0x0F)) + 9 * ((x >> 6) & ONES);
    // Pack nibbles: byte pairs, then 16-bit pairs, then 32-bit pairs; the first digit is highest.
    let v = ((v << 4) | (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = ((v << 8) | (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some(((v & 0xFFFF) << 16) | (v >> 32))
}

/// A decimal number of at least one digit that fits in a u32 at the start of `s`, and what
/// follows it.
#[inline(always)]
pub(crate) fn dec_u32(s: &[u8]) -> Option<(u32, &[u8])> {
    let mut v: u64 = 0;
    let mut n = 0;
    while let Some(&b) = s.get(n) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + u64::from(d);
        if v > u64::from(u32::MAX) {
            return None;
        }
        n += 1;
    }
    if n == 0 {
        return None;
    }
    Some((v as u32, &s[n..]))
}
