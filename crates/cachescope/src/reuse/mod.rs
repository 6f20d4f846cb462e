//! Exact distance analysis: reuse times, LRU stack distances and exact miss-ratio curves, each in
//! one streaming pass with memory that grows with distinct lines, not with trace length.
//!
//! ## Distances
//! Definitions follow docs/definitions.md. Internally, and in every histogram here:
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
//! Distances go into a [`LogHistogram`]: exact below `2^e`, then 256 bins per power of two
//! (HOTL §4.1), so every binned distance is known to a relative 1/256 (see [`histogram`]).
//! [`Layout::DEFAULT`] has `e` = 16: exact for every cache up to 64 Ki lines (4 MiB of 64-byte
//! lines); `Layout::new(20)` makes every cache up to 64 MiB exact for about 10 % more time.
//!
//! The LRU miss count at `C` lines is `cold + #{sd ≥ C}`. It is exact when `C ≤ 2^e` and when
//! `C` is a bin boundary, which is every `C` with at most 9 significant bits (`C = m·2^k`,
//! `m < 512`): every size of [`sizes_log_range`] (up to 256 per octave) and every common cache
//! size (6 MiB, 30 MiB, 105 MiB…), given as bytes that are multiples of the line size. For other
//! `C` the count is interpolated inside the bin holding `C`; the true count lies between the
//! counts at the bin's two ends, which are within a factor `1 + 1/256` of `C`
//! ([`StackDistances::misses`] returns both bounds).
//!
//! ## Analyses
//! | analysis | result | memory per distinct line |
//! |---|---|---|
//! | [`StackDistanceAnalysis`] | [`StackDistances`] → [`Mrc`] (LRU, every size) | 22–44 bytes (33 at 1 Mi lines) |
//! | [`ReuseTimeAnalysis`] | [`ReuseTimes`] (rt, first and last positions) | 21–43 bytes (32 at 1 Mi lines) |
//! | [`RandomReplacementAnalysis`] | [`Mrc`] (random, one seeded run per size) | per size, 27–45 bytes per line it can hold |
//!
//! plus, per histogram, 4 bytes per bin up to the largest distance seen (at most 256 KiB of exact
//! bins with the default layout, and 1 KiB per octave above).
//!
//! Measured throughput (benches/reuse.rs, one core, 20 M references over 1 Mi lines, a Zipf
//! stream and a uniform one): see the benchmark's documentation.
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
//! let misses: Vec<f64> = mrc.points.iter().map(|p| (p.miss_ratio.unwrap() * 6.0).round()).collect();
//! assert_eq!(misses, [6.0, 5.0, 3.0]); // 3 cold misses, plus the reuses with sd ≥ lines
//! ```

pub mod histogram;
pub mod mrc;
mod random;
mod reuse_time;
mod shards;
mod stack_distance;
pub(crate) mod table;
mod timestamps;

#[cfg(test)]
mod naive;
#[cfg(test)]
mod tests;

pub use histogram::{AtLeast, Bin, Layout, LogHistogram};
pub use mrc::{Mrc, MrcPoint, default_sizes, sizes_log_range};
pub use random::RandomReplacementAnalysis;
pub use reuse_time::{ReuseTime, ReuseTimeAnalysis, ReuseTimes};
pub use shards::{ShardsAnalysis, ShardsDistances};
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
    /// Histogram layout. Default [`Layout::DEFAULT`]: exact below 2^16.
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

/// References are handled in chunks of this many: first every table slot of the chunk is loaded
/// (independent loads, whose cache misses the CPU overlaps), then the chunk is processed with
/// its data in cache. Measured at 1 Mi lines (benches/reuse.rs): 16 is about 8 % slower than
/// 32; 64 and 128 are within noise of 32.
pub(crate) const CHUNK: usize = 32;

/// Calls `f` on the lines of the references `options` counts in `batch`, in order, `CHUNK` at
/// a time (the last chunk may be shorter).
#[inline]
pub(crate) fn for_each_chunk(batch: &Batch, options: &Options, f: impl FnMut(&[u64])) {
    for_each_chunk_of::<CHUNK>(batch, options, f)
}

/// [`for_each_chunk`], `N` lines at a time; from the batch's indexed data references
/// ([`Batch::data_addrs`]) when it has them.
#[inline]
pub(crate) fn for_each_chunk_of<const N: usize>(
    batch: &Batch,
    options: &Options,
    mut f: impl FnMut(&[u64]),
) {
    let shift = options.line_size.shift();
    let all = options.include_instructions;
    let mut chunk = [0u64; N];
    if let (false, Some(data)) = (all, batch.data_addrs()) {
        for part in data.chunks(N) {
            let lines = &mut chunk[..part.len()];
            for (l, &a) in lines.iter_mut().zip(part) {
                *l = a >> shift;
            }
            f(lines);
        }
        return;
    }
    let mut n = 0;
    for (&addr, &kind) in batch.addrs.iter().zip(&batch.kinds) {
        // Write unconditionally, keep only counted references: no branch per reference.
        chunk[n] = addr >> shift;
        n += usize::from(all || kind != AccessKind::Instr);
        if n == N {
            f(&chunk);
            n = 0;
        }
    }
    if n > 0 {
        f(&chunk[..n]);
    }
}

/// The lines of the references in `batch` that `options` counts, in order.
#[inline]
pub(crate) fn data_lines<'a>(
    batch: &'a Batch,
    options: &Options,
) -> impl Iterator<Item = LineAddr> + use<'a> {
    let shift = options.line_size.shift();
    let all = options.include_instructions;
    // The indexed column when there is one, else the batch filtered; one of the two is empty.
    let (data, addrs, kinds): (&[u64], &[u64], &[AccessKind]) = match batch.data_addrs() {
        Some(data) if !all => (data, &[], &[]),
        _ => (&[], &batch.addrs, &batch.kinds),
    };
    data.iter().map(move |&a| LineAddr(a >> shift)).chain(
        addrs
            .iter()
            .zip(kinds)
            .filter(move |&(_, &k)| all || k != AccessKind::Instr)
            .map(move |(&a, _)| LineAddr(a >> shift)),
    )
}
