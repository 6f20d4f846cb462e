//! The scans of one set that [`super::set_assoc::SetAssoc`]'s policies share: which ways hold
//! a tag, where a line or the first empty way is, and the ordered sets of LRU and FIFO.

use super::{EMPTY, Outcome};

/// Bit `w` set when way `w` holds `tag`: a branch-free compare of the whole set.
#[inline]
pub(super) fn ways_holding<const A: usize>(set: &[u64; A], tag: u64) -> u32 {
    let mut bits = 0;
    for (w, &t) in set.iter().enumerate() {
        bits |= u32::from(t == tag) << w;
    }
    bits
}

/// One pass over a set: the way holding `line` and the first empty way.
#[inline]
pub(super) fn scan(set: &[u64], line: u64) -> (Option<usize>, Option<usize>) {
    let mut empty = None;
    for (i, &t) in set.iter().enumerate() {
        if t == line {
            return (Some(i), None);
        }
        if t == EMPTY && empty.is_none() {
            empty = Some(i);
        }
    }
    (None, empty)
}

/// LRU (`move_on_hit`) or FIFO on a set kept most recent first.
#[inline]
pub(super) fn ordered(set: &mut [u64], line: u64, move_on_hit: bool) -> Outcome {
    if set[0] == line {
        return Outcome::Hit;
    }
    for i in 1..set.len() {
        if set[i] == line {
            if move_on_hit {
                for j in (1..=i).rev() {
                    set[j] = set[j - 1];
                }
                set[0] = line;
            }
            return Outcome::Hit;
        }
    }
    let last = set[set.len() - 1];
    for j in (1..set.len()).rev() {
        set[j] = set[j - 1];
    }
    set[0] = line;
    Outcome::miss(last)
}
