//! [`LiveSet`]: which timestamps are still some line's most recent reference, and how many of
//! them follow a given one, over a timestamp space that is compacted as the trace streams.
//!
//! Every reference takes the next timestamp `now`. A timestamp is *live* while it is its line's
//! most recent reference, so there is one live timestamp per distinct line and all of them are
//! below `now`. The stack distance of a reuse whose previous reference took timestamp `j` is the
//! number of live timestamps after `j` (Bennett & Kruskal's counting view of Mattson's stack).
//!
//! ## Representation
//! - `words`: one bit per timestamp, set when live (`capacity/8` bytes).
//! - `tree`: a Fenwick tree of `u32` popcounts over the 64-bit words (`capacity/16` bytes),
//!   holding only *completed* words (those below `now/64`); the word `now` falls in is read with
//!   one popcount. A reuse costs a range query over the words between `j` and `now` (the two
//!   descents meet after O(log(now − j)) steps, so recent reuses are cheap), one Fenwick
//!   decrement (O(log(capacity/64)) steps near the hot top of the tree) and two bit flips.
//!   At 1 Mi distinct lines the whole structure is 384 KiB and stays in L2; the per-line hash
//!   map of the caller is the only thing that misses the cache.
//!
//! ## Compaction
//! When `now` reaches the capacity, live timestamps are renumbered `0..live` in order (the new
//! value of `t` is the number of live timestamps below it: a prefix popcount per word) and the
//! tree is rebuilt in O(capacity/64). The capacity then becomes `GROWTH × live` (at least
//! [`MIN_CAPACITY`]), so at least `live` references pass before the next compaction, whose
//! O(live) renumbering is therefore amortised O(1) per reference.

/// Smallest timestamp space, in timestamps: small traces never compact.
pub(super) const MIN_CAPACITY: u64 = 1 << 16;

/// The timestamp space is `GROWTH ×` the live lines after a compaction. Measured on 20 M
/// uniform references over 1 Mi lines (benches/reuse.rs): 2 spends ~8 % of the time compacting,
/// 4 about 3 %, and larger factors gain nothing measurable while the tree leaves L2 sooner.
const GROWTH: u64 = 4;

/// Largest timestamp space: tree counts are `u32`.
const MAX_CAPACITY: u64 = 1 << 32;

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct LiveSet {
    /// Bit `t % 64` of word `t / 64` is set iff timestamp `t` is live.
    words: Vec<u64>,
    /// Fenwick tree, 1-based: `tree[i]` sums the popcounts of completed words
    /// `i − lowbit(i) .. i` (0-based word indices), for `i` in `1..=words.len()`; `tree[0]` is 0
    /// and `levels` dummy slots follow.
    tree: Vec<u32>,
    /// Bits in `words.len()`: the most steps a Fenwick walk takes.
    levels: usize,
    /// The next timestamp.
    now: u64,
    /// Live timestamps (= distinct lines seen).
    live: u64,
    /// Smallest capacity after a compaction (a multiple of 64).
    min_capacity: u64,
    /// Reused by compaction for the per-word ranks.
    scratch: Vec<u32>,
}

impl LiveSet {
    /// An empty set with room for `min_capacity` timestamps (rounded up to a multiple of 64)
    /// before its first compaction.
    pub fn new(min_capacity: u64) -> LiveSet {
        let min_capacity = min_capacity.max(64).next_multiple_of(64);
        let words = (min_capacity / 64) as usize;
        let levels = (usize::BITS - words.leading_zeros()) as usize;
        LiveSet {
            words: vec![0; words],
            tree: vec![0; words + 1 + levels],
            levels,
            now: 0,
            live: 0,
            min_capacity,
            scratch: Vec::new(),
        }
    }

    /// True when every timestamp is taken: call [`LiveSet::compact`] before the next reference.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.now == self.words.len() as u64 * 64
    }

    /// Live timestamps (distinct lines).
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8 + (self.tree.capacity() + self.scratch.capacity()) * 4
    }

    /// Reads what [`LiveSet::reuse`] of `j` will read first (its bit word and first tree node),
    /// to bring them into the cache early. Any `j` is accepted.
    #[inline]
    pub fn touch(&self, j: u64) -> u64 {
        let w = ((j >> 6) as usize).min(self.words.len() - 1);
        self.words[w] ^ u64::from(self.tree[w + 1])
    }

    /// The timestamp the next reference takes.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// A first reference: takes timestamp [`LiveSet::now`].
    #[inline]
    pub fn insert(&mut self) {
        self.live += 1;
        self.take_now();
    }

    /// A reuse of the line whose live timestamp is `j`: takes timestamp [`LiveSet::now`], `j`
    /// stops being live. Returns the stack distance (live timestamps after `j`).
    ///
    /// Branch-free: both tree walks run a fixed number of steps ([`LiveSet::levels`]), since a
    /// mispredicted loop exit costs more than the extra steps.
    #[inline]
    pub fn reuse(&mut self, j: u64) -> u64 {
        let (wj, bj) = ((j >> 6) as usize, j & 63);
        let wn = (self.now >> 6) as usize;
        // Live timestamps before `j`: completed words before `wj` (all of them are), then the
        // bits below `j` in its own word.
        let before = self.prefix(wj) + (self.words[wj] & ((1 << bj) - 1)).count_ones();
        self.words[wj] &= !(1 << bj);
        // `wj`'s word leaves the tree's count only if it is completed (`wj < wn`).
        self.tree_sub(wj, u32::from(wj < wn));
        let sd = self.live - 1 - u64::from(before);
        self.take_now();
        sd
    }

    /// Marks `now` live and advances it; a word that fills up joins the tree.
    #[inline]
    fn take_now(&mut self) {
        let t = self.now;
        let w = (t >> 6) as usize;
        self.words[w] |= 1 << (t & 63);
        self.now = t + 1;
        if self.now & 63 == 0 {
            let ones = self.words[w].count_ones();
            let mut i = w + 1;
            while i <= self.words.len() {
                self.tree[i] += ones;
                i += i & i.wrapping_neg();
            }
        }
    }

    /// Live timestamps in (completed) words `0..w`: the Fenwick descent from `w`, run for
    /// `levels` steps (once at 0 it stays there, and `tree[0]` is 0).
    #[inline]
    fn prefix(&self, w: usize) -> u32 {
        let mut i = w;
        let mut s = 0u32;
        for _ in 0..self.levels {
            s = s.wrapping_add(self.tree[i]);
            i &= i.wrapping_sub(1);
        }
        s
    }

    /// Subtracts `d` (0 or 1) from word `w`'s count: the Fenwick ascent from `w + 1`, run for
    /// `levels` steps; steps past the last node land on a dummy slot of their own.
    #[inline]
    fn tree_sub(&mut self, w: usize, d: u32) {
        let n = self.words.len();
        let mut i = w + 1;
        for step in 0..self.levels {
            let k = if i <= n { i } else { n + 1 + step };
            self.tree[k] = self.tree[k].wrapping_sub(d);
            i += i & i.wrapping_neg();
        }
    }

    /// Renumbers the live timestamps `0..live` in order, rewriting every one of them through
    /// `timestamps` (which must yield each live timestamp exactly once), and resizes the space.
    ///
    /// # Panics
    /// With 2^32 distinct lines or more.
    #[cold]
    pub fn compact<'a>(&mut self, timestamps: impl Iterator<Item = &'a mut u64>) {
        self.scratch.clear();
        let mut below = 0u32;
        for w in &self.words {
            self.scratch.push(below);
            below += w.count_ones();
        }
        debug_assert_eq!(u64::from(below), self.live);
        for t in timestamps {
            let (w, b) = ((*t >> 6) as usize, *t & 63);
            debug_assert!(self.words[w] & (1 << b) != 0, "timestamp {t} is not live");
            *t = u64::from(self.scratch[w] + (self.words[w] & ((1 << b) - 1)).count_ones());
        }
        let live = self.live;
        let capacity = (GROWTH * live)
            .max(self.min_capacity)
            .max(live + 1)
            .next_multiple_of(64)
            .min(MAX_CAPACITY);
        assert!(
            capacity > live,
            "stack distances support fewer than 2^32 distinct lines"
        );
        let words = (capacity / 64) as usize;
        let full = (live / 64) as usize;
        self.words.clear();
        self.words.resize(words, 0);
        self.words[..full].fill(u64::MAX);
        self.words[full] = (1 << (live % 64)) - 1;
        // Completed words are the full ones: build the tree over them in O(words).
        self.levels = (usize::BITS - words.leading_zeros()) as usize;
        self.tree.clear();
        self.tree.resize(words + 1 + self.levels, 0);
        for i in 1..=words {
            if i <= full {
                self.tree[i] += 64;
            }
            let parent = i + (i & i.wrapping_neg());
            if parent <= words {
                self.tree[parent] += self.tree[i];
            }
        }
        self.now = live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Live timestamps after `j`, by scanning the bits.
    fn after(s: &LiveSet, j: u64) -> u64 {
        (j + 1..s.now)
            .filter(|&t| s.words[(t / 64) as usize] & (1 << (t % 64)) != 0)
            .count() as u64
    }

    #[test]
    fn counts_match_a_bit_scan_across_compactions() {
        let mut s = LiveSet::new(64);
        // Line i's live timestamp; lines are reused in a scrambled order.
        let mut ts: Vec<u64> = Vec::new();
        let mut x = 12345u64;
        for step in 0..20_000u64 {
            if s.is_full() {
                s.compact(ts.iter_mut());
                assert_eq!(s.now, ts.len() as u64);
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = ts.len() as u64;
            let t = s.now();
            if n < 100 && (x >> 60) < 4 || n == 0 {
                s.insert();
                ts.push(t);
            } else {
                let line = ((x >> 33) % n.min(1 + step % 150)) as usize;
                let want = after(&s, ts[line]);
                assert_eq!(s.reuse(ts[line]), want, "step {step}");
                ts[line] = t;
            }
        }
        assert_eq!(s.live(), ts.len() as u64);
    }
}
