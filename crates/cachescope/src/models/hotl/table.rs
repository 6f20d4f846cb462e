//! [`PositionTable`]: line → position of its latest reference, for the footprint pass.
//!
//! The same design as the exact analyses' table (`reuse/table.rs`, private to that module):
//! open addressing with linear probing, key and value side by side in a 16-byte slot, lines
//! never removed, so a lookup usually touches one cache line. Two differences, both measured
//! Slots are 16 bytes and the table doubles when 3/4 full: 21–43 bytes per line. Doubling at
//! half full (shorter probe runs) and at 7/8 (a denser table) measured within noise of 3/4
//! on the footprint pass; the caller loads a whole chunk's home slots before using them
//! ([`PositionTable::touch`]), so their cache misses overlap.
//!
//! `u64::MAX` marks an empty slot; the one line that could equal it (byte address `u64::MAX`
//! with 1-byte lines) is kept in a field of its own.

/// Key of an empty slot.
const EMPTY: u64 = u64::MAX;

/// Smallest number of slots.
const MIN_SLOTS: usize = 64;

/// See the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct PositionTable {
    /// `[line, position]`, `line == EMPTY` when free. The length is a power of two.
    slots: Vec<[u64; 2]>,
    /// `64 − log2(slots.len())`: the hash's top bits pick the home slot.
    shift: u32,
    /// Lines held in `slots`.
    len: usize,
    /// The position of line `u64::MAX`, if present.
    max_line: Option<u64>,
}

impl Default for PositionTable {
    fn default() -> Self {
        PositionTable {
            slots: vec![[EMPTY, 0]; MIN_SLOTS],
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
            max_line: None,
        }
    }
}

/// Home slot of `line` in a table of `64 − shift` bits: the top bits of a folded 128-bit
/// multiply, which depend on every bit of the line (dense, strided and scattered lines alike).
#[inline]
fn home(line: u64, shift: u32) -> usize {
    let p = u128::from(line) * 0x9e37_79b9_7f4a_7c15;
    ((p as u64 ^ (p >> 64) as u64) >> shift) as usize
}

impl PositionTable {
    /// Lines held.
    pub fn len(&self) -> usize {
        self.len + usize::from(self.max_line.is_some())
    }

    /// Loads `line`'s home slot (one load, no branch) so a later [`PositionTable::replace`]
    /// finds it in the cache; returns its value so the load is not optimised away.
    #[inline]
    pub fn touch(&self, line: u64) -> u64 {
        self.slots[home(line, self.shift)][1]
    }

    /// Sets `line`'s position to `pos`; returns the previous one, `None` for a new line.
    #[inline]
    pub fn replace(&mut self, line: u64, pos: u64) -> Option<u64> {
        if line == EMPTY {
            return self.max_line.replace(pos);
        }
        let mask = self.slots.len() - 1;
        let mut i = home(line, self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot[0] == line {
                return Some(std::mem::replace(&mut slot[1], pos));
            }
            if slot[0] == EMPTY {
                *slot = [line, pos];
                self.len += 1;
                if self.len * 4 > self.slots.len() * 3 {
                    self.grow();
                }
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the slots and re-inserts every line.
    #[cold]
    fn grow(&mut self) {
        let doubled = vec![[EMPTY, 0]; self.slots.len() * 2];
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

    /// Every `(line, position)`, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let held = self
            .slots
            .iter()
            .filter(|s| s[0] != EMPTY)
            .map(|s| (s[0], s[1]));
        held.chain(self.max_line.map(|p| (EMPTY, p)))
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
        let mut t = PositionTable::default();
        let mut m = HashMap::new();
        let mut x = 7u64;
        for i in 0..40_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = match i % 4 {
                0 => i % 3000,
                1 => (i % 2000) << 20,
                2 => x >> 40,
                _ => [u64::MAX, u64::MAX - 1, 0][(x >> 62) as usize % 3],
            };
            assert_eq!(t.replace(line, i), m.insert(line, i), "line {line}");
        }
        assert_eq!(t.len(), m.len());
        let mut a: Vec<(u64, u64)> = t.entries().collect();
        let mut b: Vec<(u64, u64)> = m.iter().map(|(&k, &v)| (k, v)).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
