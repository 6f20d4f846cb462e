//! [`Options`]: what an [`Attribution`](super::Attribution) measures, and the paper's
//! defaults.

use std::path::PathBuf;

use crate::attribution::cost::CostModel;
use crate::sim::Geometry;

/// The paper's cache: 64 KiB, 4-way, 32-byte lines.
pub const PAPER_CACHE: &str = "64K,4,32";

/// The paper's default sampling rate: 1 in 25000 misses.
pub const DEFAULT_SAMPLE_EVERY: u64 = 25_000;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// The simulated cache (LRU). Default: [`PAPER_CACHE`].
    pub geometry: Geometry,
    /// The monitor samples 1 in this many misses on average. Default: 25000.
    pub sample_every: u64,
    /// Seed of the sampling intervals.
    pub seed: u64,
    /// The monitor cost model; `None` skips the perturbed simulations.
    pub cost: Option<CostModel>,
    /// Compute the per-bucket miss-ratio curves. Default: on.
    pub mrc: bool,
    /// The program, for traces without a memory map: loaded at its link addresses (right for
    /// a non-PIE executable).
    pub exe: Option<PathBuf>,
    /// Count fetches, data references, misses and samples per instruction, for the
    /// Cachegrind-format output
    /// ([`Report::source_lines`](crate::attribution::report::Report::source_lines),
    /// [`crate::attribution::cachegrind_out`]). Default: off.
    pub per_instruction: bool,
    /// Track the bytes of each fetched line touched while resident: `used_bytes`,
    /// `fetched_bytes` and `utilization` per bucket, code line and load (a hash lookup per
    /// reference, through a memo, and two more per miss: 10-30 % more time than without).
    /// Default: off.
    pub utilization: bool,
    /// Track dirty lines (write-allocate) and count write-backs by bucket. Default: off.
    pub writebacks: bool,
    /// The stride summary of each load instruction ([`Report::loads`](crate::attribution::report::Report::loads)). Default: on.
    pub loads: bool,
    /// Count references, misses and used bytes per field of each structure
    /// ([`Report::structures`](crate::attribution::report::Report::structures), `attribute
    /// --fields`; needs `utilization` for the used bytes). Default: off.
    pub fields: bool,
    /// Count each bucket's lines that a store's miss fetched and that left unread (written,
    /// not read back before eviction: `advise`'s non-temporal evidence). Default: off.
    pub unread_writes: bool,
    /// Classify misses as cold, capacity or conflict and count each bucket's conflict misses
    /// by set (`advise`'s padding evidence). Default: off.
    pub conflicts: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            geometry: Geometry::parse(PAPER_CACHE).expect("the paper's cache is valid"),
            sample_every: DEFAULT_SAMPLE_EVERY,
            seed: 1,
            cost: Some(CostModel::default()),
            mrc: true,
            exe: None,
            per_instruction: false,
            utilization: false,
            writebacks: false,
            loads: true,
            fields: false,
            unread_writes: false,
            conflicts: false,
        }
    }
}
