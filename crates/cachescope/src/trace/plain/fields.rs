//! One column's value (address or size) and what is wrong with a bad one. Shared with din.

use crate::trace::Radix;
use crate::trace::lackey::{dec_u32, hex_u64};

pub(super) const HEX_IN_DECIMAL: &str =
    "the address is not decimal (hex addresses need `0x` when the trace is read as decimal)";
pub(crate) const ADDR_OVERFLOW: &str = "the address does not fit in 64 bits";
pub(crate) const BAD_SIZE: &str = "the size must be a decimal number from 1 to 4294967295";

/// An address column and whether it is certainly hex.
pub(super) fn address(
    col: &[u8],
    radix: Radix,
    expected: &'static str,
) -> Result<(u64, bool), &'static str> {
    if let [b'0', b'x' | b'X', digits @ ..] = col {
        return hex_token(digits, expected).map(|v| (v, true));
    }
    match radix {
        Radix::Hex => {
            let v = hex_token(col, expected)?;
            Ok((v, col.iter().any(|b| b.is_ascii_alphabetic())))
        }
        Radix::Decimal => {
            if !col.is_empty()
                && col.iter().all(u8::is_ascii_hexdigit)
                && !col.iter().all(u8::is_ascii_digit)
            {
                return Err(HEX_IN_DECIMAL);
            }
            dec_token(col, expected).map(|v| (v, false))
        }
    }
}

/// A whole column of hex digits (no prefix) as a u64.
pub(crate) fn hex_token(col: &[u8], expected: &'static str) -> Result<u64, &'static str> {
    match hex_u64(col) {
        Some((v, [])) => Ok(v),
        Some(_) | None if col.is_empty() || !col.iter().all(u8::is_ascii_hexdigit) => Err(expected),
        _ => Err(ADDR_OVERFLOW),
    }
}

/// A whole column of decimal digits as a u64.
fn dec_token(col: &[u8], expected: &'static str) -> Result<u64, &'static str> {
    if col.is_empty() || !col.iter().all(u8::is_ascii_digit) {
        return Err(expected);
    }
    col.iter()
        .try_fold(0u64, |v, &b| {
            v.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .ok_or(ADDR_OVERFLOW)
}

/// A size column: decimal, at least 1, fits in a u32.
pub(crate) fn size(col: &[u8]) -> Result<u32, &'static str> {
    match dec_u32(col) {
        Some((v, [])) if v > 0 => Ok(v),
        _ => Err(BAD_SIZE),
    }
}

/// `s` without its leading spaces and tabs.
pub(crate) fn skip_blanks(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    s
}
