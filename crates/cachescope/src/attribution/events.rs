//! The attribution event log: a program's memory map and its heap allocations and frees, each
//! placed at its exact position in the reference stream.
//!
//! Stored beside a trace as `TRACE.events` (for `t.cst`, `t.cst.events`): a zstd-compressed
//! stream of JSON lines. The first line is the header, `{"cachescope_events": 1, ...}`; every
//! other line is one [`Event`]. Events are in stream order (non-decreasing `position`).
//!
//! `position` is the number of trace records (every kind, instruction fetches included, as
//! stored in the trace the log belongs to) that come *before* the event: an allocation at
//! position 10 is live for record 10 onwards; a free at position 20 ends it before record 20.
//! A realloc is a `free` followed by an `alloc` at the same position.

use serde::{Deserialize, Serialize};

/// Version of the event log format written by this library.
pub const EVENTS_VERSION: u32 = 1;

/// One mapped region of the program's address space (a line of `/proc/PID/maps`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// First byte of the region.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Offset of `start` in the mapped file (0 for anonymous regions).
    pub offset: u64,
    /// Permissions as `/proc/PID/maps` prints them, e.g. `r-xp`.
    pub perms: String,
    /// The mapped file, or a pseudo-name such as `[stack]` or `[heap]`; empty when anonymous.
    pub path: String,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A region is mapped (the whole map is logged at start-up and again at exit, so regions
    /// loaded with `dlopen` are known too).
    Map(Mapping),
    /// A heap block was allocated (malloc, calloc, realloc, memalign, aligned_alloc,
    /// posix_memalign).
    Alloc {
        /// Address of the block.
        addr: u64,
        /// Size requested, in bytes.
        size: u64,
        /// Return addresses of the call path, innermost first (the allocator's caller first;
        /// the interposer's own frames removed).
        stack: Vec<u64>,
    },
    /// A heap block was freed.
    Free {
        /// Address of the block.
        addr: u64,
    },
}

/// One event and where it falls in the reference stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Number of trace records before the event.
    pub position: u64,
    /// The event.
    #[serde(flatten)]
    pub kind: EventKind,
}
