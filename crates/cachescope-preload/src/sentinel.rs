//! The sentinel region: where the interposer's stores mark events in the reference stream.
//!
//! cachescope passes candidate base addresses in `CACHESCOPE_SENTINEL` (comma-separated hex,
//! e.g. `0x3ca7e0000000,0x2ca7e0000000`); the interposer maps [`REGION_LEN`] bytes of
//! private anonymous memory at the first one it can get (`MAP_FIXED_NOREPLACE`, never
//! replacing an existing mapping; a kernel or Valgrind that ignores the flag and places the
//! region elsewhere counts as a failure). The reader treats a reference into *any* candidate
//! region as a sentinel touch, so it need not know which one was taken.
//!
//! Event `seq` is bracketed by a 1-byte touch at `base + 2 * (seq % SEQ_MOD)` (open) and one at
//! `base + 2 * (seq % SEQ_MOD) + 1` (close). A touch is a *store*: Valgrind's JIT (VEX) deletes
//! loads whose value is never used, even volatile ones (seen with Valgrind 3.19: a
//! `(void)volatile_char;` left no trace), while a store always stays.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes reserved for the sentinel region (one byte per open and per close touch).
pub const REGION_LEN: usize = 64 * 1024;

/// Sequence numbers are encoded modulo this in the touch offsets.
pub const SEQ_MOD: u64 = (REGION_LEN / 2) as u64;

/// Environment variable holding the candidate addresses.
pub const ENV: &str = "CACHESCOPE_SENTINEL";

static BASE: AtomicUsize = AtomicUsize::new(0);

/// Maps the region at the first candidate of `$CACHESCOPE_SENTINEL` that is free. Prints why
/// on stderr and returns false when none is.
pub fn reserve_from_env() -> bool {
    let Some(list) = std::env::var_os(ENV) else {
        return false;
    };
    // SAFETY: the constructor runs before the program starts threads.
    unsafe { std::env::remove_var(ENV) };
    let list = list.to_string_lossy().into_owned();
    for text in list.split(',') {
        let Some(addr) = parse_hex(text) else {
            continue;
        };
        if let Some(base) = map_at(addr) {
            BASE.store(base, Ordering::Release);
            return true;
        }
    }
    crate::log::say(&format!(
        "cachescope-preload: could not map the sentinel region at any of {list}; \
         recording without allocation events\n"
    ));
    false
}

/// The region's base, once reserved.
pub fn base() -> usize {
    BASE.load(Ordering::Acquire)
}

fn parse_hex(text: &str) -> Option<usize> {
    let t = text.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    usize::from_str_radix(t, 16).ok().filter(|a| a % 4096 == 0)
}

fn map_at(addr: usize) -> Option<usize> {
    // SAFETY: a fresh anonymous mapping that replaces nothing (MAP_FIXED_NOREPLACE), or is
    // unmapped again at once when placed elsewhere.
    unsafe {
        let p = libc::mmap(
            addr as *mut libc::c_void,
            REGION_LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return None;
        }
        if p as usize != addr {
            libc::munmap(p, REGION_LEN);
            return None;
        }
        Some(addr)
    }
}

/// Stores to the byte at `offset` in the region: the mark the reader looks for.
#[inline(always)]
fn touch(offset: u64) {
    let p = (base() + offset as usize) as *mut u8;
    // SAFETY: `offset < REGION_LEN` and the region is mapped writable for the process's life;
    // nothing else uses it.
    unsafe { std::ptr::write_volatile(p, 1) };
    // Keep the bookkeeping between the two touches.
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// The touch before event `seq`'s bookkeeping.
#[inline(always)]
pub fn open(seq: u64) {
    touch(2 * (seq % SEQ_MOD));
}

/// The touch after it; the event's position in the stream.
#[inline(always)]
pub fn close(seq: u64) {
    touch(2 * (seq % SEQ_MOD) + 1);
}
