//! glibc's allocator entry points, reached without going through the exported hooks.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

unsafe extern "C" {
    pub fn __libc_malloc(size: usize) -> *mut c_void;
    pub fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    pub fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    pub fn __libc_free(p: *mut c_void);
    pub fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    pub fn __libc_valloc(size: usize) -> *mut c_void;
    pub fn __libc_pvalloc(size: usize) -> *mut c_void;
}

/// malloc's guaranteed alignment on 64-bit glibc.
const MALLOC_ALIGN: usize = 16;

/// A global allocator over `__libc_*`.
pub struct LibcAlloc;

// SAFETY: forwards to glibc's allocator, which satisfies the GlobalAlloc contract for the
// alignments requested (memalign for the large ones).
unsafe impl GlobalAlloc for LibcAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                __libc_malloc(layout.size()).cast()
            } else {
                __libc_memalign(layout.align(), layout.size()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                __libc_calloc(1, layout.size()).cast()
            } else {
                let p = self.alloc(layout);
                if !p.is_null() {
                    p.write_bytes(0, layout.size());
                }
                p
            }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, _layout: Layout) {
        unsafe { __libc_free(p.cast()) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                return __libc_realloc(p.cast(), new_size).cast();
            }
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            let q = self.alloc(new);
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
            q
        }
    }
}
