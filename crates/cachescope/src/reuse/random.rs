//! [`RandomReplacementAnalysis`]: fully-associative random-replacement caches of several sizes,
//! simulated side by side in the same pass.
//!
//! Random replacement has no stack property, so no single histogram gives its miss ratio at
//! every size: each requested size gets its own cache (a `Vec` of resident lines and a map line →
//! slot). A miss in a full cache evicts a uniformly chosen slot. The result is **one seeded
//! realisation** of the random process, not its expectation (StatCache models the expectation):
//! a different seed gives a slightly different curve, and a curve need not fall monotonically
//! with size. The cache of `L` lines draws victims from its own [`Pcg64`] whose state comes from
//! the seed through SplitMix64 and whose stream is `L`, using only `next_u64` (and Lemire's
//! multiply-shift for the range), so a seed gives the same curve on every platform and `rand`
//! version.
//!
//! Cost: one hash lookup per reference per size, and per size a map entry and a slot for each
//! resident line (about 30–50 bytes per line of capacity, up to the number of distinct lines).

use hashbrown::hash_map::Entry;
use hashbrown::{HashMap, HashSet};
use rand::Rng;
use rand_pcg::Pcg64;

use super::mrc::{Mrc, MrcPoint};
use super::{Options, data_lines};
use crate::analysis::Analysis;
use crate::batch::Batch;

type Hasher = foldhash::fast::RandomState;

/// One fully-associative random-replacement cache.
#[derive(Clone, Debug)]
struct RandomCache {
    size_bytes: u64,
    lines: u64,
    /// Resident lines; a victim is a random index.
    slots: Vec<u64>,
    /// Resident line → its index in `slots`.
    slot_of: HashMap<u64, usize, Hasher>,
    rng: Pcg64,
    misses: u64,
}

impl RandomCache {
    #[inline]
    fn access(&mut self, line: u64) {
        if self.lines == 0 {
            self.misses += 1;
            return;
        }
        let Entry::Vacant(e) = self.slot_of.entry(line) else {
            return;
        };
        self.misses += 1;
        if (self.slots.len() as u64) < self.lines {
            e.insert(self.slots.len());
            self.slots.push(line);
        } else {
            let victim = below(&mut self.rng, self.lines) as usize;
            e.insert(victim);
            let old = std::mem::replace(&mut self.slots[victim], line);
            self.slot_of.remove(&old);
        }
    }
}

/// SplitMix64's output function, to spread a small seed over the PCG state.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in `0..n` (n ≥ 1) by Lemire's multiply-shift (bias below n/2^64).
#[inline]
fn below(rng: &mut Pcg64, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// Simulates one random-replacement cache per requested size; see the module documentation.
#[derive(Clone, Debug)]
pub struct RandomReplacementAnalysis {
    options: Options,
    seen: HashSet<u64, Hasher>,
    refs: u64,
    caches: Vec<RandomCache>,
    /// The current batch's lines, so each cache runs through them with its map hot.
    lines: Vec<u64>,
}

impl RandomReplacementAnalysis {
    /// Caches of `sizes_bytes` (each holds `size / line_size` lines, rounded down), victims
    /// drawn from generators seeded with `seed`. The layout in `options` is not used.
    pub fn new(options: Options, sizes_bytes: &[u64], seed: u64) -> RandomReplacementAnalysis {
        let state = (u128::from(splitmix64(seed)) << 64) | u128::from(splitmix64(!seed));
        let caches = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / options.line_size.bytes();
                RandomCache {
                    size_bytes,
                    lines,
                    slots: Vec::new(),
                    slot_of: HashMap::default(),
                    rng: Pcg64::new(state, u128::from(lines)),
                    misses: 0,
                }
            })
            .collect();
        RandomReplacementAnalysis {
            options,
            seen: HashSet::default(),
            refs: 0,
            caches,
            lines: Vec::new(),
        }
    }

    /// The curve so far: method `exact`, policy `random`, one point per size in the order given.
    pub fn finish(&self) -> Mrc {
        let refs = self.refs.max(1) as f64;
        let cold = self.seen.len() as u64;
        Mrc {
            method: "exact".into(),
            policy: "random".into(),
            line_size: self.options.line_size.bytes(),
            points: self
                .caches
                .iter()
                .map(|c| MrcPoint {
                    size_bytes: c.size_bytes,
                    lines: c.lines,
                    miss_ratio: c.misses as f64 / refs,
                    miss_ratio_warm: (c.misses - cold) as f64 / refs,
                })
                .collect(),
        }
    }
}

impl Analysis for RandomReplacementAnalysis {
    fn observe(&mut self, batch: &Batch) {
        self.lines.clear();
        self.lines
            .extend(data_lines(batch, &self.options).map(|l| l.0));
        self.refs += self.lines.len() as u64;
        self.seen.extend(self.lines.iter().copied());
        for c in &mut self.caches {
            for &line in &self.lines {
                c.access(line);
            }
        }
    }
}
