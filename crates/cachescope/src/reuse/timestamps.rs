//! [`LiveSet`]: which timestamps are still some line's most recent reference, and how many of
//! them precede a given one, over a timestamp space that is compacted as the trace streams.
//!
//! Every reference takes the next timestamp `now`. A timestamp is *live* while it is its line's
//! most recent reference, so there is one live timestamp per distinct line and all of them are
//! below `now`. The stack distance of a reuse whose previous reference took timestamp `j` is the
//! number of live timestamps after `j` (Bennett & Kruskal's counting view of Mattson's stack):
//! `live − 1 − before(j)`.
//!
//! ## Representation
//! - `words`: one bit per timestamp, set when live.
//! - A 16-ary tree of prefix counts over the words. Level 0 has an entry per word, level `k` an
//!   entry per `16^k` words; entries form groups of 16, and each entry holds the live timestamps
//!   in the entries before it in its group. So `before(j)` is one entry per level plus a
//!   popcount of `j`'s word below `j` (4 levels at a million lines), and removing `j` subtracts
//!   1 from the entries after `j`'s in its group at every level: 16 lanes plus a mask read from
//!   a constant window (`AFTER32`), which compiles to a few SIMD loads, adds and stores. The
//!   window replaced a mask computed as `(lane − i) >> 31`: 11 % fewer instructions per
//!   reference, uniform stream 22.7 → 24.5 M references/s (benches/reuse.rs).
//! - Entries past `now` are not maintained: an entry is set when `now` enters it, from its left
//!   neighbour (`start_word`); masked subtractions may scribble on them before that.
//!
//! A Fenwick tree over the words does the same in O(log) dependent steps each way (17 at a
//! million lines) and ends each walk with a mispredicted branch; benches/reuse.rs measured the
//! 16-ary layout 20–25 % faster at a million lines. Per distinct line, with `GROWTH` = 4
//! timestamps per live line: 0.5 bytes of bits, 0.14 of counts, 0.25 of compaction scratch.
//!
//! ## Compaction
//! When `now` reaches the capacity, live timestamps are renumbered `0..live` in order (the new
//! value of `t` is the number of live timestamps below it: a prefix popcount per word) and the
//! counts are rebuilt in O(capacity/64). The capacity then becomes `GROWTH × live` (at least
//! [`MIN_CAPACITY`]), so at least `live` references pass before the next compaction, whose
//! O(live) renumbering is therefore amortised O(1) per reference.

/// Smallest timestamp space, in timestamps: small traces never compact.
pub(super) const MIN_CAPACITY: u64 = 1 << 16;

/// The timestamp space is `GROWTH ×` the live lines after a compaction. Measured at 1 Mi lines
/// (benches/reuse.rs, zipf): 2 is about 10 % slower than 4 (it compacts three times as often),
/// 8 is no faster than 4 and takes twice the memory.
const GROWTH: u64 = 4;

/// Largest timestamp space: counts are `u32`.
const MAX_CAPACITY: u64 = 1 << 32;

/// Entries per group, and its log2.
const FAN: usize = 16;
const FAN_BITS: u32 = 4;

/// Masks of the lanes after a given lane, as windows: lanes `i > lane` of a group get `−1` from
/// `AFTER[15 − lane + i]` (16 zeros, then 16 all-ones words). One load per 4 lanes, where
/// computing `(lane − i) >> 31` took three instructions.
const AFTER32: [u32; 2 * FAN] = {
    let mut a = [0; 2 * FAN];
    let mut i = FAN;
    while i < 2 * FAN {
        a[i] = u32::MAX;
        i += 1;
    }
    a
};
const AFTER16: [u16; 2 * FAN] = {
    let mut a = [0; 2 * FAN];
    let mut i = FAN;
    while i < 2 * FAN {
        a[i] = u16::MAX;
        i += 1;
    }
    a
};

/// The mask of the lanes after `lane` (`lane < 16`).
#[inline]
fn after<T>(window: &[T; 2 * FAN], lane: usize) -> &[T; FAN] {
    window[FAN - 1 - (lane & (FAN - 1))..]
        .first_chunk()
        .expect("window holds 32 lanes")
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct LiveSet {
    /// Bit `t % 64` of word `t / 64` is set iff timestamp `t` is live.
    words: Vec<u64>,
    /// Level 0: `level0[w / 16][w % 16]` holds the live timestamps in the words before `w` in
    /// its group of 16 words (at most 15·64, so `u16`).
    level0: Vec<[u16; FAN]>,
    /// Levels 1…: `upper[k − 1][e / 16][e % 16]` holds the live timestamps in the entries before
    /// entry `e` in its group, where entry `e` of level `k` covers words `e·16^k .. (e+1)·16^k`.
    /// The last level is a single group.
    upper: Vec<Vec<[u32; FAN]>>,
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
        let mut s = LiveSet {
            words: Vec::new(),
            level0: Vec::new(),
            upper: Vec::new(),
            now: 0,
            live: 0,
            min_capacity,
            scratch: Vec::new(),
        };
        s.rebuild(min_capacity);
        s
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
        let upper: usize = self.upper.iter().map(|l| l.capacity() * FAN * 4).sum();
        self.words.capacity() * 8
            + self.level0.capacity() * FAN * 2
            + upper
            + self.scratch.capacity() * 4
    }

    /// Reads what [`LiveSet::reuse`] of `j` will read first (its bit word and level-0 entry),
    /// to bring them into the cache early. Any `j` is accepted.
    #[inline]
    pub fn touch(&self, j: u64) -> u64 {
        let w = ((j >> 6) as usize).min(self.words.len() - 1);
        self.words[w] ^ u64::from(self.level0[w >> FAN_BITS][w & (FAN - 1)])
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
    #[inline]
    pub fn reuse(&mut self, j: u64) -> u64 {
        let before = self.kill(j);
        self.take_now();
        self.live - 1 - u64::from(before)
    }

    /// Makes the live timestamp `j` dead without a new reference: its line leaves the stack
    /// (a line dropped from a sample, `super::shards`).
    pub fn remove(&mut self, j: u64) {
        self.kill(j);
        self.live -= 1;
    }

    /// Clears live timestamp `j`'s bit and counts; returns the live timestamps before it.
    #[inline]
    fn kill(&mut self, j: u64) -> u32 {
        let (w, b) = ((j >> 6) as usize, j & 63);
        let mut before = (self.words[w] & ((1 << b) - 1)).count_ones();
        self.words[w] &= !(1 << b);
        // Lanes after `lane` get −1 (wrapping), the others 0: a few SIMD adds.
        let group = &mut self.level0[w >> FAN_BITS];
        let lane = w & (FAN - 1);
        before += u32::from(group[lane]);
        for (x, m) in group.iter_mut().zip(after(&AFTER16, lane)) {
            *x = x.wrapping_add(*m);
        }
        let mut e = w >> FAN_BITS;
        for level in &mut self.upper {
            let group = &mut level[e >> FAN_BITS];
            let lane = e & (FAN - 1);
            before += group[lane];
            for (x, m) in group.iter_mut().zip(after(&AFTER32, lane)) {
                *x = x.wrapping_add(*m);
            }
            e >>= FAN_BITS;
        }
        before
    }

    /// Marks `now` live and advances it, starting the next word when this one is full.
    #[inline]
    fn take_now(&mut self) {
        let t = self.now;
        self.words[(t >> 6) as usize] |= 1 << (t & 63);
        self.now = t + 1;
        if self.now & 63 == 0 && !self.is_full() {
            self.start_word((self.now >> 6) as usize);
        }
    }

    /// Sets the entries that start at word `w ≥ 1` from their left neighbours: at each level,
    /// a new entry in the middle of a group holds its neighbour's prefix plus the neighbour's
    /// count; a new entry at the start of a group holds 0, and then the group that just ended
    /// is a finished entry one level up.
    fn start_word(&mut self, w: usize) {
        let mut count = self.words[w - 1].count_ones();
        let previous = self.level0[(w - 1) >> FAN_BITS][(w - 1) & (FAN - 1)];
        let entry = &mut self.level0[w >> FAN_BITS][w & (FAN - 1)];
        if w & (FAN - 1) != 0 {
            *entry = previous + count as u16;
            return;
        }
        *entry = 0;
        count += u32::from(previous);
        let mut e = w >> FAN_BITS;
        for level in &mut self.upper {
            let previous = level[(e - 1) >> FAN_BITS][(e - 1) & (FAN - 1)];
            let entry = &mut level[e >> FAN_BITS][e & (FAN - 1)];
            if e & (FAN - 1) != 0 {
                *entry = previous + count;
                return;
            }
            *entry = 0;
            count += previous;
            e >>= FAN_BITS;
        }
    }

    /// Empties the structure for `capacity` timestamps, then makes `0..live` live.
    fn rebuild(&mut self, capacity: u64) {
        let words = (capacity / 64) as usize;
        let live = self.live;
        let full = (live / 64) as usize;
        self.words.clear();
        self.words.resize(words, 0);
        self.words[..full].fill(u64::MAX);
        self.words[full] = (1 << (live % 64)) - 1;
        let mut groups = words.div_ceil(FAN);
        self.level0.clear();
        self.level0.resize(groups, [0; FAN]);
        let mut k = 0;
        while groups > 1 {
            groups = groups.div_ceil(FAN);
            if k == self.upper.len() {
                self.upper.push(Vec::new());
            }
            self.upper[k].clear();
            self.upper[k].resize(groups, [0; FAN]);
            k += 1;
        }
        self.upper.truncate(k);
        self.now = live;
        for w in 1..=full.min(words - 1) {
            self.start_word(w);
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
        self.rebuild(capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Live timestamps after `j`, by counting bits (none is set at or after `now`).
    fn after(s: &LiveSet, j: u64) -> u64 {
        let (w, b) = ((j / 64) as usize, j % 64);
        let rest: u32 = s.words[w + 1..].iter().map(|x| x.count_ones()).sum();
        u64::from(((s.words[w] >> b) >> 1).count_ones() + rest)
    }

    /// `steps` references to up to `lines` lines, hot and cold, from a 64-timestamp space that
    /// compacts and grows: every distance is checked against a bit count.
    /// Returns the number of levels at the end.
    fn check(lines: u64, steps: u64) -> usize {
        let mut s = LiveSet::new(64);
        let mut ts: Vec<u64> = Vec::new(); // line → its live timestamp
        let mut x = 12345u64;
        for step in 0..steps {
            if s.is_full() {
                s.compact(ts.iter_mut());
                assert_eq!(s.now, ts.len() as u64);
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = ts.len() as u64;
            let t = s.now();
            if n == 0 || n < lines && (x >> 60) < 4 {
                s.insert();
                ts.push(t);
            } else {
                let line = ((x >> 33) % if x >> 63 == 0 { n } else { n.min(8) }) as usize;
                let want = after(&s, ts[line]);
                assert_eq!(s.reuse(ts[line]), want, "step {step}");
                ts[line] = t;
            }
        }
        assert_eq!(s.live(), ts.len() as u64);
        1 + s.upper.len()
    }

    #[test]
    fn counts_match_a_bit_count_across_compactions() {
        assert_eq!(check(100, 20_000), 1);
        assert_eq!(check(6000, 60_000), 3);
    }

    /// Lines inserted, reused and removed at random across compactions: every distance is a
    /// bit count of the live timestamps after the line's.
    #[test]
    fn removals_keep_the_counts() {
        let mut s = LiveSet::new(64);
        let mut ts: Vec<u64> = Vec::new();
        let mut x = 99u64;
        for step in 0..40_000u64 {
            if s.is_full() {
                s.compact(ts.iter_mut());
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = ts.len();
            let line = ((x >> 33) % n.max(1) as u64) as usize;
            match (x >> 60) % 4 {
                _ if n == 0 => {
                    ts.push(s.now());
                    s.insert();
                }
                0 if n < 3000 => {
                    ts.push(s.now());
                    s.insert();
                }
                1 => {
                    s.remove(ts.swap_remove(line));
                }
                _ => {
                    let want = after(&s, ts[line]);
                    let t = s.now();
                    assert_eq!(s.reuse(ts[line]), want, "step {step}");
                    ts[line] = t;
                }
            }
            assert_eq!(s.live(), ts.len() as u64);
        }
    }
}
