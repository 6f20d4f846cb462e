//! The exported allocator functions and the bracketed logging around them.
//!
//! Each hook calls glibc's allocator first (outside any bracket: its references are the
//! program's), then logs the result inside a sentinel bracket. `free` logs before freeing, so
//! the block is dead from the event on. A thread-local flag stops re-entry: an allocation made
//! while logging (by the unwinder, say) is forwarded but not logged, and lies inside the
//! outer bracket anyway.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::libc_alloc::*;
use crate::log::{MAX_FRAMES, Record};
use crate::{ACTIVE, sentinel};

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The interposer's own code, `[lo, hi)`: frames there are dropped from call paths.
static OWN_LO: AtomicUsize = AtomicUsize::new(0);
static OWN_HI: AtomicUsize = AtomicUsize::new(0);

/// An open sentinel bracket; [`Bracket::end`] closes it.
struct Bracket {
    seq: u64,
}

impl Bracket {
    #[inline(always)]
    fn begin() -> Option<Bracket> {
        if !ACTIVE.load(Ordering::Relaxed) || BUSY.with(|b| b.replace(true)) {
            return None;
        }
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        sentinel::open(seq);
        Some(Bracket { seq })
    }

    #[inline(always)]
    fn end(self) {
        sentinel::close(self.seq);
        BUSY.with(|b| b.set(false));
    }
}

/// Return addresses of the current call path outside the interposer, innermost first.
#[inline(never)]
fn frames(out: &mut [u64; MAX_FRAMES]) -> usize {
    let (lo, hi) = (
        OWN_LO.load(Ordering::Relaxed),
        OWN_HI.load(Ordering::Relaxed),
    );
    let mut n = 0;
    let mut seen = 0;
    // SAFETY: BUSY is held, so no other unwinding starts from this thread's hooks; the
    // unwinder itself is thread-safe (glibc's dl_iterate_phdr lock).
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            let ip = frame.ip() as usize;
            seen += 1;
            if ip == 0 || seen > MAX_FRAMES + 16 {
                return false;
            }
            if n == 0 && (lo..hi).contains(&ip) {
                return true;
            }
            out[n] = ip as u64;
            n += 1;
            n < MAX_FRAMES
        });
    }
    n
}

#[inline(never)]
fn log_alloc(p: *mut c_void, size: usize) {
    let Some(b) = Bracket::begin() else {
        return;
    };
    let mut r = Record::default();
    let _ = write!(r, "A {} {:x} {size}", b.seq, p as usize);
    let mut f = [0; MAX_FRAMES];
    let n = frames(&mut f);
    r.finish_with_frames(&f[..n]);
    b.end();
}

#[inline(never)]
fn log_realloc(old: *mut c_void, new: *mut c_void, size: usize) {
    let Some(b) = Bracket::begin() else {
        return;
    };
    let mut r = Record::default();
    let _ = write!(
        r,
        "R {} {:x} {:x} {size}",
        b.seq, old as usize, new as usize
    );
    let mut f = [0; MAX_FRAMES];
    let n = frames(&mut f);
    r.finish_with_frames(&f[..n]);
    b.end();
}

#[inline(never)]
fn log_free(p: *mut c_void) {
    let Some(b) = Bracket::begin() else {
        return;
    };
    let mut r = Record::default();
    let _ = write!(r, "F {} {:x}", b.seq, p as usize);
    r.finish_with_frames(&[]);
    b.end();
}

/// Logs the whole memory map (`first`: also the `H` record and the interposer's own range).
pub fn log_map(first: bool) {
    let Some(b) = Bracket::begin() else {
        return;
    };
    let maps = std::fs::read("/proc/self/maps").unwrap_or_default();
    let mut out = Vec::with_capacity(maps.len() + 96);
    if first {
        find_own_range(&maps);
        out.extend_from_slice(
            format!(
                "H {} {} {:x}\n",
                crate::log::VERSION,
                std::process::id(),
                sentinel::base()
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(format!("M {} {}\n", b.seq, maps.len()).as_bytes());
    out.extend_from_slice(&maps);
    crate::log::write_record(&out);
    b.end();
}

/// Finds the mappings of the file holding this code.
fn find_own_range(maps: &[u8]) {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for an address of this library.
    let ok = unsafe { libc::dladdr(log_map as *const c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return;
    }
    // SAFETY: dladdr returned a NUL-terminated name owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    let real = std::fs::canonicalize(std::ffi::OsStr::new(
        std::str::from_utf8(name).unwrap_or_default(),
    ))
    .ok();
    let (mut lo, mut hi) = (usize::MAX, 0);
    for line in maps.split(|&c| c == b'\n') {
        let text = String::from_utf8_lossy(line);
        let mut fields = text.split_whitespace();
        let (Some(range), Some(path)) = (fields.next(), fields.nth(4)) else {
            continue;
        };
        let same = path.as_bytes() == name
            || real
                .as_ref()
                .is_some_and(|r| r.as_os_str() == std::ffi::OsStr::new(path));
        if !same {
            continue;
        }
        if let Some((a, z)) = range.split_once('-') {
            if let (Ok(a), Ok(z)) = (usize::from_str_radix(a, 16), usize::from_str_radix(z, 16)) {
                lo = lo.min(a);
                hi = hi.max(z);
            }
        }
    }
    if lo < hi {
        OWN_LO.store(lo, Ordering::Relaxed);
        OWN_HI.store(hi, Ordering::Relaxed);
    }
}

/// # Safety
/// The C `malloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    let p = unsafe { __libc_malloc(size) };
    if !p.is_null() {
        log_alloc(p, size);
    }
    p
}

/// # Safety
/// The C `calloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    let p = unsafe { __libc_calloc(n, size) };
    if !p.is_null() {
        log_alloc(p, n.saturating_mul(size));
    }
    p
}

/// # Safety
/// The C `realloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(old: *mut c_void, size: usize) -> *mut c_void {
    let p = unsafe { __libc_realloc(old, size) };
    // NULL with a size: failed, the old block stays. NULL with size 0: the old block is freed.
    if !p.is_null() || (size == 0 && !old.is_null()) {
        log_realloc(old, p, size);
    }
    p
}

/// # Safety
/// The C `reallocarray` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(old: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => unsafe { realloc(old, total) },
        None => {
            unsafe { *libc::__errno_location() = libc::ENOMEM };
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// The C `free` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if !p.is_null() {
        log_free(p);
    }
    unsafe { __libc_free(p) }
}

/// # Safety
/// The C `memalign` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    let p = unsafe { __libc_memalign(align, size) };
    if !p.is_null() {
        log_alloc(p, size);
    }
    p
}

/// # Safety
/// The C `aligned_alloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    if !align.is_power_of_two() {
        unsafe { *libc::__errno_location() = libc::EINVAL };
        return std::ptr::null_mut();
    }
    unsafe { memalign(align, size) }
}

/// # Safety
/// The C `posix_memalign` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !align.is_power_of_two() || align % std::mem::size_of::<usize>() != 0 {
        return libc::EINVAL;
    }
    let p = unsafe { __libc_memalign(align, size) };
    if p.is_null() {
        return libc::ENOMEM;
    }
    unsafe { *out = p };
    log_alloc(p, size);
    0
}

/// # Safety
/// The C `valloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    let p = unsafe { __libc_valloc(size) };
    if !p.is_null() {
        log_alloc(p, size);
    }
    p
}

/// # Safety
/// The C `pvalloc` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    let p = unsafe { __libc_pvalloc(size) };
    if !p.is_null() {
        log_alloc(p, size);
    }
    p
}
