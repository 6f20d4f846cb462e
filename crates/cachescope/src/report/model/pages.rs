//! The pages section: each thread's TLB curve (part of `report.json`'s contract, [`super`]).

use serde::{Deserialize, Serialize};

/// Page-level locality (docs/tlb.md): the miss ratio of a fully associative LRU TLB of each
/// entry count, each thread in TLBs of its own (the page-level exact curve of its references).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PagesReport {
    /// The page size in bytes (4 KiB).
    pub page_size: u64,
    /// One curve per thread, in order of first appearance.
    pub threads: Vec<PageThreadCurve>,
}

/// One thread's page-level curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageThreadCurve {
    /// The thread.
    pub thread: crate::ThreadId,
    /// Its data references.
    pub refs: u64,
    /// Distinct pages it touched (its cold misses).
    pub pages: u64,
    /// Entries 1, 2, 4… (eight per octave) up to twice its pages, with the bytes they cover.
    pub points: Vec<crate::tlb::PagePoint>,
}
