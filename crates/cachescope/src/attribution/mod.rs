//! Data-structure attribution (Buck & Hollingsworth): which variable, heap allocation site and
//! code line misses, and which evicts which.
//!
//! The recording side ([`events`]) captures what a trace alone lacks: the program's memory map
//! and every heap allocation and free, each placed exactly in the reference stream. The
//! analysis side maps every address to a *stat bucket* (global variable, heap allocation site,
//! stack, other) and counts misses and evictions per bucket in an exact cache simulation, beside
//! the sampled view of the paper's proposed hardware monitor.
//!
//! | module | concern |
//! | --- | --- |
//! | [`run_id`] | the id a recording writes into its trace and its event log, checked when they meet |
//! | [`symbols`] | ELF variables at run-time addresses; pc → function, file, line (DWARF) |
//! | [`types`] | the data types of variables and pointers (DWARF): structures' fields, arrays' dimensions |
//! | [`buckets`] | address → bucket as allocation and map events unfold |
//! | [`follow`] | the event log applied to the buckets as the trace streams |
//! | [`measure`] | [`Attribution`]: the exact simulation with a bucket per resident line |
//! | `fields` | per-field counts by (bucket, instruction) during the pass; conflict misses by set |
//! | `residency` | the resident lines: who fetched each, its touched bytes and dirty bit |
//! | [`structures`] | a bucket's data type: a global's, a heap site's through its pointer |
//! | [`strides`] | each load instruction's dominant stride and its regularity |
//! | [`sampler`] | the monitor's 1-in-N randomized-interval sampling |
//! | [`cost`] | the monitor's own cost: its footprint injected per sample |
//! | [`report`] | [`Report`]: Tables 1–5, the cost table, per-bucket curves, notes |
//! | [`cachegrind_out`] | the counts per source line as a `cachegrind.out` file (`cg_annotate`) |
//! | [`callgraph`] | misses by function, self and inclusive of its callees, calls between functions; `callgrind.out` files |
//!
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::attribution::{Attribution, Options};
//! use cachescope::attribution::events::{Event, EventKind};
//! use cachescope::{Access, Batch};
//!
//! // A 2-line direct-mapped cache; a heap block at 0x1000 (128 bytes) allocated at position 0.
//! let opts = Options { geometry: "64,1,32".parse()?, sample_every: 1, ..Options::default() };
//! let alloc = Event { position: 0, kind: EventKind::Alloc { addr: 0x1000, size: 128, stack: vec![] } };
//! let mut a = Attribution::new(opts, Some(Box::new(vec![Ok(alloc)].into_iter())))?;
//! // 0x1000 and 0x1040 share set 0: the second evicts the first, then "other" evicts it.
//! let batch: Batch = [0x1000, 0x1040, 0x9000].map(|x| Access::load(x, 8)).into_iter().collect();
//! a.observe(&batch);
//! let r = a.finish()?;
//! assert_eq!(r.misses, 3);
//! let heap = r.buckets.iter().find(|b| b.kind == cachescope::attribution::BucketKind::Heap).unwrap();
//! assert_eq!((heap.misses, heap.evicted), (2, 2));
//! # Ok::<(), cachescope::Error>(())
//! ```

mod bucket_mrc;
pub mod buckets;
pub mod cachegrind_out;
pub mod callgraph;
pub mod cost;
pub mod events;
mod fields;
pub mod follow;
pub mod measure;
pub mod report;
mod residency;
pub mod run_id;
pub mod sampler;
pub mod strides;
pub mod structures;
pub mod symbols;
mod tally;
pub mod tlb;
pub mod types;

#[cfg(test)]
mod tests;

pub use buckets::{BucketKind, BucketMap};
pub use cachegrind_out::{LineCounts, SourceLine};
pub use cost::{CostModel, CostRow};
pub use measure::{
    Attribution, DEFAULT_SAMPLE_EVERY, EventSource, Options, PAPER_CACHE, StructureBudget,
};
pub use report::{
    BucketCurve, BucketRow, CurvePoint, EvictionRow, FieldRow, LineRow, LoadRow, MissLineRow,
    Report, SetRow, Structure,
};
pub use symbols::{CodeLine, Module, Symbolizer, Variable};

/// Hash maps keyed by addresses and bucket ids.
type Map<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;
