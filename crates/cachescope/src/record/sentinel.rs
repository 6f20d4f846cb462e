//! Removing the interposer's sentinel brackets from a recorded reference stream and placing
//! its events there.
//!
//! The interposer (`cachescope-preload`) marks event `seq` with a 1-byte store at
//! `base + 2 * (seq % SEQ_MOD)` before its bookkeeping ("open") and at the next byte after it
//! ("close"). (Stores, not loads: Valgrind's JIT deletes loads whose value is unused.) Any
//! reference into a sentinel region counts as a touch, whatever its kind. [`SentinelFilter`] drops every reference into a sentinel region and every
//! reference while a bracket is open (the interposer's own work: unwinding, formatting,
//! `write(2)`), counts the references it keeps, and at each close emits the bracket's events
//! (read from the interposer's log) at `position` = references kept so far.
//!
//! Brackets need not nest: Valgrind runs one thread at a time but may switch threads inside a
//! bracket (at a blocking `write`, say), so another thread's bracket can open and close in the
//! middle. The filter keeps the set of open brackets and drops references while it is not
//! empty; the other thread's references in that window are dropped too (rare: Valgrind
//! switches at most every ~100,000 basic blocks or at a blocking system call).
//!
//! Split by reason to change: this file holds the region's layout and the counts;
//! `sentinel/groups.rs` where the interposer's log groups come from; `sentinel/filter.rs` the
//! filter itself.

mod filter;
mod groups;
#[cfg(test)]
mod tests;

pub use filter::SentinelFilter;
pub use groups::{ChannelLog, GroupSource};

/// Bytes of each sentinel region (the interposer's `sentinel::REGION_LEN`).
pub const REGION_LEN: u64 = 64 * 1024;

/// Sequence numbers are encoded modulo this in the touch offsets.
pub const SEQ_MOD: u64 = REGION_LEN / 2;

/// Where the interposer may map its region, tried in order: far from where Linux and Valgrind
/// put programs, libraries, heaps and stacks, and below Valgrind's client address limit.
pub const CANDIDATES: [u64; 3] = [0x3ca7_e000_0000, 0x2ca7_e000_0000, 0x1ca7_e000_0000];

/// The value of `CACHESCOPE_SENTINEL` for the interposer.
pub fn candidates_env() -> String {
    CANDIDATES
        .iter()
        .map(|c| format!("{c:#x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The sentinel region `addr` falls in, if any.
#[inline]
pub fn region_of(addr: u64) -> Option<u64> {
    let base = addr & !(REGION_LEN - 1);
    CANDIDATES.contains(&base).then_some(base)
}

/// What the filter saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Allocation events (a realloc counts one allocation and one free).
    pub allocs: u64,
    /// Free events.
    pub frees: u64,
    /// Mapping events (every line of every map dump).
    pub maps: u64,
    /// Sentinel brackets closed.
    pub brackets: u64,
    /// References removed: sentinel touches and everything inside brackets.
    pub dropped: u64,
    /// References kept.
    pub kept: u64,
    /// Brackets still open when the trace ended (the program died inside the interposer).
    pub unclosed: u64,
}
