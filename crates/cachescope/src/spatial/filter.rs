//! [`SpatialFilter`]: the line filter of a sampled stream, at a fixed rate or of a fixed size.

use std::collections::BinaryHeap;

use super::{Limit, LineHash, SpatialOptions};
use crate::error::Result;

/// Decides reference by reference whether a line is sampled (the module documentation's
/// rule). At a fixed rate it keeps no state; of a fixed size it keeps the hashes of the
/// sampled lines (about 40 bytes per line: a set and a max-heap of `u64`).
#[derive(Clone, Debug)]
pub struct SpatialFilter {
    hash: LineHash,
    limit: Limit,
    /// The fixed-size bound, and the sampled lines' hashes (a hash is a line: `mix` is a
    /// bijection).
    bound: Option<Bound>,
}

/// Sampled hashes; foldhash's fixed state keeps the set's order the same from run to run.
type Members = hashbrown::HashSet<u64, foldhash::fast::FixedState>;

/// Slots of [`Bound`]'s memo: 2^12 hashes, 32 KiB.
const MEMO_BITS: u32 = 12;
const MEMO_MASK: u64 = (1 << MEMO_BITS) - 1;

#[derive(Clone, Debug)]
struct Bound {
    max_lines: usize,
    members: Members,
    /// The same hashes, largest on top.
    heap: BinaryHeap<u64>,
    /// Members lately admitted, slot by their low bits: a sampled line's references repeat,
    /// and a hit here skips the set's probe (a cache miss in a set of up to 2^18 lines).
    /// Exact: a slot holds a member or a value whose low bits are not the slot's (empty);
    /// members leave only as the heap's top, which empties its slot.
    memo: Box<[u64]>,
}

/// The empty value of memo slot `i`: its low bits are not `i`'s, so no hash matches it.
fn memo_empty(i: u64) -> u64 {
    !i
}

impl SpatialFilter {
    /// The filter of `options` (validated).
    pub fn new(options: &SpatialOptions) -> Result<SpatialFilter> {
        options.validate()?;
        Ok(SpatialFilter {
            hash: options.hash(),
            limit: Limit::from_rate(options.rate)?,
            bound: options.max_lines.map(|m| Bound {
                max_lines: usize::try_from(m).unwrap_or(usize::MAX),
                members: Members::default(),
                heap: BinaryHeap::new(),
                memo: (0..=MEMO_MASK).map(memo_empty).collect(),
            }),
        })
    }

    /// The hash lines are tested with.
    pub fn hash(&self) -> LineHash {
        self.hash
    }

    /// The limit now (it only falls, and only with a fixed size).
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Lines sampled now under a fixed size (`None` at a fixed rate, which does not count them).
    pub fn sampled_lines(&self) -> Option<usize> {
        self.bound.as_ref().map(|b| b.members.len())
    }

    /// Heap bytes held: the fixed-size sample's set, heap and memo (nothing at a fixed rate).
    pub fn heap_bytes(&self) -> usize {
        self.bound.as_ref().map_or(0, |b| {
            // hashbrown: a u64 and a control byte per bucket, buckets a power of two above
            // 8/7 of the capacity.
            let buckets = (b.members.capacity() * 8 / 7 + 1).next_power_of_two();
            buckets * 9 + b.heap.capacity() * 8 + b.memo.len() * 8
        })
    }

    /// Whether a reference to `line` is kept; counts the line in the sample if it is new.
    #[inline]
    pub fn keep(&mut self, line: u64) -> bool {
        let h = self.hash.of(line);
        self.keep_hashed(h)
    }

    /// [`SpatialFilter::keep`] for a line whose hash is `h`.
    #[inline]
    pub fn keep_hashed(&mut self, h: u64) -> bool {
        if !self.limit.admits(h) {
            return false;
        }
        match &mut self.bound {
            None => true,
            Some(b) => b.admit(h, &mut self.limit),
        }
    }
}

impl Bound {
    /// A line of hash `h` under the limit: kept if sampled, or sampled now, lowering `limit`
    /// when the sample is full (the largest hash leaves, be it `h` or a member's).
    #[inline]
    fn admit(&mut self, h: u64, limit: &mut Limit) -> bool {
        let slot = (h & MEMO_MASK) as usize;
        if self.memo[slot] == h {
            return true;
        }
        self.admit_unmemoised(h, limit, slot)
    }

    /// [`Bound::admit`] past the memo; `slot` is `h`'s, which it fills if `h` is kept.
    fn admit_unmemoised(&mut self, h: u64, limit: &mut Limit, slot: usize) -> bool {
        if self.members.contains(&h) {
            self.memo[slot] = h;
            return true;
        }
        if self.members.len() < self.max_lines {
            self.members.insert(h);
            self.heap.push(h);
            self.memo[slot] = h;
            return true;
        }
        let top = *self
            .heap
            .peek()
            .expect("a full sample of at least one line");
        if h > top {
            // Itself the largest: it leaves at once. `h ≥ 1` since `top < h`.
            *limit = Limit(h - 1);
            return false;
        }
        self.heap.pop();
        self.members.remove(&top);
        let top_slot = top & MEMO_MASK;
        if self.memo[top_slot as usize] == top {
            self.memo[top_slot as usize] = memo_empty(top_slot);
        }
        self.members.insert(h);
        self.heap.push(h);
        self.memo[slot] = h;
        // `top > h ≥ 0`, and the members left are all below `top`.
        *limit = Limit(top - 1);
        true
    }
}
