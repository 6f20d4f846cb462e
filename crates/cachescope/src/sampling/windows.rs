//! [`Windows`]: the exact stack distance of a short reuse, for the reuse samples of a sampler
//! that reads the full stream (the sampled report on a trace: docs/sampled.md, "Reuse windows
//! measured").
//!
//! StatStack estimates a reuse's stack distance from its reuse time, and at a sharp
//! working-set cliff that estimate is biased (it places the cliff early); the reuse samples'
//! exact distances read the LRU curve within about 0.1 pp where StatStack's err by up to 10
//! (docs/accuracy/sampled.md, "What remains"). A ring of [`RING`] bits marks each of the last
//! references that is still its line's latest: the distinct lines referenced strictly between
//! positions `j` and `i` are then the marked references between them, one popcount a word.
//! A table from line to its latest position clears a mark when the line comes back; entries
//! older than the ring are ignored, and purged once the table grows past four rings' worth, so
//! the memory is bounded whatever the footprint.

use foldhash::fast::FixedState;
use hashbrown::HashMap;

/// References the ring covers: reuses of at most this many references are measured. 64 Ki
/// measured as well as the whole sample on the nine programs of docs/accuracy/sampled.md
/// (0.049 pp against 0.038 for every reuse measured and 0.053 at 16 Ki).
pub const RING: u64 = 1 << 16;

/// The ring of latest references and the table of latest positions; see the
/// [module documentation](self).
#[derive(Clone, Debug)]
pub struct Windows {
    /// `bits[p % ring]` for position `p`: set while `p` is its line's latest reference.
    bits: Vec<u64>,
    ring: u64,
    /// Line → its latest position (stale once a ring old).
    latest: HashMap<u64, u64, FixedState>,
}

impl Default for Windows {
    fn default() -> Self {
        Windows::with_ring(RING)
    }
}

impl Windows {
    /// A ring of `ring` references (a power of two, at least 64).
    pub fn with_ring(ring: u64) -> Windows {
        assert!(ring.is_power_of_two() && ring >= 64, "ring {ring}");
        Windows {
            bits: vec![0; (ring / 64) as usize],
            ring,
            latest: HashMap::with_hasher(FixedState::default()),
        }
    }

    /// The reference at `pos` (positions consecutive from 1) touches `line`.
    #[inline]
    pub fn access(&mut self, line: u64, pos: u64) {
        if let Some(p) = self.latest.insert(line, pos)
            && pos - p < self.ring
        {
            let s = (p % self.ring) as usize;
            self.bits[s / 64] &= !(1 << (s % 64));
        }
        let s = (pos % self.ring) as usize;
        self.bits[s / 64] |= 1 << (s % 64);
        if self.latest.len() as u64 > 4 * self.ring {
            let ring = self.ring;
            self.latest.retain(|_, p| pos - *p < ring);
        }
    }

    /// The distinct lines referenced strictly between positions `j` and `i`, asked before the
    /// reference at `i` is passed to [`Windows::access`]: `None` when the window is longer
    /// than the ring.
    pub fn distinct_between(&self, j: u64, i: u64) -> Option<u64> {
        if i <= j || i - j > self.ring {
            return None;
        }
        Some(self.marked((j + 1) % self.ring, i - j - 1))
    }

    /// Marked slots among the `len` from slot `from`, wrapping around the ring.
    fn marked(&self, from: u64, len: u64) -> u64 {
        let first = len.min(self.ring - from);
        self.marked_within(from, first) + self.marked_within(0, len - first)
    }

    /// Marked slots in `from..from + len`, within the ring.
    fn marked_within(&self, from: u64, len: u64) -> u64 {
        let (mut s, end) = (from, from + len);
        let mut n = 0u64;
        while s < end {
            let (w, b) = ((s / 64) as usize, s % 64);
            let take = (64 - b).min(end - s);
            let mask = if take == 64 {
                u64::MAX
            } else {
                ((1u64 << take) - 1) << b
            };
            n += u64::from((self.bits[w] & mask).count_ones());
            s += take;
        }
        n
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.latest.capacity() * 17
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// At every reuse, the count equals the distinct lines between its two references
        /// counted by brute force; `None` past the ring.
        #[test]
        fn counts_the_distinct_lines_between_a_reuse(
            lines in proptest::collection::vec(0u64..40, 1..1500),
            ring_log in 6u32..9,
        ) {
            let ring = 1u64 << ring_log;
            let mut w = Windows::with_ring(ring);
            let mut last: std::collections::HashMap<u64, u64> = Default::default();
            for (k, &l) in lines.iter().enumerate() {
                let i = k as u64 + 1;
                if let Some(&j) = last.get(&l) {
                    let between: std::collections::HashSet<u64> =
                        lines[j as usize..(i - 1) as usize].iter().copied().collect();
                    let want = (i - j <= ring).then_some(between.len() as u64);
                    prop_assert_eq!(w.distinct_between(j, i), want, "j {} i {}", j, i);
                }
                w.access(l, i);
                last.insert(l, i);
            }
        }
    }

    proptest! {
        /// A sampler with windows at rate 1 measures every reuse within the ring, each at its
        /// brute-force stack distance.
        #[test]
        fn the_sampler_measures_every_short_reuse(
            lines in proptest::collection::vec(0u64..50, 1..2000),
        ) {
            use crate::analysis::Analysis;
            use crate::sampling::{Sampler, SamplerOptions};
            let batch: crate::Batch =
                lines.iter().map(|&l| crate::Access::load(l * 64, 4)).collect();
            let options = SamplerOptions { rate: 1.0, ..SamplerOptions::default() };
            let mut s = Sampler::new(options).unwrap().with_windows();
            s.observe(&batch);
            let p = s.finish();
            for x in p.samples() {
                let Some(d) = x.distance() else { continue };
                let (j, i) = (x.position, x.position + d + 1);
                let between: std::collections::HashSet<u64> =
                    lines[j as usize..(i - 1) as usize].iter().copied().collect();
                prop_assert_eq!(p.measured_distance(j), Some(between.len() as u64));
            }
        }
    }

    #[test]
    fn the_table_stays_bounded_on_a_stream_of_new_lines() {
        let mut w = Windows::with_ring(64);
        for i in 1..=10_000u64 {
            w.access(i, i);
        }
        assert!(w.latest.len() <= 4 * 64 + 1, "{}", w.latest.len());
        // The last 64 references are each their line's latest.
        assert_eq!(w.distinct_between(10_001 - 64, 10_001), Some(63));
        assert_eq!(w.distinct_between(10_001 - 65, 10_001), None);
    }
}
