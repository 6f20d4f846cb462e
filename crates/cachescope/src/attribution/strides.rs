//! The stride summary of each load instruction: its references, misses and the dominant
//! stride between the consecutive addresses it loaded, with how regular it is.
//!
//! An instruction's **stride** is the difference between two consecutive addresses it loaded
//! (in bytes, signed; a load and a modify both load). Its **dominant stride** is the most
//! frequent one, and its **regularity** the fraction of its consecutive pairs with that stride
//! (0-1; docs/hardware.md). Memory grows with the distinct instructions, not with the trace:
//! each keeps its strides in [`SLOTS`] counters of the Space-Saving algorithm (Metwally,
//! Agrawal & El Abbadi, ICDT 2005), so the counts are exact while an instruction has at most
//! `SLOTS` distinct strides; beyond that a stride taking more than 1/`SLOTS` of the pairs is
//! still found, and the regularity given is a lower bound (its count less the counter's
//! possible overestimate).

use super::Map;
use crate::memo::{Folded, Memo};

/// Stride counters per instruction.
pub const SLOTS: usize = 4;

/// One counter: a stride, its count, and how much of the count may belong to strides it
/// replaced.
#[derive(Clone, Copy, Debug, Default)]
struct Counter {
    stride: i64,
    count: u64,
    error: u64,
}

/// One load instruction's counts.
#[derive(Clone, Debug, Default)]
pub struct Load {
    /// Loads it made.
    pub refs: u64,
    /// Those that missed.
    pub misses: u64,
    last: u64,
    counters: [Counter; SLOTS],
}

impl Load {
    fn observe(&mut self, addr: u64, miss: bool) {
        if self.refs > 0 {
            self.count(addr.wrapping_sub(self.last) as i64);
        }
        self.refs += 1;
        self.misses += u64::from(miss);
        self.last = addr;
    }

    fn count(&mut self, stride: i64) {
        let c = &mut self.counters;
        if let Some(k) = c.iter_mut().find(|k| k.count > 0 && k.stride == stride) {
            k.count += 1;
            return;
        }
        let min = c.iter_mut().min_by_key(|k| k.count).expect("SLOTS > 0");
        *min = Counter {
            stride,
            count: min.count + 1,
            error: min.count,
        };
    }

    /// Consecutive pairs of its addresses.
    pub fn pairs(&self) -> u64 {
        self.refs.saturating_sub(1)
    }

    /// The dominant stride and its regularity (0 and 0 with fewer than two loads).
    pub fn dominant(&self) -> (i64, f64) {
        let best = self.counters.iter().filter(|k| k.count > 0).max_by(|a, b| {
            a.count
                .cmp(&b.count)
                .then(b.stride.abs().cmp(&a.stride.abs()))
        });
        match best {
            Some(k) if self.pairs() > 0 => {
                (k.stride, (k.count - k.error) as f64 / self.pairs() as f64)
            }
            _ => (0, 0.0),
        }
    }
}

/// The load instructions seen, by address: a map from address to a row of `rows`, looked
/// up through a small direct-mapped memo first (a loop's few loads hit it every time, and a
/// compare is cheaper than the map's hash and probe; ~0.4 s of `attribute` on a recorded sort).
#[derive(Clone, Debug)]
pub struct Strides {
    index: Map<u64, u32>,
    rows: Vec<(u64, Load)>,
    /// pc → row, by the pc's low bits folded. Rows never move, so an entry stays right once
    /// set.
    memo: Box<Memo<u32, Folded, 256>>,
}

impl Default for Strides {
    fn default() -> Self {
        Strides {
            index: Map::default(),
            rows: Vec::new(),
            memo: Box::new(Memo::new()),
        }
    }
}

impl Strides {
    /// A load at `addr` by instruction `pc`, which missed or not.
    #[inline]
    pub fn observe(&mut self, pc: u64, addr: u64, miss: bool) {
        let row = match self.memo.get(pc) {
            Some(row) => row,
            None => {
                let rows = &mut self.rows;
                let row = *self.index.entry(pc).or_insert_with(|| {
                    rows.push((pc, Load::default()));
                    (rows.len() - 1) as u32
                });
                self.memo.insert(pc, row);
                row
            }
        };
        self.rows[row as usize].1.observe(addr, miss);
    }

    /// Every load instruction seen, with its counts, in the order first seen.
    pub fn loads(&self) -> impl Iterator<Item = (u64, &Load)> {
        self.rows.iter().map(|(pc, l)| (*pc, l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(addrs: &[u64]) -> Load {
        let mut l = Load::default();
        for &a in addrs {
            l.observe(a, false);
        }
        l
    }

    #[test]
    fn a_regular_walk_with_one_jump() {
        // 0, 64, …, 448, then back to 0 and on: 14 pairs of +64, one of −448.
        let addrs: Vec<u64> = (0..8).chain(0..8).map(|i| i * 64).collect();
        let (stride, regularity) = load(&addrs).dominant();
        assert_eq!(stride, 64);
        assert!((regularity - 14.0 / 15.0).abs() < 1e-12);
    }

    #[test]
    fn negative_strides_and_too_few_loads() {
        assert_eq!(load(&[800, 792, 784]).dominant(), (-8, 1.0));
        assert_eq!(load(&[5]).dominant(), (0, 0.0));
    }

    #[test]
    fn more_strides_than_counters_give_a_lower_bound() {
        // Stride 8 in 60 % of the pairs, the rest spread over many strides.
        let mut addrs = vec![0u64];
        let mut a = 0u64;
        for i in 0..1000u64 {
            a += if i % 5 < 3 { 8 } else { 1000 + i };
            addrs.push(a);
        }
        let (stride, regularity) = load(&addrs).dominant();
        assert_eq!(stride, 8);
        assert!(
            regularity <= 0.6 + 1e-12 && regularity > 0.2,
            "{regularity}"
        );
    }
}
