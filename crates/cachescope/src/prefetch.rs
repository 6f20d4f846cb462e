//! [`prefetch`]: the one cache-prefetch hint the per-line tables use (the stack-distance and
//! line tables, OPT's run index, random replacement's residence words), so the `unsafe`
//! intrinsic and its portable fallback are written once.

/// Asks the CPU to start loading the cache line holding `x`: a hint, unlike a load it never
/// faults and never holds up the instructions after it while the line comes from memory.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(x: &T) {
    // SAFETY: a prefetch never faults and changes no memory; the pointer is a live reference.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::hint::black_box(x);
}
