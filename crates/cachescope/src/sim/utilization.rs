//! [`Touched`] and [`Utilization`]: which bytes of each resident line the program touched
//! (Callgrind's `--cacheuse` idea), kept beside a cache.
//!
//! A line's **used bytes** are the bytes any reference touched while the line was resident
//! (from its fill to the moment it left: evicted, invalidated, or still resident when the
//! trace ends). A reference of `size` bytes at `addr` touches `addr .. addr + size` (one byte
//! when the size is 0), clipped to each line it overlaps, so an access spanning two lines marks
//! bytes in both (in each that is resident). A level's **utilization** is the sum of its
//! fetched lines' used bytes over the sum of their sizes (docs/hardware.md).
//!
//! As with the dirty lines of `dirty.rs`, the bits are kept in a hash map beside the cache
//! rather than in its ways, so the replacement code and its fast paths stay as they are and a
//! simulation that does not ask pays nothing. One bitset of `line size` bits per resident
//! line, in a slab of `u64` words (one word for lines up to 64 bytes).

use crate::access::LineSize;
use crate::memo::{LowBits, Memo};

type Map<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

/// The touched bytes of the lines being tracked (the resident lines of one cache).
#[derive(Clone, Debug)]
pub struct Touched {
    shift: u32,
    /// `u64` words per line.
    words: usize,
    /// Tracked line → its slot in `bits`.
    slots: Map<u64, u32>,
    bits: Vec<u64>,
    free: Vec<u32>,
    /// The slots of recently touched lines, by the line's low bits: most references touch a
    /// line touched a moment ago.
    memo: Box<Memo<u32, LowBits, 256>>,
}

impl Touched {
    /// Nothing tracked yet, for lines of `line_size`.
    pub fn new(line_size: LineSize) -> Touched {
        Touched {
            shift: line_size.shift(),
            words: (line_size.bytes() / 64).max(1) as usize,
            slots: Map::default(),
            bits: Vec::new(),
            free: Vec::new(),
            memo: Box::new(Memo::new()),
        }
    }

    /// The slot of `line` when tracked, through the memo.
    #[inline]
    fn slot(&mut self, line: u64) -> Option<u32> {
        if let Some(slot) = self.memo.get(line) {
            return Some(slot);
        }
        let slot = *self.slots.get(&line)?;
        self.memo.insert(line, slot);
        Some(slot)
    }

    /// The line size in bytes.
    pub fn line_bytes(&self) -> u64 {
        1 << self.shift
    }

    /// Starts tracking `line` with no byte touched (a line tracked already is left as it is).
    #[inline]
    pub fn fill(&mut self, line: u64) {
        if self.slots.contains_key(&line) {
            return;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let s = (self.bits.len() / self.words) as u32;
                self.bits.resize(self.bits.len() + self.words, 0);
                s
            }
        };
        let at = slot as usize * self.words;
        self.bits[at..at + self.words].fill(0);
        self.slots.insert(line, slot);
    }

    /// Stops tracking `line`: its touched byte count, or `None` when it was not tracked.
    #[inline]
    pub fn remove(&mut self, line: u64) -> Option<u64> {
        let slot = self.slots.remove(&line)?;
        self.memo.remove(line);
        self.free.push(slot);
        Some(self.count(slot))
    }

    /// Touched bytes of `line`, when tracked.
    pub fn used(&self, line: u64) -> Option<u64> {
        self.slots.get(&line).map(|&s| self.count(s))
    }

    /// Every tracked line with its touched byte count.
    pub fn lines(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.slots.iter().map(|(&l, &s)| (l, self.count(s)))
    }

    fn count(&self, slot: u32) -> u64 {
        let at = slot as usize * self.words;
        self.bits[at..at + self.words]
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// Marks the bytes of a reference of `size` bytes at `addr` on every tracked line they
    /// fall in.
    #[inline]
    pub fn touch(&mut self, addr: u64, size: u32) {
        self.touch_new(addr, size);
    }

    /// [`Touched::touch`], returning how many of the bytes were not touched before (on the
    /// tracked lines): what the reference adds to their used bytes.
    #[inline]
    pub fn touch_new(&mut self, addr: u64, size: u32) -> u64 {
        let mut new = 0;
        let end = addr.saturating_add(u64::from(size.max(1)));
        let (first, last) = (addr >> self.shift, (end - 1) >> self.shift);
        let bytes = 1u64 << self.shift;
        for line in first..=last {
            let Some(slot) = self.slot(line) else {
                continue;
            };
            let start = line << self.shift;
            let lo = addr.max(start) - start;
            let hi = end.min(start.saturating_add(bytes)) - start;
            let at = slot as usize * self.words;
            new += set_bits(&mut self.bits[at..at + self.words], lo, hi);
        }
        new
    }
}

/// Sets bits `lo..hi` of a bitset stored in words (bit i in word i / 64); returns how many
/// were not set before.
#[inline]
fn set_bits(words: &mut [u64], lo: u64, hi: u64) -> u64 {
    if words.len() == 1 {
        let m = mask(lo, hi);
        let new = u64::from((m & !words[0]).count_ones());
        words[0] |= m;
        return new;
    }
    let (mut i, end, mut new) = (lo, hi, 0);
    while i < end {
        let w = (i / 64) as usize;
        let stop = end.min((i / 64 + 1) * 64);
        let m = mask(i % 64, stop - (i / 64) * 64);
        new += u64::from((m & !words[w]).count_ones());
        words[w] |= m;
        i = stop;
    }
    new
}

/// Bits `lo..hi` of one word (`hi` ≤ 64).
#[inline]
fn mask(lo: u64, hi: u64) -> u64 {
    let n = hi - lo;
    if n >= 64 {
        u64::MAX
    } else {
        ((1u64 << n) - 1) << lo
    }
}

/// A level's utilization: the touched bytes of its resident lines and the totals of the lines
/// that left it.
#[derive(Clone, Debug)]
pub struct Utilization {
    touched: Touched,
    used: u64,
    fetched: u64,
}

impl Utilization {
    /// Nothing fetched yet, for lines of `line_size`.
    pub fn new(line_size: LineSize) -> Utilization {
        Utilization {
            touched: Touched::new(line_size),
            used: 0,
            fetched: 0,
        }
    }

    /// A fill brought `line` in, evicting `evicted` (whose bytes are counted now).
    #[inline]
    pub fn filled(&mut self, line: u64, evicted: Option<u64>) {
        if let Some(v) = evicted {
            self.left(v);
        }
        self.touched.fill(line);
    }

    /// `line` left the cache (evicted or invalidated): its bytes are counted.
    #[inline]
    pub fn left(&mut self, line: u64) {
        if let Some(used) = self.touched.remove(line) {
            self.used += used;
            self.fetched += self.touched.line_bytes();
        }
    }

    /// Marks a reference's bytes (see [`Touched::touch`]).
    #[inline]
    pub fn touch(&mut self, addr: u64, size: u32) {
        self.touched.touch(addr, size);
    }

    /// `(used bytes, fetched bytes)` over every line fetched so far, the resident ones counted
    /// as if they left now.
    pub fn totals(&self) -> (u64, u64) {
        let (mut used, mut fetched) = (self.used, self.fetched);
        for (_, u) in self.touched.lines() {
            used += u;
            fetched += self.touched.line_bytes();
        }
        (used, fetched)
    }
}

/// used / fetched, 0 when nothing was fetched.
pub fn ratio(used: u64, fetched: u64) -> f64 {
    if fetched == 0 {
        0.0
    } else {
        used as f64 / fetched as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(b: u64) -> LineSize {
        LineSize::new(b).unwrap()
    }

    #[test]
    fn touches_clip_to_lines_and_span_two() {
        let mut t = Touched::new(ls(64));
        t.fill(0);
        t.fill(1);
        t.touch(60, 8); // 4 bytes of line 0, 4 of line 1
        t.touch(8, 8);
        t.touch(8, 4); // already marked
        t.touch(200, 8); // line 3: not tracked
        assert_eq!(t.used(0), Some(12));
        assert_eq!(t.used(1), Some(4));
        assert_eq!(t.used(3), None);
        assert_eq!(t.remove(0), Some(12));
        t.fill(0);
        assert_eq!(t.used(0), Some(0), "a refilled line starts untouched");
    }

    #[test]
    fn lines_wider_than_a_word() {
        let mut t = Touched::new(ls(256));
        t.fill(0);
        t.touch(60, 100); // bytes 60..160: across three words
        t.touch(255, 1);
        t.touch(0, 0); // a size of 0 touches one byte
        assert_eq!(t.used(0), Some(102));
        let mut u = Utilization::new(ls(256));
        u.filled(0, None);
        u.touch(0, 256);
        u.filled(1, Some(0));
        assert_eq!(u.totals(), (256, 512));
    }

    proptest::proptest! {
        /// Fills, removals and touches in any order (lines refilled, slots reused, lines
        /// sharing a memo entry) leave every line with the bytes a plain set of bytes per
        /// tracked line says.
        #[test]
        fn touched_bytes_match_a_set_per_line(
            ops in proptest::collection::vec((0u8..3, 0u64..2048, 1u32..40), 1..400),
        ) {
            use std::collections::{BTreeMap, BTreeSet};
            let mut t = Touched::new(ls(64));
            let mut naive: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
            for (op, x, size) in ops {
                // Lines 0, 256, 512, ... share a memo entry.
                let line = (x % 8) * 256 + x / 8 % 4;
                match op {
                    0 => {
                        t.fill(line);
                        naive.entry(line).or_default();
                    }
                    1 => {
                        let want = naive.remove(&line).map(|b| b.len() as u64);
                        proptest::prop_assert_eq!(t.remove(line), want);
                    }
                    _ => {
                        let addr = line * 64 + x % 64;
                        t.touch(addr, size);
                        for b in addr..addr + u64::from(size) {
                            if let Some(bytes) = naive.get_mut(&(b / 64)) {
                                bytes.insert(b);
                            }
                        }
                    }
                }
            }
            for (line, bytes) in &naive {
                proptest::prop_assert_eq!(t.used(*line), Some(bytes.len() as u64));
            }
        }
    }

    #[test]
    fn one_byte_lines() {
        let mut t = Touched::new(ls(1));
        t.fill(5);
        t.fill(6);
        t.touch(4, 4);
        assert_eq!((t.used(5), t.used(6)), (Some(1), Some(1)));
    }
}
