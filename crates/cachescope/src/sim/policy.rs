//! [`Policy`]: which line a full set gives up, and the state behind each choice.
//!
//! - **LRU** evicts the least recently used line.
//! - **FIFO** evicts the line filled longest ago; hits change nothing.
//! - **Random** evicts a uniformly drawn way. The generator is [`Pcg64`] seeded from the
//!   policy's seed through SplitMix64, and a way is drawn with Lemire's multiply-shift from one
//!   `next_u64`, so a seed gives the same evictions on every platform and `rand` version (the
//!   synthetic workloads draw the same way). One generator per cache, drawn from only when a
//!   full set misses.
//! - **Tree-PLRU** keeps `assoc − 1` bits per set in a binary tree over the ways (node `n` has
//!   children `2n + 1`, left, and `2n + 2`, right). A bit says on which side the next victim is:
//!   0 left, 1 right. Touching a way points every bit on its path away from it; the victim is
//!   found by following the bits from the root. Needs a power-of-two associativity up to 64.
//!
//! - **SRRIP**, **BRRIP** and **DRRIP** (Jaleel et al., ISCA 2010): re-reference interval
//!   prediction with an M-bit RRPV per line; see [`rrip`](super::rrip) for the rules and the
//!   parameters (M = 2, ε = 1/32, 32 leader sets per policy, a 10-bit PSEL). BRRIP's
//!   infrequent long insertions are drawn from the same seeded generator as random replacement.
//!
//! Every policy fills an empty way before evicting anything: LRU and FIFO the slot behind the
//! oldest line, random and tree-PLRU the lowest-numbered empty way.

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_pcg::Pcg64;

use crate::error::{Error, Result};

/// A replacement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "name")]
pub enum Policy {
    /// Least recently used.
    #[default]
    Lru,
    /// First in, first out.
    Fifo,
    /// A uniformly random way, from a generator seeded with `seed`.
    Random {
        /// The generator's seed: the same seed gives the same evictions.
        seed: u64,
    },
    /// Tree pseudo-LRU (power-of-two associativity up to 64).
    Plru,
    /// Static RRIP with hit priority: insert at RRPV 2^M − 2, a hit sets RRPV 0.
    Srrip,
    /// Bimodal RRIP: insert at 2^M − 1, at 2^M − 2 with probability ε (drawn from `seed`).
    Brrip {
        /// The generator's seed for the bimodal draws.
        seed: u64,
    },
    /// Dynamic RRIP: SRRIP and BRRIP leader sets duel through a PSEL counter; the other sets
    /// follow the winner.
    Drrip {
        /// The generator's seed for the bimodal draws.
        seed: u64,
    },
    /// Belady's optimal replacement (MIN): evict the line re-referenced farthest ahead. It needs
    /// the future, so [`Cache`](super::Cache) refuses it; [`crate::opt`] simulates it.
    Opt,
}

impl Policy {
    /// The names [`Policy::from_name`] accepts (aliases aside).
    pub const NAMES: [&'static str; 7] =
        ["lru", "fifo", "random", "plru", "srrip", "brrip", "drrip"];

    /// `lru`, `fifo`, `random`, `plru`, `srrip`, `brrip`, `drrip` or `opt`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Lru => "lru",
            Policy::Fifo => "fifo",
            Policy::Random { .. } => "random",
            Policy::Plru => "plru",
            Policy::Srrip => "srrip",
            Policy::Brrip { .. } => "brrip",
            Policy::Drrip { .. } => "drrip",
            Policy::Opt => "opt",
        }
    }

    /// The seed of a policy that draws random numbers (random, BRRIP, DRRIP).
    pub fn seed(self) -> Option<u64> {
        match self {
            Policy::Random { seed } | Policy::Brrip { seed } | Policy::Drrip { seed } => Some(seed),
            _ => None,
        }
    }

    /// The same policy drawing from `seed` (unchanged when it draws nothing).
    pub fn with_seed(self, seed: u64) -> Policy {
        match self {
            Policy::Random { .. } => Policy::Random { seed },
            Policy::Brrip { .. } => Policy::Brrip { seed },
            Policy::Drrip { .. } => Policy::Drrip { seed },
            p => p,
        }
    }

    /// True for the RRIP family.
    pub fn is_rrip(self) -> bool {
        matches!(
            self,
            Policy::Srrip | Policy::Brrip { .. } | Policy::Drrip { .. }
        )
    }

    /// The policy called `name` (`lru`, `fifo`, `random`, `plru` or `tree-plru`, `srrip`,
    /// `brrip`, `drrip`, `opt` (or `min`, `belady`), any case); `seed` is used by `random`, `brrip` and `drrip` only.
    pub fn from_name(name: &str, seed: u64) -> Result<Policy> {
        match name.to_ascii_lowercase().as_str() {
            "lru" => Ok(Policy::Lru),
            "fifo" => Ok(Policy::Fifo),
            "random" | "rand" => Ok(Policy::Random { seed }),
            "plru" | "tree-plru" => Ok(Policy::Plru),
            "srrip" => Ok(Policy::Srrip),
            "brrip" => Ok(Policy::Brrip { seed }),
            "drrip" => Ok(Policy::Drrip { seed }),
            "opt" | "min" | "belady" => Ok(Policy::Opt),
            _ => Err(Error::InvalidParameter {
                name: "replacement policy",
                message: format!("{name:?} is not one of {}", Policy::NAMES.join(", ")),
            }),
        }
    }
}

impl FromStr for Policy {
    type Err = Error;

    /// A name of [`Policy::from_name`] (seed 1), or `random:SEED`, `brrip:SEED`, `drrip:SEED`.
    fn from_str(s: &str) -> Result<Policy> {
        match s.split_once(':') {
            Some((name, seed)) => {
                let seed = seed.trim().parse().map_err(|_| Error::InvalidParameter {
                    name: "replacement policy",
                    message: format!("seed {seed:?} in {s:?} is not a whole number"),
                })?;
                let p = Policy::from_name(name.trim(), seed)?;
                if p.seed().is_none() {
                    return Err(Error::InvalidParameter {
                        name: "replacement policy",
                        message: format!("{name} draws no random numbers: give it no seed ({s:?})"),
                    });
                }
                Ok(p)
            }
            _ => Policy::from_name(s.trim(), 1),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seed() {
            Some(seed) => write!(f, "{}:{seed}", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

/// The seeded generator of random replacement.
#[derive(Clone, Debug)]
pub(super) struct VictimRng(Pcg64);

impl VictimRng {
    pub(super) fn new(seed: u64) -> VictimRng {
        VictimRng(crate::rng::seeded(seed, 0))
    }

    /// A number in `0..n` (n ≥ 1) by multiply-shift; its bias, below n/2^64, is invisible.
    #[inline]
    pub(super) fn below(&mut self, n: u32) -> u32 {
        ((u128::from(self.0.next_u64()) * u128::from(n)) >> 64) as u32
    }
}

/// Tree-PLRU bits of one set after touching `way` (of `2^depth` ways).
#[inline]
pub(super) fn plru_touch(mut bits: u64, way: u32, depth: u32) -> u64 {
    let mut node = 0u32;
    for level in (0..depth).rev() {
        let right = (way >> level) & 1;
        // Point the victim away from the side just used.
        if right == 1 {
            bits &= !(1 << node);
        } else {
            bits |= 1 << node;
        }
        node = 2 * node + 1 + right;
    }
    bits
}

/// The way tree-PLRU evicts next (of `2^depth` ways).
#[inline]
pub(super) fn plru_victim(bits: u64, depth: u32) -> u32 {
    let (mut node, mut way) = (0u32, 0u32);
    for _ in 0..depth {
        let right = ((bits >> node) & 1) as u32;
        way = (way << 1) | right;
        node = 2 * node + 1 + right;
    }
    way
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in [
            Policy::Lru,
            Policy::Fifo,
            Policy::Plru,
            Policy::Random { seed: 7 },
            Policy::Srrip,
            Policy::Brrip { seed: 2 },
            Policy::Drrip { seed: 3 },
            Policy::Opt,
        ] {
            assert_eq!(p.to_string().parse::<Policy>().unwrap(), p);
        }
        assert_eq!(
            "random".parse::<Policy>().unwrap(),
            Policy::Random { seed: 1 }
        );
        assert!("mru".parse::<Policy>().is_err());
        assert!("random:x".parse::<Policy>().is_err());
        assert!("srrip:4".parse::<Policy>().is_err());
        assert_eq!(
            "DRRIP".parse::<Policy>().unwrap(),
            Policy::Drrip { seed: 1 }
        );
        assert_eq!(
            serde_json::to_string(&Policy::Random { seed: 3 }).unwrap(),
            r#"{"name":"random","seed":3}"#
        );
    }

    #[test]
    fn plru_points_away_from_the_last_touch() {
        // 4 ways: touching 0, 1, 2, 3 in turn leaves way 0 as the victim.
        let mut bits = 0;
        for w in 0..4 {
            bits = plru_touch(bits, w, 2);
            assert_ne!(plru_victim(bits, 2), w);
        }
        assert_eq!(plru_victim(bits, 2), 0);
        // One way: no bits, always way 0.
        assert_eq!(plru_victim(plru_touch(0, 0, 0), 0), 0);
    }

    #[test]
    fn rng_is_fixed_by_its_seed() {
        let draws = |seed| {
            let mut r = VictimRng::new(seed);
            (0..8).map(|_| r.below(8)).collect::<Vec<_>>()
        };
        assert_eq!(draws(5), draws(5));
        assert_ne!(draws(5), draws(6));
        assert!(draws(9).iter().all(|&w| w < 8));
    }
}
