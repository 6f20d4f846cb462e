//! Short copies for the encoding loop: a run of fetches writes its template's few bytes into
//! four columns, and a call to `memcpy` or `memset` per column cost more than the bytes
//! (8 % of `record`'s encoding time on bzip2, docs/recording.md).

/// Copies `src` to `dst` (which must have room for `src.len()` bytes and not overlap it): up
/// to 16 bytes by two overlapping moves of the widest word that fits, `memcpy` beyond.
///
/// # Safety
/// `dst` is valid for `src.len()` bytes of writes.
#[inline(always)]
#[allow(unsafe_code)]
pub(super) unsafe fn copy_short(src: &[u8], dst: *mut u8) {
    let (n, s) = (src.len(), src.as_ptr());
    // SAFETY (each arm): every read is inside `src`, every write inside `dst[..n]`.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                *dst = *s;
                *dst.add(n / 2) = *s.add(n / 2);
                *dst.add(n - 1) = *s.add(n - 1);
            }
            4..=7 => {
                let (a, b) = (
                    s.cast::<u32>().read_unaligned(),
                    s.add(n - 4).cast::<u32>().read_unaligned(),
                );
                dst.cast::<u32>().write_unaligned(a);
                dst.add(n - 4).cast::<u32>().write_unaligned(b);
            }
            8..=16 => {
                let (a, b) = (
                    s.cast::<u64>().read_unaligned(),
                    s.add(n - 8).cast::<u64>().read_unaligned(),
                );
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            }
            _ => std::ptr::copy_nonoverlapping(s, dst, n),
        }
    }
}

/// Writes `n` zero bytes at `dst`: [`copy_short`] from a block of zeros, `memset` beyond it.
///
/// # Safety
/// `dst` is valid for `n` bytes of writes.
#[inline(always)]
#[allow(unsafe_code)]
pub(super) unsafe fn zero_short(dst: *mut u8, n: usize) {
    const ZEROS: [u8; 16] = [0; 16];
    // SAFETY: the caller's bound; `copy_short` writes `z.len() = n` bytes.
    unsafe {
        match ZEROS.get(..n) {
            Some(z) => copy_short(z, dst),
            None => std::ptr::write_bytes(dst, 0, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_short, zero_short};

    /// Every length of every arm, at every offset into a larger buffer: the bytes written are
    /// those of `src` (or zeros), and none outside.
    #[test]
    #[allow(unsafe_code)]
    fn short_copies_write_exactly_their_bytes() {
        for n in 0..40 {
            let src: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(37) | 1).collect();
            for at in 0..4 {
                let mut copied = vec![0xAAu8; 48];
                let mut zeroed = vec![0xAAu8; 48];
                // SAFETY: `at + n <= 43 < 48`.
                unsafe {
                    copy_short(&src, copied.as_mut_ptr().add(at));
                    zero_short(zeroed.as_mut_ptr().add(at), n);
                }
                let mut want = vec![0xAAu8; 48];
                want[at..at + n].copy_from_slice(&src);
                assert_eq!(copied, want, "copy of {n} bytes at {at}");
                want[at..at + n].fill(0);
                assert_eq!(zeroed, want, "zeros of {n} bytes at {at}");
            }
        }
    }
}
