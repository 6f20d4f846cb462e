//! What a report measures ([`CollectOptions`]) and the fixed choices behind its sections: the
//! cache sizes measured in advance, the L2 section's caches, the phase timeline's phases.

use crate::LineSize;
use crate::models::l2::Variant;

/// What the report measures. [`CollectOptions::default`] documents every default.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectOptions {
    /// Line size. Default 64 bytes.
    pub line_size: LineSize,
    /// Seed of random replacement, sampling and phase clustering. Default 1.
    pub seed: u64,
    /// StatCache sampling rate. Default 1e-3: about a thousand samples per million
    /// references, enough for smooth curves from the short traces a report is often made of.
    pub sample_rate: f64,
    /// Phase interval (instructions when the trace has instruction fetches, data references
    /// otherwise). Default `phases`' own, [`crate::phases::DEFAULT_INTERVAL`]; fewer than 4
    /// intervals leave the phase section out.
    pub phase_interval: u64,
    /// Ways of the caches simulated for the 3C breakdown. Default 8.
    pub ways: u32,
    /// A sampled report's call-graph section, from the stream's call events (`report
    /// --sampled --sampled-calls`). Default: off (it costs; docs/callgraph.md); the report
    /// says how to get it when the trace has call events.
    pub sampled_calls: bool,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            line_size: LineSize::default(),
            seed: 1,
            sample_rate: 1e-3,
            phase_interval: crate::phases::DEFAULT_INTERVAL,
            ways: 8,
            sampled_calls: false,
        }
    }
}

/// Smallest and largest cache size measured in advance (random replacement, 3C); the curves
/// are cut at twice the trace's footprint afterwards.
pub(super) const MIN_BYTES: u64 = 1 << 10;
pub(super) const MAX_BYTES: u64 = 1 << 30;
/// Intervals needed before phases mean anything.
pub(super) const MIN_INTERVALS: usize = 4;
/// The L2 section's L1 and L2 sizes: `cachescope l2`'s defaults.
const L1_BYTES: u64 = 32 << 10;
pub(super) const L2_BYTES: [u64; 5] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20];
/// The L2 model's readings shown: the paper's and the most accurate corrected one.
pub(super) const L2_VARIANTS: [Variant; 2] = [Variant::Paper, Variant::FootprintResident];
/// Buckets shown in the attribution table and the evicted-by heatmap.
pub(super) const ATTRIBUTION_TOP: usize = 10;

/// L1 lines of the L2 section (at least one).
pub(super) fn l1_lines(line: u64) -> u64 {
    (L1_BYTES / line).max(1)
}

/// 3C cache sizes: every second octave from the smallest cache with one set of `ways` lines
/// (at least 4 KiB) to 1 GiB.
pub(super) fn three_c_sizes(line: u64, ways: u32) -> Vec<u64> {
    let mut size = (line * u64::from(ways)).max(4 << 10).next_power_of_two();
    let mut out = Vec::new();
    while size <= MAX_BYTES {
        out.push(size);
        size *= 4;
    }
    out
}

/// Curves stop at twice the footprint of `bytes_touched`: beyond it every method is flat at
/// the cold ratio.
pub(super) fn max_bytes(bytes_touched: u64, line: u64) -> u64 {
    (2 * bytes_touched)
        .next_power_of_two()
        .clamp(4 * MIN_BYTES.max(line), MAX_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_c_sizes_start_at_one_set() {
        assert_eq!(three_c_sizes(64, 8)[..3], [4096, 16384, 65536]);
        assert_eq!(three_c_sizes(1024, 8)[0], 8192);
    }

    #[test]
    fn curves_stop_at_twice_the_footprint() {
        assert_eq!(max_bytes(3000, 64), 8192);
        assert_eq!(max_bytes(10, 64), 4096);
        assert_eq!(max_bytes(1 << 40, 64), MAX_BYTES);
    }
}
