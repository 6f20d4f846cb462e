//! Spatial sampling of lines (SHARDS: Waldspurger, Park, Garthwaite & Ahmad, "Efficient MRC
//! Construction with SHARDS", FAST 2015): the filter in front of every analysis of a sampled
//! stream (`--sampled`), and the one the Valgrind tool applies inline.
//!
//! A line is *sampled* when a keyed hash of its address is at most a *limit*: then every
//! reference to it is kept, and the sample is a uniform random subset of the lines at rate
//! `(limit + 1) / 2^64`, the same lines whatever order or thread touches them.
//!
//! - The hash is SplitMix64's output function ([`mix`]), keyed by the seed:
//!   `hash(line) = mix(line ^ mix(seed))`. `mix` is a bijection of `u64`, so two distinct
//!   lines never share a hash and "the `n` smallest hashes" is always `n` lines.
//! - [`Limit`]: the inclusive bound; a rate `R` gives `floor(R · 2^64) − 1` (every line at
//!   `R = 1`). Limits of smaller rates are smaller, so their samples nest.
//! - The fixed-size variant (SHARDS_max): at most `max_lines` distinct lines are sampled at
//!   once. When a line not yet sampled passes the limit and `max_lines` are already sampled,
//!   the largest hash among them and it leaves and the limit drops below that hash. So at any
//!   moment the sample is exactly the `max_lines` smallest hashes among the lines seen so far
//!   under the starting limit: memory is bounded whatever the footprint, and the outcome
//!   depends only on the order of first references, so a producer that lowers its limit late
//!   (sending a superset) and this filter agree on what is sampled.
//!
//! docs/sampled.md is the contract, bit for bit, with the batch fields a sampled stream carries
//! ([`crate::batch::Sampling`]) and how each analysis scales by the rate.

mod filter;
pub(crate) mod forget;
pub mod promoted;
#[cfg(test)]
mod tests;

pub use filter::SpatialFilter;
pub use forget::Forgetting;

use crate::access::LineSize;
use crate::error::{Error, Result};

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijection of `u64` whose output
/// bits each depend on every input bit. The sampling hash of lines here and in
/// [`crate::mini`].
#[inline]
pub fn mix(x: u64) -> u64 {
    crate::rng::splitmix64(x)
}

/// The keyed hash of line addresses: `mix(line ^ key)`, `key = mix(seed)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineHash {
    key: u64,
}

impl LineHash {
    /// The hash of seed `seed`.
    pub fn new(seed: u64) -> LineHash {
        LineHash { key: mix(seed) }
    }

    /// The hash whose key is `key` (as a sampled batch carries it).
    pub fn with_key(key: u64) -> LineHash {
        LineHash { key }
    }

    /// The key, `mix(seed)`.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The hash of line address `line` (a byte address shifted right by the line size's log).
    #[inline]
    pub fn of(&self, line: u64) -> u64 {
        mix(line ^ self.key)
    }
}

/// An inclusive bound on hashes: a line is sampled when its hash is at most the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Limit(pub u64);

impl Limit {
    /// Every line.
    pub const ALL: Limit = Limit(u64::MAX);

    /// The limit of rate `rate` in (0, 1]: `floor(rate · 2^64) − 1`, [`Limit::ALL`] at 1, and
    /// at least 0 (one hash in 2^64) for a positive rate below 2^−64.
    pub fn from_rate(rate: f64) -> Result<Limit> {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "sampling rate",
                message: format!(
                    "{rate} is not in (0, 1]: the share of lines sampled, e.g. 0.01 for one in 100"
                ),
            });
        }
        if rate == 1.0 {
            return Ok(Limit::ALL);
        }
        // `as` truncates toward zero; below 1 the product is below 2^64.
        Ok(Limit(((rate * TWO_64) as u64).saturating_sub(1)))
    }

    /// The share of lines sampled, `(limit + 1) / 2^64`.
    pub fn rate(self) -> f64 {
        (self.0 as f64 + 1.0) / TWO_64
    }

    /// True when a line of hash `hash` is sampled.
    #[inline]
    pub fn admits(self, hash: u64) -> bool {
        hash <= self.0
    }
}

/// 2^64 as an `f64`.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// Default [`SpatialOptions::rate`]: one line in a hundred.
pub const DEFAULT_RATE: f64 = 0.01;

/// Default [`SpatialOptions::max_lines`]: 2^18 sampled lines at once (a footprint of 1.6 GiB
/// of 64-byte lines at the default rate before the rate drops).
pub const DEFAULT_MAX_LINES: u64 = 1 << 18;

/// What a spatial filter samples; [`SpatialOptions::default`] documents every default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialOptions {
    /// The starting share of lines sampled, in (0, 1]. Default [`DEFAULT_RATE`].
    pub rate: f64,
    /// Seed of the hash's key. Default 1.
    pub seed: u64,
    /// At most this many lines sampled at once (the fixed-size variant), or `None` for a fixed
    /// rate whatever the footprint. Default `Some(`[`DEFAULT_MAX_LINES`]`)`.
    pub max_lines: Option<u64>,
    /// Line size addresses are mapped to (the line of the first byte). Default 64 bytes.
    pub line_size: LineSize,
}

impl Default for SpatialOptions {
    fn default() -> Self {
        SpatialOptions {
            rate: DEFAULT_RATE,
            seed: 1,
            max_lines: Some(DEFAULT_MAX_LINES),
            line_size: LineSize::DEFAULT,
        }
    }
}

impl SpatialOptions {
    /// Checks the rate and that `max_lines` is at least 1.
    pub fn validate(&self) -> Result<()> {
        Limit::from_rate(self.rate)?;
        if self.max_lines == Some(0) {
            return Err(Error::InvalidParameter {
                name: "sampled lines",
                message: "0: the fixed-size sample holds at least 1 line".into(),
            });
        }
        Ok(())
    }

    /// The hash of these options' seed.
    pub fn hash(&self) -> LineHash {
        LineHash::new(self.seed)
    }
}
