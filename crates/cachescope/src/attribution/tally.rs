//! Counts kept on every miss (exact) or on every sampled miss (the monitor's view): misses by
//! bucket, by (bucket, instruction), evictions by (victim, evictor) bucket pair, and by
//! (victim, evictor, instruction).

use super::Map;

/// Miss and eviction counts by raw bucket id and instruction address.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    /// Misses by the missing reference's bucket.
    pub misses: Vec<u64>,
    /// Misses by (instruction address, the missing reference's bucket).
    pub by_pc: Map<(u64, u32), u64>,
    /// Evictions by (victim bucket, evictor bucket).
    pub evictions: Map<(u32, u32), u64>,
    /// Evictions by (victim bucket, evictor bucket, instruction address of the miss).
    pub lines: Map<(u32, u32, u64), u64>,
    /// All misses counted.
    pub total: u64,
}

impl Tally {
    /// One miss of `bucket` at instruction `pc`, which evicted a line filled for `victim`.
    #[inline]
    pub fn record(&mut self, bucket: u32, victim: Option<u32>, pc: u64) {
        let b = bucket as usize;
        if b >= self.misses.len() {
            self.misses.resize(b + 1, 0);
        }
        self.misses[b] += 1;
        self.total += 1;
        *self.by_pc.entry((pc, bucket)).or_default() += 1;
        if let Some(v) = victim {
            *self.evictions.entry((v, bucket)).or_default() += 1;
            *self.lines.entry((v, bucket, pc)).or_default() += 1;
        }
    }
}
