//! Exact distance analysis: reuse times, LRU stack distances and exact miss-ratio curves, each in
//! one streaming pass with memory that grows with distinct lines, not with trace length.
//!
//! ## Distances
//! Definitions follow `shared/LOCALITY.md`. Internally, and in every histogram here:
//! - reuse time `rt = i − j ≥ 1` ([`ReuseTime`], [`ReuseTimeAnalysis`]);
//! - stack distance `sd ≥ 0`, distinct other lines since the previous reference
//!   ([`StackDistance`], [`StackDistanceAnalysis`]); LRU with `C` lines hits iff `sd < C`.
//!
//! Other conventions are one conversion away: StatCache's reuse distance is
//! [`statcache_distance`]`(rt) = rt − 1`, HOTL's reuse distance is [`hotl_distance`]`(sd) =
//! sd + 1`. A first reference has no distance: it is counted as cold.
//!
//! ## Which references count
//! Data references (loads, stores, modifies), each mapped to the line of its first byte at
//! [`Options::line_size`]; instruction fetches are skipped unless
//! [`Options::include_instructions`] (a unified cache's view).
//!
//! ## Histograms and the error bound
//! Distances go into a [`LogHistogram`]: exact below `2^e` (default `e` = 20, so every cache of up
//! to 1 Mi lines, 64 MiB at 64-byte lines, is exact), then 256 bins per power of two (HOTL
//! §4.1), which places every binned distance within a relative 1/256 (see [`histogram`]).
//! The LRU miss count at `C` lines is `cold + #{sd ≥ C}`: exact for `C ≤ 2^e` and for `C` on a
//! bin boundary (all sizes of [`sizes_log_range`] with up to 256 per octave, for sizes that are
//! multiples of the line size); for other `C` it is interpolated inside one bin, and the true
//! value lies between the miss counts at the bin's two ends, which are within a factor
//! `1 + 1/256` of `C` ([`StackDistances::misses`] returns both bounds).
//!
//! ## Analyses
//! | analysis | result | memory per distinct line |
//! |---|---|---|
//! | [`StackDistanceAnalysis`] | [`StackDistances`] → [`Mrc`] (LRU, every size) | 20–39 bytes |
//! | [`ReuseTimeAnalysis`] | [`ReuseTimes`] (rt, first and last positions) | 19–38 bytes |
//! | [`RandomReplacementAnalysis`] | [`Mrc`] (random, one seeded run per size) | per size: ~30–50 bytes per cached line |
//!
//! plus 8 bytes per exact histogram bin up to the largest distance seen.
//!
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::reuse::{Options, StackDistanceAnalysis};
//! use cachescope::{Access, Batch};
//!
//! // Lines a b a c b a (64-byte lines): stack distances -, -, 1, -, 2, 2.
//! let batch: Batch = [0, 64, 0, 128, 64, 0].map(|a| Access::load(a, 8)).into_iter().collect();
//! let mut sd = StackDistanceAnalysis::new(Options::default());
//! sd.observe(&batch);
//! let mrc = sd.finish().mrc(&[64, 128, 192]);
//! let misses: Vec<f64> = mrc.points.iter().map(|p| (p.miss_ratio * 6.0).round()).collect();
//! assert_eq!(misses, [6.0, 5.0, 3.0]); // 3 cold misses, plus the reuses with sd ≥ lines
//! ```

pub mod histogram;
pub mod mrc;
mod random;
mod reuse_time;
mod stack_distance;
mod table;
mod timestamps;

#[cfg(test)]
mod naive;
#[cfg(test)]
mod tests;

pub use histogram::{AtLeast, Bin, Layout, LogHistogram};
pub use mrc::{Mrc, MrcPoint, default_sizes, sizes_log_range};
pub use random::RandomReplacementAnalysis;
pub use reuse_time::{ReuseTime, ReuseTimeAnalysis, ReuseTimes};
pub use stack_distance::{StackDistance, StackDistanceAnalysis, StackDistances};

use crate::access::{AccessKind, LineAddr, LineSize};
use crate::batch::Batch;

/// What the distance analyses count, and how they bin it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Line size references are mapped to (line of the first byte). Default 64 bytes.
    pub line_size: LineSize,
    /// Count instruction fetches too (a unified cache). Default false: data references only.
    pub include_instructions: bool,
    /// Histogram layout. Default [`Layout::DEFAULT`]: exact below 2^20.
    pub layout: Layout,
}

/// StatCache's reuse distance (references in between) of a reuse with reuse time `rt ≥ 1`.
#[inline]
pub fn statcache_distance(rt: u64) -> u64 {
    rt - 1
}

/// HOTL's reuse distance (`rd = sd + 1`, counting the datum itself) of a stack distance.
#[inline]
pub fn hotl_distance(sd: u64) -> u64 {
    sd + 1
}

/// References are handled in chunks of this many: first every line of the chunk is looked up in
/// the caller's map (independent lookups, whose cache misses the CPU overlaps), then the chunk is
/// processed with its map entries in cache, then its distances are recorded (independent
/// histogram increments, overlapped again). Measured on the uniform 1 Mi-line benchmark: 8 is
/// too few to hide the latency, 16–64 are within noise of each other; 32 it is.
const CHUNK: usize = 32;

/// Calls `f` on the lines of the references `options` counts in `batch`, in order, `CHUNK` at
/// a time (the last chunk may be shorter). `f` may overwrite the slice, e.g. with distances.
#[inline]
fn for_each_chunk(batch: &Batch, options: &Options, mut f: impl FnMut(&mut [u64])) {
    let shift = options.line_size.shift();
    let all = options.include_instructions;
    let mut chunk = [0u64; CHUNK];
    let mut n = 0;
    for (&addr, &kind) in batch.addrs.iter().zip(&batch.kinds) {
        // Write unconditionally, keep only counted references: no branch per reference.
        chunk[n] = addr >> shift;
        n += usize::from(all || kind != AccessKind::Instr);
        if n == CHUNK {
            f(&mut chunk);
            n = 0;
        }
    }
    if n > 0 {
        f(&mut chunk[..n]);
    }
}

/// The lines of the references in `batch` that `options` counts, in order.
#[inline]
fn data_lines<'a>(batch: &'a Batch, options: &Options) -> impl Iterator<Item = LineAddr> + 'a {
    let shift = options.line_size.shift();
    let all = options.include_instructions;
    batch
        .addrs
        .iter()
        .zip(&batch.kinds)
        .filter(move |&(_, &k)| all || k != AccessKind::Instr)
        .map(move |(&a, _)| LineAddr(a >> shift))
}
