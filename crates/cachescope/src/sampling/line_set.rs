//! [`LineSet`]: the set a reuse window's count fills ([`super::Windows`]).

/// An empty slot; a window's line of this value is noted apart ([`LineSet::count`]).
const EMPTY: u64 = u64::MAX;

/// Slots of the first table a count fills, at most: 32 KiB, the CPU's nearest cache.
const FIRST: usize = 4096;

/// An open-addressed set of lines (linear probing, a power of two of slots, at most half
/// full), grown in place: a full table's lines move to one twice as large and the count goes
/// on, where the table stamped per count before it counted the window again at each doubling
/// (gzip's cliff lies near 1,245 distinct lines, so its long windows passed the first table's
/// 2,048). Slots of 8 bytes, emptied by the count that filled them, where the stamped ones
/// took 16: the first table fits the CPU's nearest cache.
#[derive(Clone, Debug)]
pub(super) struct LineSet {
    /// `EMPTY` or a line; only the first `size` are in use during a count.
    slots: Vec<u64>,
    /// The slots a count filled, in order, to empty them after it (no sweep of the whole
    /// table); one place more, written by a line found.
    filled: Vec<u32>,
    /// The lines moved when the table grows.
    moved: Vec<u64>,
    /// Slots of a count's first table, at most ([`FIRST`]; fewer in tests, to grow).
    first: usize,
}

impl LineSet {
    /// A set for at most `max` distinct lines (`2 · max` slots).
    pub fn new(max: usize) -> LineSet {
        LineSet {
            slots: vec![EMPTY; (2 * max).next_power_of_two()],
            filled: vec![0; max + 1],
            moved: Vec::new(),
            first: FIRST,
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 8 + self.filled.capacity() * 4 + self.moved.capacity() * 8
    }

    /// The distinct lines of `parts` (in order: a run of one line probes once), at most half
    /// the set's slots.
    pub fn count(&mut self, parts: [&[u64]; 2]) -> u64 {
        let len = parts[0].len() + parts[1].len();
        debug_assert!(2 * len <= self.slots.len());
        let LineSet {
            slots,
            filled,
            moved,
            first,
        } = self;
        // Never grown for a window of at most half its slots' references.
        let mut size = (2 * len).next_power_of_two().min(*first);
        let mut table = &mut slots[..size];
        // Locals, not fields: kept in registers through the loop. `last` starts unlike the
        // first line, so that one is never taken for a run.
        let start = parts.iter().find_map(|p| p.first()).map_or(0, |&l| !l);
        let (mut n, mut last, mut saw_empty) = (0, start, false);
        for part in parts {
            for &line in part {
                if line == last {
                    continue;
                }
                last = line;
                // `EMPTY` marks a free slot, so that line is noted apart, not inserted.
                if line == EMPTY {
                    saw_empty = true;
                    continue;
                }
                n = insert(table, filled, n, line);
                if n > size / 2 {
                    size *= 2;
                    table = &mut slots[..size];
                    n = grow(table, filled, n, moved);
                }
            }
        }
        for &s in &filled[..n] {
            slots[s as usize] = EMPTY;
        }
        n as u64 + u64::from(saw_empty)
    }
}

/// Inserts `line` in `table` (a power of two of slots, not full), whose slots `filled[..n]`
/// are filled: the filled count after. Found or free, the slot is written and the count grows
/// by whether it was free, with no branch on which (a window's lines are found and new in
/// turn, unpredictably).
#[inline(always)]
fn insert(table: &mut [u64], filled: &mut [u32], n: usize, line: u64) -> usize {
    let mask = table.len() - 1;
    let mut s = (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
    loop {
        let held = table[s];
        // Found or free, in one test: the lesser of the two is zero.
        if (held ^ line).min(!held) == 0 {
            table[s] = line;
            filled[n] = s as u32;
            return n + usize::from(held == EMPTY);
        }
        s = (s + 1) & mask;
    }
}

/// Moves the `n` lines of the slots `filled[..n]` into `table`, through `moved`: the filled
/// count after (`n`).
#[cold]
fn grow(table: &mut [u64], filled: &mut [u32], n: usize, moved: &mut Vec<u64>) -> usize {
    moved.clear();
    for &s in &filled[..n] {
        moved.push(std::mem::replace(&mut table[s as usize], EMPTY));
    }
    moved
        .iter()
        .fold(0, |k, &line| insert(table, filled, k, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Each count equals the distinct lines counted by brute force, in two parts split
        /// anywhere, with the first table small enough to grow (4 to 512 slots), and with
        /// the line that marks a free slot among them; the set is empty after each count.
        #[test]
        fn counts_the_distinct_lines_of_two_parts(
            windows in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![0u64..80, Just(EMPTY), Just(0), any::<u64>()],
                    0..400,
                ),
                1..6,
            ),
            split in any::<proptest::sample::Index>(),
            first_log in 2u32..10,
        ) {
            let mut set = LineSet::new(400);
            set.first = 1 << first_log;
            for w in &windows {
                let k = split.index(w.len() + 1);
                let want = w.iter().collect::<std::collections::HashSet<_>>().len() as u64;
                prop_assert_eq!(set.count([&w[..k], &w[k..]]), want);
                prop_assert!(set.slots.iter().all(|&s| s == EMPTY));
            }
        }
    }
}
