//! Activity vectors (Settle et al. 2004, as used by Zwick et al. §2.2): the number of data
//! accesses to each *super-set*, a group of `sets / G` consecutive L2 sets, per interval:
//!
//! `v_g = #{ a in the interval : ⌊set(a) · G / sets⌋ = g }`, `g = 0 … G − 1`,
//!
//! every access counted (not distinct lines: that is the difference from setvectors). §5.1
//! clusters both the vector and its Euclidean magnitude `|v|`.

use crate::phases::merge;
use crate::sim::Geometry;

/// Builds one activity vector per interval.
#[derive(Clone, Debug)]
pub struct ActivityVectors {
    shift: u32,
    set_mask: u64,
    /// Right shift from a set index to its super-set.
    group_shift: u32,
    counts: Vec<u64>,
    vectors: Vec<u32>,
}

impl ActivityVectors {
    /// Activity vectors over `supersets` super-sets of `l2` (a power of two; capped at the
    /// number of sets).
    pub fn new(l2: Geometry, supersets: u64) -> ActivityVectors {
        debug_assert!(supersets.is_power_of_two());
        let g = supersets.min(l2.sets());
        ActivityVectors {
            shift: l2.line_size().shift(),
            set_mask: l2.sets() - 1,
            group_shift: l2.sets().trailing_zeros() - g.trailing_zeros(),
            counts: vec![0; g as usize],
            vectors: Vec::new(),
        }
    }

    /// Adds the data references at byte addresses `addrs` to the current interval.
    #[inline]
    pub fn push(&mut self, addrs: &[u64]) {
        for &a in addrs {
            let set = (a >> self.shift) & self.set_mask;
            self.counts[(set >> self.group_shift) as usize] += 1;
        }
    }

    /// Ends the current interval: stores its vector (counts saturate at `u32::MAX`).
    pub fn end_interval(&mut self) {
        self.vectors.extend(
            self.counts
                .iter()
                .map(|&c| c.min(u64::from(u32::MAX)) as u32),
        );
        self.counts.fill(0);
    }

    /// Super-sets (elements per vector).
    pub fn supersets(&self) -> usize {
        self.counts.len()
    }

    /// The vector of finished interval `i`.
    pub fn vector(&self, i: usize) -> Option<&[u32]> {
        let n = self.counts.len();
        self.vectors.get(i * n..(i + 1) * n)
    }

    /// Every finished vector, interval after interval.
    pub fn vectors(&self) -> &[u32] {
        &self.vectors
    }

    /// Merges finished intervals in pairs, each into their mean ([`crate::phases::merge`]).
    pub(crate) fn merge_pairs(&mut self, from: usize, pairs: usize) {
        let w = self.counts.len();
        merge::merge_pairs(&mut self.vectors, w, from, pairs, merge::mean_u32);
    }
}
