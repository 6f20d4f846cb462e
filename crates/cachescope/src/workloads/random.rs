//! `random`: loads of `min(8, line_size)` bytes at the start of a line drawn uniformly from a
//! working set of `lines` lines. In a fully-associative LRU cache of C < `lines` lines the
//! steady-state miss ratio is 1 − C/`lines`. Natural length: 256·`lines` loads.
//!
//! Also the seeded generator every randomized workload uses, from [`crate::rng`] (the same
//! numbers for a seed on every platform and `rand` version).

use rand_pcg::Pcg64;

use super::kernel::{Code, Kernel, Refs, data_base};
use super::params::Params;
use crate::access::AccessKind;

/// Draws per line in the natural length of `random` and `zipf`.
pub(super) const DRAWS_PER_LINE: u64 = 256;

/// An inlined PCG step and a multiply to pick the line, then the load.
pub(super) const RANDOM_CODE: Code = Code {
    start: 0x40_1300,
    len: 9,
};
const RANDOM_SLOT: u32 = 6;

/// Loads in the natural length.
pub(super) fn random_len(p: &Params) -> u128 {
    u128::from(DRAWS_PER_LINE) * u128::from(p.lines)
}

/// The generator for `seed`; `stream` tells apart generators of one workload.
pub(super) fn seeded(seed: u64, stream: u64) -> Pcg64 {
    crate::rng::seeded(seed, u128::from(stream))
}

pub(super) use crate::rng::{below, unit};

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Random {
    rng: Pcg64,
    base: u64,
    line_size: u64,
    lines: u64,
    size: u32,
}

impl Random {
    /// Uniform loads over `lines` lines of `line_size` bytes from `base`.
    pub fn new(rng: Pcg64, base: u64, lines: u64, line_size: u64) -> Random {
        Random {
            rng,
            base,
            line_size,
            lines,
            size: line_size.min(8) as u32,
        }
    }

    /// The `random` workload.
    pub fn from_params(p: &Params) -> Random {
        Random::new(
            seeded(p.seed, 1),
            data_base(p.line_size),
            p.lines,
            p.line_size,
        )
    }
}

impl Kernel for Random {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = RANDOM_CODE;
        for _ in 0..out.room() {
            let line = below(&mut self.rng, self.lines);
            out.push(
                self.base + line * self.line_size,
                self.size,
                AccessKind::Load,
                RANDOM_SLOT,
            );
        }
    }
}
