//! [`SetAssoc::access_each`]'s loops for sets of 2, 4, 8 or 16 ways: the set's tags are a
//! fixed-size array, compared at once (the compiler unrolls and vectorises the compare), and the
//! policy is matched once per batch. Each gives the hits of [`SetAssoc::access_outcome`].

use super::super::EMPTY;
use super::super::rrip::{victim, victim8};
use super::{SetAssoc, State, ordered};

/// Bit `w` set when way `w` holds `tag`: a branch-free compare of the whole set.
#[inline]
fn ways_holding<const A: usize>(set: &[u64; A], tag: u64) -> u32 {
    let mut bits = 0;
    for (w, &t) in set.iter().enumerate() {
        bits |= u32::from(t == tag) << w;
    }
    bits
}

/// The `A` ways of the set starting at `start`.
#[inline]
fn ways<T, const A: usize>(all: &mut [T], start: usize) -> &mut [T; A] {
    (&mut all[start..start + A])
        .try_into()
        .expect("a set has A ways")
}

impl SetAssoc {
    /// LRU misses of `lines` with `A` ways.
    pub(super) fn ordered_fixed<const A: usize>(
        &mut self,
        lines: impl Iterator<Item = u64>,
        mut miss: impl FnMut(usize),
    ) {
        let mask = self.set_mask;
        for (i, line) in lines.enumerate() {
            let set = ways::<u64, A>(&mut self.tags, (line & mask) as usize * A);
            if !ordered(set, line, true).is_hit() {
                miss(i);
            }
        }
    }

    /// FIFO misses of `lines` with `A` ways, without a branch on hit or miss: the oldest way
    /// is rewritten with itself on a hit, with the line on a miss, and the ring pointer moves
    /// on a miss only. (A miss used to shift the set; this trace-dependent branch, 35-45 %
    /// misses on real traces, was mispredicted.)
    pub(super) fn fifo_fixed<const A: usize>(
        &mut self,
        lines: impl Iterator<Item = u64>,
        mut miss: impl FnMut(usize),
    ) {
        let SetAssoc {
            set_mask,
            tags,
            state: State::Fifo(next),
            ..
        } = self
        else {
            unreachable!("fifo_fixed runs FIFO caches only");
        };
        for (i, line) in lines.enumerate() {
            let s = (line & *set_mask) as usize;
            let set = ways::<u64, A>(tags, s * A);
            let missed = ways_holding(set, line) == 0;
            let way = next[s] as usize % A;
            set[way] = if missed { line } else { set[way] };
            next[s] = ((way + usize::from(missed)) % A) as u32;
            if missed {
                miss(i);
            }
        }
    }

    /// RRIP-family misses of `lines` with `A` ways: a miss as [`Rrip::miss`] does it for
    /// [`SetAssoc::access_outcome`] (the RRPV to insert, then the first empty way or the
    /// victim), on the set's RRPVs as a fixed-size array.
    ///
    /// [`Rrip::miss`]: super::super::rrip::Rrip::miss
    pub(super) fn rrip_fixed<const A: usize>(
        &mut self,
        lines: impl Iterator<Item = u64>,
        mut miss: impl FnMut(usize),
    ) {
        let SetAssoc {
            set_mask,
            tags,
            state: State::Rrip(r),
            ..
        } = self
        else {
            unreachable!("rrip_fixed runs RRIP caches only");
        };
        for (i, line) in lines.enumerate() {
            let set_index = line & *set_mask;
            let start = set_index as usize * A;
            let set = ways::<u64, A>(tags, start);
            let hits = ways_holding(set, line);
            if hits != 0 {
                r.hit(start + hits.trailing_zeros() as usize);
                continue;
            }
            let value = r.insertion(set_index);
            let rrpv = ways::<u8, A>(&mut r.rrpv, start);
            let empty = ways_holding(set, EMPTY);
            let way = if empty != 0 {
                empty.trailing_zeros() as usize
            } else {
                victim(rrpv)
            };
            rrpv[way] = value;
            set[way] = line;
            miss(i);
        }
    }

    /// [`SetAssoc::rrip_fixed`] for 8 ways without a branch on hit or miss: both outcomes are
    /// computed on the set's RRPVs as one word (the victim by [`victim8`]) and one kept;
    /// the way written is the hit's, the first empty one or the victim.
    pub(super) fn rrip8(&mut self, lines: impl Iterator<Item = u64>, mut miss: impl FnMut(usize)) {
        let SetAssoc {
            set_mask,
            tags,
            state: State::Rrip(r),
            ..
        } = self
        else {
            unreachable!("rrip8 runs RRIP caches only");
        };
        for (i, line) in lines.enumerate() {
            let set_index = line & *set_mask;
            let start = set_index as usize * 8;
            let set = ways::<u64, 8>(tags, start);
            let hits = ways_holding(set, line);
            let missed = hits == 0;
            let value = r.insertion_if(set_index, missed);
            // The hit's way, else the first empty way, else (bit 8 + victim) the victim.
            let empty = ways_holding(set, EMPTY) & if missed { 0xff } else { 0 };
            let rrpv = ways::<u8, 8>(&mut r.rrpv, start);
            let v = u64::from_le_bytes(*rrpv);
            let (aged, victim) = victim8(v);
            let pick = hits | empty | (0x100 << victim);
            let way = pick.trailing_zeros() as usize & 7;
            let word = if pick & 0xff == 0 { aged } else { v };
            let byte = if missed { u64::from(value) } else { 0 };
            let shift = 8 * way;
            *rrpv = ((word & !(0xff << shift)) | (byte << shift)).to_le_bytes();
            set[way] = line;
            if missed {
                miss(i);
            }
        }
    }
}
