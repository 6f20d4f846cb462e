//! Per-field counts during the pass (`attribute --fields`), and the conflict misses of each
//! bucket by cache set (`advise`'s `pad` evidence).
//!
//! A structure's fields are offsets within its element, and the element size of a heap block
//! may only be known at the end (inferred from the strides of the instructions that walk it).
//! So the pass keeps one row per (bucket, instruction, access size): its references, misses
//! and the bytes it was first to touch on a fetched line, the first offset it touched within
//! the instance (a variable, a heap block) and the greatest common divisor of its offsets'
//! differences. An instruction that walks `p[i].x` touches one offset modulo the element
//! size, a multiple of that divisor; `report/fields.rs` names the field there once the
//! element is known. Memory grows with the distinct (bucket, instruction) pairs, not with the
//! trace.

use super::Map;
use crate::sim::ThreeC;

/// One (bucket, instruction, size)'s counts.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Row {
    pub refs: u64,
    pub misses: u64,
    /// Bytes of fetched lines this instruction touched first.
    pub used: u64,
    /// The first offset within the instance.
    pub first: u64,
    /// gcd of |offset − first| over its references (0: one offset only).
    pub gcd: u64,
}

/// The rows, and each bucket's largest instance.
#[derive(Debug, Default)]
pub(super) struct FieldCounts {
    pub rows: Map<(u32, u64, u32), Row>,
    /// Per raw bucket: its largest instance in bytes.
    pub lens: Vec<u64>,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl FieldCounts {
    /// One reference of `size` bytes by `pc` at `offset` into an instance of `len` bytes of
    /// `bucket`; `used`: the bytes it was first to touch.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        bucket: u32,
        pc: u64,
        size: u32,
        offset: u64,
        len: u64,
        miss: bool,
        used: u64,
    ) {
        let b = bucket as usize;
        if b >= self.lens.len() {
            self.lens.resize(b + 1, 0);
        }
        self.lens[b] = self.lens[b].max(len);
        let row = self.rows.entry((bucket, pc, size)).or_insert(Row {
            first: offset,
            ..Row::default()
        });
        row.refs += 1;
        row.misses += u64::from(miss);
        row.used += used;
        row.gcd = gcd(row.gcd, offset.abs_diff(row.first));
    }
}

/// Each bucket's conflict misses (3C against a fully associative LRU cache of the same
/// capacity), by set.
#[derive(Debug)]
pub(super) struct Conflicts {
    three_c: ThreeC,
    sets: u64,
    /// (raw bucket, set) → conflict misses.
    pub by_set: Map<(u32, u64), u64>,
}

impl Conflicts {
    /// For a cache of `lines` lines in `sets` sets.
    pub fn new(lines: u64, sets: u64) -> crate::Result<Conflicts> {
        Ok(Conflicts {
            three_c: ThreeC::new(lines)?,
            sets,
            by_set: Map::default(),
        })
    }

    /// Every reference, hit or miss, of `bucket` to `line`.
    #[inline]
    pub fn observe(&mut self, line: u64, hit: bool, bucket: u32) {
        if let Some(crate::sim::MissClass::Conflict) = self.three_c.observe(line, hit) {
            *self.by_set.entry((bucket, line % self.sets)).or_default() += 1;
        }
    }
}
