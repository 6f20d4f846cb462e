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
//! Until a cache of `L` lines first has to evict, it holds every line seen so far and misses
//! exactly on first references; so it is only built, from the first `L` distinct lines in order
//! of first reference, when line `L + 1` arrives, with the same contents and the same victims as
//! if it had been simulated from the start. Caches larger than the trace's footprint cost nothing.
//!
//! Lines are numbered in order of first reference (one table per analysis), and each line
//! number has one word of residence bits, bit `c` set while cache `c` of its group of 64 holds
//! it: a reference costs one table lookup and one word test per 64 sizes, whatever the number
//! of caches, and only the caches that miss do more (a random draw, a slot write and two bit
//! flips). Before, each cache had its own bitset and ran over the batch's line numbers on its
//! own, a bit test per reference per size: about a third slower on the report's gzip trace
//! (docs/report.md, Speed). Memory per built cache: 8 bytes per line of capacity;
//! shared: 8 bytes per distinct line per 64 sizes, and the table of lines seen (21–43 bytes
//! per line).

use rand_pcg::Pcg64;

use crate::rng::below;

use super::mrc::{Mrc, MrcPoint};
use super::table::LineTable;
use super::{Options, data_lines};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::prefetch::prefetch;

/// One fully-associative random-replacement cache, over line numbers (order of first reference).
#[derive(Clone, Debug)]
struct RandomCache {
    size_bytes: u64,
    lines: u64,
    /// False while the cache has never had to evict (it holds every line seen so far and has
    /// missed on every first reference, which [`RandomReplacementAnalysis::finish`] counts).
    built: bool,
    /// Resident line numbers; a victim is a random index.
    slots: Vec<u64>,
    rng: Pcg64,
    /// Once the cache is full, the slots of its next `DRAWN` victims, drawn ahead in the
    /// order the misses would draw them (the same victims): a slot is prefetched when drawn
    /// and its line's residence word two misses before it is evicted, so that a miss no longer
    /// waits on two cache misses in a row (its slot, then that word) on a large footprint.
    ahead: [usize; DRAWN],
    /// Misses since the cache was built (all of them when built from the start).
    misses: u64,
}

impl RandomCache {
    /// A miss of line number `id`: takes a free slot or evicts a random one. Returns the line
    /// number evicted.
    #[inline]
    fn miss(&mut self, id: u64) -> Option<u64> {
        self.misses += 1;
        if (self.slots.len() as u64) < self.lines {
            self.slots.push(id);
            if self.slots.len() as u64 == self.lines {
                self.draw_ahead();
            }
            None
        } else {
            let victim = self.ahead[0];
            self.ahead.rotate_left(1);
            self.ahead[DRAWN - 1] = below(&mut self.rng, self.lines) as usize;
            Some(std::mem::replace(&mut self.slots[victim], id))
        }
    }

    /// Draws the first victims once the cache is full.
    fn draw_ahead(&mut self) {
        for a in &mut self.ahead {
            *a = below(&mut self.rng, self.lines) as usize;
        }
    }

    /// After a miss, prefetches the slot just drawn and the residence word of the line two
    /// misses from eviction (its slot was prefetched misses ago).
    #[inline]
    fn prefetch_ahead(&self, resident: &[u64]) {
        prefetch(&self.slots[self.ahead[DRAWN - 1]]);
        prefetch(&resident[self.slots[self.ahead[1]] as usize]);
    }
}

/// Victims drawn ahead per cache.
const DRAWN: usize = 4;

/// Up to 64 caches and, per line number, which of them hold it.
#[derive(Clone, Debug)]
struct Group {
    caches: Vec<RandomCache>,
    /// Bit `c` set when cache `c` is built (cache 0 lines: built, and never holds a line).
    built: u64,
    /// Per line number, bit `c` set while cache `c` holds it.
    resident: Vec<u64>,
    /// Whether the residence words are too many to stay in the CPU's caches (more than
    /// [`FAR`]): only then are the lines and slots ahead prefetched, which on a small
    /// footprint costs more than it saves (a fifth more time on the gzip trace).
    far: bool,
}

/// Line numbers past which a group's residence words (8 bytes each, 2 MiB) are taken to miss
/// the CPU's caches.
#[cfg(not(test))]
const FAR: usize = 1 << 18;
/// Small for the tests, whose traces then run both ways.
#[cfg(test)]
const FAR: usize = 64;

impl Group {
    /// Builds cache `c`: it holds lines `0..n` (the first `n` distinct lines, in order),
    /// having missed on each.
    fn build(&mut self, c: usize, n: u64) {
        let cache = &mut self.caches[c];
        cache.slots = (0..n).collect();
        cache.misses = n;
        cache.built = true;
        if n > 0 && n == cache.lines {
            cache.draw_ahead();
        }
        self.built |= 1 << c;
        let bit = 1u64 << c;
        for r in &mut self.resident[..n as usize] {
            *r |= bit;
        }
    }

    /// Prefetches line number `id`'s residence word, if the line has one yet.
    #[inline]
    fn prefetch(&self, id: u32) {
        if let Some(r) = self.resident.get(id as usize) {
            prefetch(r);
        }
    }

    /// References line number `id`: every built cache that does not hold it misses.
    #[inline]
    fn access(&mut self, id: u64) {
        let mut missing = self.built & !self.resident[id as usize];
        while missing != 0 {
            let c = missing.trailing_zeros() as usize;
            missing &= missing - 1;
            let cache = &mut self.caches[c];
            if cache.lines == 0 {
                cache.misses += 1;
                continue;
            }
            if let Some(old) = cache.miss(id) {
                self.resident[old as usize] &= !(1 << c);
                if self.far {
                    cache.prefetch_ahead(&self.resident);
                }
            }
            self.resident[id as usize] |= 1 << c;
        }
    }
}

/// How many references ahead [`RandomReplacementAnalysis::observe_numbered`] prefetches a
/// line's residence word.
const AHEAD: usize = 16;

/// Simulates one random-replacement cache per requested size; see the module documentation.
#[derive(Clone, Debug)]
pub struct RandomReplacementAnalysis {
    options: Options,
    /// Line → its number, in order of first reference.
    seen: LineTable,
    /// Distinct lines so far (the next line number).
    distinct: u64,
    refs: u64,
    /// The caches in the order given, by 64.
    groups: Vec<Group>,
    /// (lines, group, cache) of the caches not built yet, most lines first: the last one is
    /// the next to build.
    unbuilt: Vec<(u64, usize, usize)>,
}

impl RandomReplacementAnalysis {
    /// References counted so far.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Caches of `sizes_bytes` (each holds `size / line_size` lines, rounded down), victims
    /// drawn from generators seeded with `seed`. The layout in `options` is not used.
    pub fn new(options: Options, sizes_bytes: &[u64], seed: u64) -> RandomReplacementAnalysis {
        let groups: Vec<Group> = sizes_bytes
            .chunks(64)
            .map(|sizes| Group {
                caches: sizes
                    .iter()
                    .map(|&size_bytes| {
                        let lines = size_bytes / options.line_size.bytes();
                        RandomCache {
                            size_bytes,
                            lines,
                            built: false,
                            slots: Vec::new(),
                            rng: crate::rng::seeded_complement(seed, u128::from(lines)),
                            ahead: [0; DRAWN],
                            misses: 0,
                        }
                    })
                    .collect(),
                built: 0,
                resident: Vec::new(),
                far: false,
            })
            .collect();
        let mut unbuilt: Vec<(u64, usize, usize)> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, group)| {
                group
                    .caches
                    .iter()
                    .enumerate()
                    .map(move |(c, k)| (k.lines, g, c))
            })
            .collect();
        unbuilt.sort_unstable_by(|a, b| b.cmp(a));
        RandomReplacementAnalysis {
            options,
            seen: LineTable::default(),
            distinct: 0,
            refs: 0,
            groups,
            unbuilt,
        }
    }

    /// Builds every cache from the start instead of when it first evicts (for tests).
    #[cfg(test)]
    fn build_all(&mut self) {
        for (_, g, c) in std::mem::take(&mut self.unbuilt) {
            self.groups[g].build(c, 0);
        }
    }

    /// The curve so far: method `exact`, policy `random`, one point per size in the order given.
    pub fn finish(&self) -> Mrc {
        let refs = self.refs.max(1) as f64;
        let cold = self.distinct;
        Mrc {
            method: "exact".into(),
            policy: "random".into(),
            line_size: self.options.line_size.bytes(),
            points: self
                .groups
                .iter()
                .flat_map(|g| &g.caches)
                .map(|c| {
                    // A cache never built missed exactly on the first references.
                    let misses = if c.built { c.misses } else { cold };
                    MrcPoint {
                        size_bytes: c.size_bytes,
                        lines: c.lines,
                        miss_ratio: Some(misses as f64 / refs),
                        miss_ratio_warm: (misses - cold) as f64 / refs,
                    }
                })
                .collect(),
        }
    }

    /// A first reference: numbers the line, and builds the caches that now have to evict
    /// (those holding as many lines as were seen before it: it finds them full).
    #[cold]
    fn first_reference(&mut self, line: u64) -> u64 {
        self.seen.replace(line, self.distinct);
        self.new_number()
    }

    /// Takes the next references as line numbers given in order of first reference (a number
    /// never seen is the next one), as [`crate::opt::SpilledIds`] holds them: the same misses
    /// as [`Analysis::observe`] on the references they number, without looking lines up.
    pub fn observe_numbered(&mut self, ids: &[u32]) {
        let far = self.groups.iter().any(|g| g.far);
        for (i, &id) in ids.iter().enumerate() {
            // The ids are known ahead: their residence words are asked for `AHEAD` early.
            if far && let Some(&next) = ids.get(i + AHEAD) {
                for g in &self.groups {
                    g.prefetch(next);
                }
            }
            self.refs += 1;
            let id = match u64::from(id) {
                id if id == self.distinct => self.new_number(),
                id => id,
            };
            for g in &mut self.groups {
                g.access(id);
            }
        }
    }

    /// The next line number, and the caches it makes evict built (see `first_reference`).
    #[cold]
    fn new_number(&mut self) -> u64 {
        let id = self.distinct;
        self.distinct += 1;
        for g in &mut self.groups {
            g.resident.push(0);
            g.far = g.resident.len() > FAR;
        }
        while let Some(&(lines, g, c)) = self.unbuilt.last() {
            if lines != id {
                break;
            }
            self.unbuilt.pop();
            self.groups[g].build(c, lines);
        }
        id
    }
}

impl Analysis for RandomReplacementAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for line in data_lines(batch, &self.options) {
            self.refs += 1;
            let id = match self.seen.get(line.0) {
                Some(id) => id,
                None => self.first_reference(line.0),
            };
            for g in &mut self.groups {
                g.access(id);
            }
        }
    }
}

#[cfg(test)]
mod tests;
