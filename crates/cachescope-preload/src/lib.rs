//! `libcachescope_preload.so`: the allocation interposer `cachescope record` loads into the
//! recorded program with `LD_PRELOAD`.
//!
//! It logs every heap allocation and free (with up to [`log::MAX_FRAMES`] return addresses of
//! its call path) and the program's memory map (at start-up and at exit) to the file named by
//! `CACHESCOPE_EVENTS_LOG`, one `write(2)` per record. Each event is also *marked in the
//! reference stream*: the interposer touches (stores to) a sentinel region whose address
//! cachescope chose (`CACHESCOPE_SENTINEL`), once before its own bookkeeping (the "open"
//! touch) and once after it (the "close" touch), with the event's sequence number in the
//! offset. The reader
//! (`cachescope::record::sentinel`) drops both touches and every reference between them (the
//! interposer's own work) and places the event at the close touch. The C library's allocator
//! runs *outside* the bracket: its references are the program's real behaviour.
//!
//! Outside Valgrind (no `vgpreload_core` in `LD_PRELOAD`: the `valgrind` launcher itself, or a
//! program the recorded one starts and Valgrind does not trace), without both environment
//! variables, or when no sentinel region can be reserved, the
//! library only forwards to glibc's `__libc_*` functions and logs nothing. Both variables are
//! removed from the environment at start-up, so programs the recorded one starts (which
//! Valgrind does not trace) do not log into the same file.
//!
//! The protocol (record syntax, offsets) is specified in [`log`] and [`sentinel`]; the
//! reader in the `cachescope` crate implements the other side.

pub mod log;
pub mod sentinel;

mod hooks;
mod libc_alloc;

use std::sync::atomic::{AtomicBool, Ordering};

/// The interposer's own Rust allocations go straight to glibc's allocator, never through the
/// exported `malloc` (which would log them).
#[global_allocator]
static ALLOC: libc_alloc::LibcAlloc = libc_alloc::LibcAlloc;

/// Set once the constructor has reserved the sentinel region and opened the log.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Runs when the dynamic loader loads the library, before the program's `main`.
extern "C" fn start() {
    if !under_valgrind() {
        return;
    }
    // SAFETY: called once, by the loader, before any thread of the program exists.
    if unsafe { log::open_from_env() } && sentinel::reserve_from_env() {
        ACTIVE.store(true, Ordering::Release);
        hooks::log_map(true);
    }
}

/// True in Valgrind's client, whose `LD_PRELOAD` Valgrind prefixes with its own
/// `vgpreload_core`. `LD_PRELOAD` also loads this library into the `valgrind` launcher (a
/// native program that then execs the tool): it must neither log nor take the variables.
fn under_valgrind() -> bool {
    std::env::var_os("LD_PRELOAD").is_some_and(|v| v.to_string_lossy().contains("/vgpreload_core-"))
}

/// Runs at exit (after the program's own destructors): the final memory map.
extern "C" fn stop() {
    if ACTIVE.load(Ordering::Acquire) {
        hooks::log_map(false);
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static START: extern "C" fn() = start;

#[used]
#[unsafe(link_section = ".fini_array")]
static STOP: extern "C" fn() = stop;
