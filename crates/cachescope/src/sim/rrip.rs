//! Re-reference interval prediction: SRRIP, BRRIP and DRRIP (Jaleel, Theobald, Steely & Emer,
//! "High Performance Cache Replacement Using Re-Reference Interval Prediction (RRIP)", ISCA 2010).
//!
//! Every line carries an M-bit re-reference prediction value (RRPV): 0 predicts a
//! near-immediate re-reference, `2^M − 1` a distant one.
//! - **Victim** (§3.2): the first way, from way 0, whose RRPV is `2^M − 1`; when there is none,
//!   every RRPV of the set is incremented and the search repeats. We increment by the missing
//!   amount at once (`2^M − 1 − max`), which selects the same way.
//! - **Hit** (hit priority, SRRIP-HP, the paper's recommended variant): RRPV ← 0.
//! - **SRRIP insertion**: RRPV ← `2^M − 2` (a "long" interval), so a scan of lines never reused
//!   ages out before lines that hit (scan resistance).
//! - **BRRIP insertion**: RRPV ← `2^M − 1`, and `2^M − 2` with probability ε, so a loop larger
//!   than the cache keeps part of itself (thrash resistance).
//! - **DRRIP** (§4.2, set dueling from Qureshi et al., ISCA 2007): `LEADER_SETS` sets always
//!   insert as SRRIP and as many as BRRIP; a miss in an SRRIP leader increments the saturating
//!   `PSEL_BITS`-bit counter PSEL, a miss in a BRRIP leader decrements it; the other (follower)
//!   sets insert as BRRIP while PSEL's top bit is set, as SRRIP otherwise.
//!
//! Parameters, named as in the paper, with the paper's defaults: M = [`RRPV_BITS`] = 2,
//! ε = 1/[`BRRIP_EPSILON_INV`] = 1/32, [`LEADER_SETS`] = 32 per policy, PSEL of
//! [`PSEL_BITS`] = 10 bits.
//!
//! Our readings where the paper leaves a choice: PSEL starts at `2^(PSEL_BITS−1) − 1`, just
//! below its midpoint, so followers begin with SRRIP (ChampSim's `drrip` does the same). Leader
//! sets are chosen by complement select: the sets are cut into `LEADER_SETS` constituencies of
//! `c = sets / LEADER_SETS` consecutive sets; in constituency `i` the SRRIP leader is set
//! offset `i mod c`, the BRRIP leader offset `(i + c/2) mod c`. A cache of fewer than 64 sets has
//! `sets / 2` constituencies of two (or more) sets; a one-set cache has no leaders and DRRIP
//! behaves as SRRIP there. ε is drawn from the policy's seeded generator (`below(32) == 0`)
//! rather than from a hardware counter, so a seed fixes every insertion. The draws are made 64
//! at a time into a word and taken in order, one per bimodal insertion: the same sequence,
//! without a call into the generator at every insertion.

use super::policy::VictimRng;

/// M: bits of RRPV per line.
pub const RRPV_BITS: u32 = 2;
/// `2^M − 1`: a distant re-reference (the victim's value).
pub const RRPV_DISTANT: u8 = (1 << RRPV_BITS) - 1;
/// `2^M − 2`: a long re-reference interval (SRRIP's insertion).
pub const RRPV_LONG: u8 = RRPV_DISTANT - 1;
/// 1/ε: BRRIP inserts at `2^M − 2` once in this many misses on average.
pub const BRRIP_EPSILON_INV: u32 = 32;
/// Leader sets per policy in DRRIP's set dueling.
pub const LEADER_SETS: u64 = 32;
/// Width of DRRIP's policy selection counter PSEL.
pub const PSEL_BITS: u32 = 10;
const PSEL_MAX: u32 = (1 << PSEL_BITS) - 1;
/// Followers use BRRIP while PSEL is above this (its top bit is set).
const PSEL_HALF: u32 = PSEL_MAX / 2;

/// Which insertion a family member uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Insertion {
    Static,
    Bimodal,
    Dueling,
}

/// A set's part in DRRIP's duel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    SrripLeader,
    BrripLeader,
    Follower,
}

/// RRPVs of every way and the family's insertion state.
#[derive(Clone, Debug)]
pub(super) struct Rrip {
    pub(super) rrpv: Vec<u8>,
    insertion: Insertion,
    draws: Draws,
    psel: u32,
    /// Sets per constituency (0: no leaders).
    constituency: u64,
    leaders: u64,
    /// DRRIP: each set's [`Role`], computed once (a miss would otherwise divide twice).
    roles: Vec<Role>,
}

impl Rrip {
    pub(super) fn new(insertion: Insertion, seed: u64, sets: u64, lines: usize) -> Rrip {
        let leaders = LEADER_SETS.min(sets / 2);
        let mut rrip = Rrip {
            rrpv: vec![RRPV_DISTANT; lines],
            insertion,
            draws: Draws::new(seed),
            psel: PSEL_HALF,
            constituency: sets.checked_div(leaders).unwrap_or(0),
            leaders,
            roles: Vec::new(),
        };
        if insertion == Insertion::Dueling {
            rrip.roles = (0..sets).map(|s| rrip.role(s)).collect();
        }
        rrip
    }

    /// The part set `set` plays in the duel.
    pub(super) fn role(&self, set: u64) -> Role {
        let c = self.constituency;
        if self.insertion != Insertion::Dueling || c == 0 || set >= self.leaders * c {
            return Role::Follower;
        }
        let (i, offset) = (set / c, set % c);
        if offset == i % c {
            Role::SrripLeader
        } else if offset == (i + c / 2) % c {
            Role::BrripLeader
        } else {
            Role::Follower
        }
    }

    /// DRRIP's PSEL counter now (`None` for SRRIP and BRRIP).
    pub(super) fn psel(&self) -> Option<u32> {
        (self.insertion == Insertion::Dueling).then_some(self.psel)
    }

    /// A hit in way `way` (a flat index).
    #[inline]
    pub(super) fn hit(&mut self, way: usize) {
        self.rrpv[way] = 0;
    }

    /// A miss in set `set` whose ways are `start..start + assoc`, `empty` the first empty way:
    /// returns the way (flat index) to fill, with its RRPV set.
    pub(super) fn miss(
        &mut self,
        set: u64,
        start: usize,
        assoc: usize,
        empty: Option<usize>,
    ) -> usize {
        let value = self.insertion(set);
        let way = match empty {
            Some(w) => start + w,
            None => start + victim(&mut self.rrpv[start..start + assoc]),
        };
        self.rrpv[way] = value;
        way
    }

    /// The duel's part of a miss in set `set`: PSEL moves, and the RRPV the filled line gets
    /// (drawing from the generator for a bimodal insertion). The victim does not depend on
    /// it, so the caller may choose the way before or after.
    #[inline]
    pub(super) fn insertion(&mut self, set: u64) -> u8 {
        let role = self
            .roles
            .get(set as usize)
            .copied()
            .unwrap_or(Role::Follower);
        match role {
            Role::SrripLeader => self.psel = (self.psel + 1).min(PSEL_MAX),
            Role::BrripLeader => self.psel = self.psel.saturating_sub(1),
            Role::Follower => {}
        }
        let bimodal = match (self.insertion, role) {
            (Insertion::Static, _) | (Insertion::Dueling, Role::SrripLeader) => false,
            (Insertion::Bimodal, _) | (Insertion::Dueling, Role::BrripLeader) => true,
            (Insertion::Dueling, Role::Follower) => self.psel > PSEL_HALF,
        };
        if bimodal && !self.draws.draw() {
            RRPV_DISTANT
        } else {
            RRPV_LONG
        }
    }
}

/// BRRIP's draws (`below(BRRIP_EPSILON_INV) == 0`: a long insertion), made 64 at a time.
#[derive(Clone, Debug)]
struct Draws {
    rng: VictimRng,
    /// The next draws, the next one in bit 0.
    bits: u64,
    left: u32,
}

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws {
            rng: VictimRng::new(seed),
            bits: 0,
            left: 0,
        }
    }

    /// The next draw: true for a long insertion.
    #[inline]
    fn draw(&mut self) -> bool {
        if self.left == 0 {
            self.refill();
        }
        let long = self.bits & 1 != 0;
        self.bits >>= 1;
        self.left -= 1;
        long
    }

    #[cold]
    fn refill(&mut self) {
        for i in 0..64 {
            self.bits |= u64::from(self.rng.below(BRRIP_EPSILON_INV) == 0) << i;
        }
        self.left = 64;
    }
}

/// The first way predicted distant, after ageing the set until one is.
#[inline]
pub(super) fn victim(rrpv: &mut [u8]) -> usize {
    let max = rrpv.iter().copied().max().unwrap_or(RRPV_DISTANT);
    if max < RRPV_DISTANT {
        let age = RRPV_DISTANT - max;
        rrpv.iter_mut().for_each(|v| *v += age);
    }
    rrpv.iter().position(|&v| v == RRPV_DISTANT).unwrap_or(0)
}

/// [`victim`] for eight ways, their RRPVs read as one word (byte `w` is way `w`'s RRPV):
/// the largest RRPV found by bit tests, the ways holding it by one compare of every byte, and
/// the set aged by one add, instead of a scan for the maximum, eight adds and a second scan.
/// A miss-heavy trace spends most of an RRIP simulation here.
#[inline]
pub(super) fn victim8(rrpv: &mut [u8; 8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Two bits per RRPV, so a byte's value is its two low bits.
    const _: () = assert!(RRPV_BITS == 2);
    let v = u64::from_le_bytes(*rrpv);
    let (high, low) = ((v >> 1) & ONES, v & ONES);
    // The largest RRPV: 3 when a byte has both bits, 2 when one has the high bit, 1, or 0.
    let max = if high != 0 {
        2 + u64::from(high & low != 0)
    } else {
        u64::from(low != 0)
    };
    // Bytes equal to `max`: those where `v ^ max` is zero in both bits.
    let x = v ^ (max * ONES);
    let at_max = !(x | (x >> 1)) & ONES;
    *rrpv = (v + (u64::from(RRPV_DISTANT) - max) * ONES).to_le_bytes();
    (at_max.trailing_zeros() / 8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The word-wide victim search picks the way the scan picks and ages the set alike.
        #[test]
        fn victim8_is_victim(rrpv in proptest::array::uniform8(0u8..=RRPV_DISTANT)) {
            let (mut a, mut b) = (rrpv, rrpv);
            prop_assert_eq!(victim8(&mut a), victim(&mut b));
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn leaders_are_complement_selected() {
        // 2048 sets: 32 constituencies of 64; constituency 1's leaders are sets 65 and 97.
        let r = Rrip::new(Insertion::Dueling, 1, 2048, 2048);
        let roles: Vec<Role> = (0..2048).map(|s| r.role(s)).collect();
        let count = |want| roles.iter().filter(|&&x| x == want).count();
        assert_eq!(
            (count(Role::SrripLeader), count(Role::BrripLeader)),
            (32, 32)
        );
        assert_eq!(
            (r.role(65), r.role(97), r.role(66)),
            (Role::SrripLeader, Role::BrripLeader, Role::Follower)
        );
        // Four sets: two constituencies of two, one leader of each kind per constituency.
        let r = Rrip::new(Insertion::Dueling, 1, 4, 4);
        assert_eq!(
            (0..4).map(|s| r.role(s)).collect::<Vec<_>>(),
            [
                Role::SrripLeader,
                Role::BrripLeader,
                Role::BrripLeader,
                Role::SrripLeader
            ]
        );
        // One set: no duel.
        assert_eq!(
            Rrip::new(Insertion::Dueling, 1, 1, 4).role(0),
            Role::Follower
        );
        assert_eq!(
            Rrip::new(Insertion::Static, 1, 2048, 2048).role(65),
            Role::Follower
        );
    }

    #[test]
    fn victim_ages_the_set_until_one_is_distant() {
        let mut v = [0, 2, 1, 2];
        assert_eq!(victim(&mut v), 1);
        assert_eq!(v, [1, 3, 2, 3]);
        let mut v = [3, 3, 0, 3];
        assert_eq!(victim(&mut v), 0);
        assert_eq!(v, [3, 3, 0, 3]);
    }
}
