//! Address translation: TLBs, page walks and page sizes (docs/tlb.md).
//!
//! A TLB is a cache of page translations, so every array here is a [`crate::sim::Cache`]
//! keyed by page, under any policy a cache has; a fully associative TLB of N entries is an
//! LRU cache of N pages, whose miss ratio is the page-level stack-distance curve at N
//! (`mrc --page`; a page is a line of 4096 bytes).
//!
//! - [`TlbSpec`] (`ENTRIES,WAYS,PAGE`, as the cache flags' `SIZE,ASSOC,LINE`) and
//!   [`TlbConfig`]: first-level data and instruction arrays (`dtlb`, `itlb`) and the
//!   second level (`stlb`) they both miss into, each level with an array per page size;
//!   [`TlbPreset::Skylake`] is Intel's Skylake client core.
//! - [`PageMap`]: the page size of each address (4 KiB everywhere by default; `--pages 2M`,
//!   or ranges), from [`PageRule`]s.
//! - [`Tlbs`] (`tlbs.rs`): one thread's levels; a translation goes to the array of its page
//!   size in each level, the first level then the STLB, and walks when neither holds it.
//! - [`PageCurve`] and [`PageCurves`] (`curve.rs`): page-level miss-ratio curves keyed by
//!   entries and the bytes they cover (`mrc --page`, the report's pages section).
//! - [`walk_entries`] (`walk.rs`): the page-table entries a walk reads, at synthetic
//!   page-table addresses, for the data caches to be fed.
//! - [`TlbSim`]: the TLBs over a trace (one set, or one per thread), an
//!   [`Analysis`](crate::analysis::Analysis); [`Walked`] puts it in front of any analysis,
//!   which then sees the walks' entry reads as loads by [`WALK_PC`]; [`simulate`] runs
//!   `simulate`'s caches behind (or beside) them in one pass.
//!
//! What counts: a data reference is one translation of the page of its first byte (as the
//! caches take the line of its first byte), an instruction fetch one in the ITLB; with no
//! first level for a side, that side is not translated. A reference's `refs` count in the
//! first level's array of its page size, its `misses` there count in the STLB's `refs`, and
//! the STLB's misses are page walks.
//!
//! ```
//! use cachescope::tlb::{PageMap, TlbConfig, TlbSim, TlbSpec};
//! use cachescope::{Access, Batch, analysis::Analysis};
//!
//! // A 2-entry fully associative DTLB: three pages in turn miss every time.
//! let config = TlbConfig { dtlb: vec![TlbSpec::parse("2,full,4K")?], ..TlbConfig::default() };
//! let mut tlb = TlbSim::new(&config, PageMap::default(), false)?;
//! let b: Batch = [0x1000, 0x2000, 0x3000, 0x1000].map(|a| Access::load(a, 8)).into_iter().collect();
//! tlb.observe(&b);
//! let r = tlb.finish();
//! assert_eq!((r.tlbs[0].refs, r.tlbs[0].misses, r.page_walks), (4, 4, 4));
//! # Ok::<(), cachescope::Error>(())
//! ```

mod curve;
mod pages;
mod run;
mod spec;
mod tlbs;
mod translate;
mod walk;

#[cfg(test)]
mod tests;

pub use curve::{
    MAX_ENTRIES, PageCurve, PageCurvePoint, PageCurves, PagePoint, entry_sizes, page_points,
};
pub use pages::{PageMap, PageRule};
pub use run::simulate;
pub use spec::{MIN_PAGE, PAGE_4K, TlbConfig, TlbPreset, TlbSpec, parse_page};
pub use tlbs::{TlbCounts, TlbName, Tlbs, Translation};
pub use translate::{ThreadTlbs, TlbReport, TlbSim, Walked};
pub use walk::{ENTRY_BYTES, PD_BASE, PDPT_BASE, PML4_BASE, PT_BASE, WALK_PC, walk_entries};
