//! [`LineTable`]: a map from line to one `u64` (a timestamp or a position) that only grows.
//!
//! The distance analyses look up every reference in a table with one entry per distinct line;
//! with a million lines, that lookup is the cache miss that bounds throughput. A general map
//! (hashbrown) keeps control bytes apart from entries, so a lookup touches two cache lines. Lines
//! are never removed one by one, so a plain open-addressing table with linear probing suffices:
//! key and value sit side by side, 4 entries per cache line, and a lookup usually touches one line.
//! [`LineTable::retain`] removes many at once by rebuilding the table (the sampled analyses
//! forgetting the lines a fixed-size sample dropped, amortized over the table's doubling).
//!
//! Slots are 16 bytes; the table doubles when 3/4 full, so it takes 21 to 43 bytes per line.
//! `u64::MAX` marks an empty slot; the one line that could equal it (byte address `u64::MAX`
//! with 1-byte lines) is kept in a field of its own. In place of hashbrown + foldhash, it took
//! reuse-time analysis from 18 to 22 M references/s on the uniform 1 Mi-line benchmark.

/// Key of an empty slot.
const EMPTY: u64 = u64::MAX;

/// Smallest number of slots.
const MIN_SLOTS: usize = 64;

/// `n` empty slots. A table past a few MiB is backed by transparent huge pages where the
/// kernel offers them on request (`madvise` mode, Debian's default): its lookups land all over
/// it, and with 4 KiB pages nearly every one also misses the TLB.
fn empty_slots(n: usize) -> Vec<[u64; 2]> {
    let mut v: Vec<[u64; 2]> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    if n * 16 >= 4 << 20 {
        advise_huge_pages(v.as_mut_ptr().cast(), n * 16);
    }
    v.resize(n, [EMPTY, 0]);
    v
}

/// Asks for huge pages over the (untouched) allocation at `ptr`; a hint, failure is harmless.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    // madvise wants a page-aligned start: advise the whole pages inside the allocation.
    let page = 4096;
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + len) & !(page - 1);
    if end > start {
        // SAFETY: the range lies inside an allocation this process owns and has not touched;
        // MADV_HUGEPAGE changes how it is backed, never its contents or validity.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct LineTable {
    /// `[line, value]`, `line == EMPTY` when free. The length is a power of two.
    slots: Vec<[u64; 2]>,
    /// `64 − log2(slots.len())`: the hash's top bits pick the home slot.
    shift: u32,
    /// Lines held in `slots`.
    len: usize,
    /// The value of line `u64::MAX`, if present.
    max_line: Option<u64>,
}

impl Drop for LineTable {
    fn drop(&mut self) {
        crate::budget::release(self.heap_bytes());
    }
}

impl Clone for LineTable {
    fn clone(&self) -> Self {
        crate::budget::force(0, self.heap_bytes());
        LineTable {
            slots: self.slots.clone(),
            shift: self.shift,
            len: self.len,
            max_line: self.max_line,
        }
    }
}

impl Default for LineTable {
    fn default() -> Self {
        crate::budget::force(0, MIN_SLOTS * 16);
        LineTable {
            slots: vec![[EMPTY, 0]; MIN_SLOTS],
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
            max_line: None,
        }
    }
}

/// Home slot of `line` in a table of `64 − shift` bits: the top bits of a folded 128-bit
/// multiply (foldhash's mixing step), which depend on every bit of the line, so dense, strided
/// and scattered lines all spread out.
#[inline]
fn home(line: u64, shift: u32) -> usize {
    let p = u128::from(line) * 0x9e37_79b9_7f4a_7c15;
    ((p as u64 ^ (p >> 64) as u64) >> shift) as usize
}

impl LineTable {
    /// An empty table with room for `lines` lines before it grows (a decoder that knows how
    /// many lines are coming skips the doublings). Charged to the budget like a growth.
    pub fn with_lines(lines: usize) -> LineTable {
        let n = (lines.saturating_mul(4) / 3 + 1)
            .max(MIN_SLOTS)
            .checked_next_power_of_two()
            .unwrap_or(1 << 62);
        if !crate::budget::grow(0, n * 16) {
            crate::budget::force(0, n * 16);
        }
        LineTable {
            slots: empty_slots(n),
            shift: 64 - n.trailing_zeros(),
            len: 0,
            max_line: None,
        }
    }

    /// Lines held.
    pub fn len(&self) -> usize {
        self.len + usize::from(self.max_line.is_some())
    }

    /// The value of `line`, if present.
    pub fn get(&self, line: u64) -> Option<u64> {
        if line == EMPTY {
            return self.max_line;
        }
        let mask = self.slots.len() - 1;
        let mut i = home(line, self.shift);
        loop {
            let [k, v] = self.slots[i];
            if k == line {
                return Some(v);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The value in `line`'s home slot, whatever line holds it: one load and no branch, to bring
    /// the slot into the cache ahead of [`LineTable::replace`] (usually it is `line`'s value).
    #[inline]
    pub fn touch(&self, line: u64) -> u64 {
        self.slots[home(line, self.shift)][1]
    }

    /// Asks the CPU to start loading `line`'s home slot (a prefetch hint: unlike a load, it
    /// never holds up the instructions after it while the slot comes from memory).
    #[inline]
    pub fn prefetch(&self, line: u64) {
        crate::prefetch::prefetch(&self.slots[home(line, self.shift)]);
    }

    /// Sets the value of `line` to `value`; returns the value it had, `None` if it was absent.
    #[inline]
    pub fn replace(&mut self, line: u64, value: u64) -> Option<u64> {
        if line == EMPTY {
            return self.max_line.replace(value);
        }
        self.find_or_insert(line, value)
            .map(|i| std::mem::replace(&mut self.slots[i][1], value))
    }

    /// The value of `line`; if absent, inserts it with `value` and returns `None` (one probe
    /// sequence where [`LineTable::get`] then [`LineTable::replace`] would walk it twice).
    #[inline]
    pub fn get_or_insert(&mut self, line: u64, value: u64) -> Option<u64> {
        if line == EMPTY {
            let old = self.max_line;
            self.max_line.get_or_insert(value);
            return old;
        }
        self.find_or_insert(line, value).map(|i| self.slots[i][1])
    }

    /// The slot holding `line` (not [`EMPTY`]), or `None` after inserting it with `value`.
    #[inline]
    fn find_or_insert(&mut self, line: u64, value: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = home(line, self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot[0] == line {
                return Some(i);
            }
            if slot[0] == EMPTY {
                *slot = [line, value];
                self.len += 1;
                if self.len * 4 > self.slots.len() * 3 {
                    self.grow_within_budget();
                }
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the slots if the memory budget allows; past the budget the table fills to 7/8
    /// (the run stops at the next batch, see [`crate::budget`]) and doubles only beyond that.
    #[cold]
    fn grow_within_budget(&mut self) {
        let bytes = self.heap_bytes();
        if crate::budget::grow(bytes, bytes * 2) {
            self.grow();
        } else if self.len * 8 > self.slots.len() * 7 {
            crate::budget::force(bytes, bytes * 2);
            self.grow();
        }
    }

    /// Doubles the slots and re-inserts every line.
    fn grow(&mut self) {
        let doubled = empty_slots(self.slots.len() * 2);
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for [k, v] in old {
            if k != EMPTY {
                let mut i = home(k, self.shift);
                while self.slots[i][0] != EMPTY {
                    i = (i + 1) & mask;
                }
                self.slots[i] = [k, v];
            }
        }
    }

    /// Keeps only the lines for which `keep(line, value)` holds, in a table rebuilt at the
    /// size they need (the memory of the lines removed is given back).
    pub fn retain(&mut self, mut keep: impl FnMut(u64, u64) -> bool) {
        // `keep` called once per line (it may count what it drops): the lines dropped are
        // emptied in place first, so the rebuild needs no list of the kept ones beside the two
        // tables (the probe chains this breaks are never walked again).
        let mut kept = 0;
        for slot in &mut self.slots {
            if slot[0] != EMPTY {
                if keep(slot[0], slot[1]) {
                    kept += 1;
                } else {
                    slot[0] = EMPTY;
                }
            }
        }
        let max_line = self.max_line.filter(|&v| keep(EMPTY, v));
        let mut table = LineTable::with_lines(kept);
        for &[l, v] in self.slots.iter().filter(|s| s[0] != EMPTY) {
            table.replace(l, v);
        }
        table.max_line = max_line;
        *self = table;
    }

    /// Every `(line, value)`, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let held = self
            .slots
            .iter()
            .filter(|s| s[0] != EMPTY)
            .map(|s| (s[0], s[1]));
        held.chain(self.max_line.map(|v| (EMPTY, v)))
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        let held = self.slots.iter().filter(|s| s[0] != EMPTY).map(|s| s[1]);
        held.chain(self.max_line)
    }

    /// Every value, mutably, in no particular order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut u64> + '_ {
        let held = self
            .slots
            .iter_mut()
            .filter(|s| s[0] != EMPTY)
            .map(|s| &mut s[1]);
        held.chain(self.max_line.as_mut())
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn behaves_like_a_map() {
        let mut t = LineTable::default();
        let mut m = HashMap::new();
        let mut x = 1u64;
        for i in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Dense, strided, random and extreme lines.
            let line = match i % 4 {
                0 => i % 3000,
                1 => (i % 2000) << 20,
                2 => x >> 40,
                _ => [u64::MAX, u64::MAX - 1, 0][(x >> 62) as usize % 3],
            };
            if i % 7 == 3 {
                let expect = m.get(&line).copied();
                m.entry(line).or_insert(i);
                assert_eq!(t.get_or_insert(line, i), expect, "line {line}");
            } else {
                assert_eq!(t.replace(line, i), m.insert(line, i), "line {line}");
            }
            assert_eq!(t.get(x >> 44), m.get(&(x >> 44)).copied());
        }
        assert_eq!(t.len(), m.len());
        let mut a: Vec<u64> = t.values().collect();
        let mut b: Vec<u64> = m.values().copied().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
        t.values_mut().for_each(|v| *v += 1);
        assert_eq!(t.get(u64::MAX), m.get(&u64::MAX).map(|v| v + 1));
        // Retaining keeps exactly the lines kept, with their values, and still maps.
        t.retain(|l, _| l % 3 != 0);
        m.retain(|l, _| l % 3 != 0);
        assert_eq!(t.len(), m.len());
        for (&l, &v) in &m {
            assert_eq!(t.get(l), Some(v + 1));
        }
        assert_eq!(t.get(0), None);
        assert_eq!(t.replace(3, 7), None);
    }

    #[test]
    fn a_presized_table_holds_its_lines_without_growing() {
        let mut t = LineTable::with_lines(1000);
        let bytes = t.heap_bytes();
        assert_eq!(bytes, 2048 * 16);
        for i in 0..1000u64 {
            assert_eq!(t.replace(i * 7919, i), None);
        }
        assert_eq!(t.heap_bytes(), bytes);
        assert_eq!(t.get(7919 * 999), Some(999));
        assert_eq!(LineTable::with_lines(0).heap_bytes(), MIN_SLOTS * 16);
    }

    #[test]
    fn huge_page_backed_tables_hold_every_line() {
        // 400 K lines grow the table to 512 Ki slots (8 MiB), past the huge-page threshold.
        let mut t = LineTable::default();
        for i in 0..400_000u64 {
            assert_eq!(t.replace(i * 977, i), None);
        }
        assert!(t.heap_bytes() >= 8 << 20);
        for i in 0..400_000u64 {
            assert_eq!(t.get(i * 977), Some(i));
        }
        assert_eq!(t.get(977 * 400_000), None);
    }
}
