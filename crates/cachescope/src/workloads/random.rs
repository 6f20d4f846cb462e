//! `random`: loads of `min(8, line_size)` bytes at the start of a line drawn uniformly from a
//! working set of `lines` lines. In a fully-associative LRU cache of C < `lines` lines the
//! steady-state miss ratio is 1 − C/`lines`. Natural length: 256·`lines` loads.
//!
//! Also the seeded generator every randomized workload uses. Only `next_u64` of
//! [`Pcg64`] is used, and the state comes from the seed through SplitMix64, so a seed gives the
//! same trace on every platform and every `rand` version (rand's own range sampling and
//! `seed_from_u64` are free to change; the PCG output function is fixed by its specification).

use rand::Rng;
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

/// SplitMix64's output function (Steele, Lea & Flood 2014), to spread a small seed over the
/// 128-bit PCG state.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The generator for `seed`; `stream` tells apart generators of one workload.
pub(super) fn seeded(seed: u64, stream: u64) -> Pcg64 {
    let hi = splitmix64(seed);
    let lo = splitmix64(seed ^ 0x5851_f42d_4c95_7f2d);
    Pcg64::new((u128::from(hi) << 64) | u128::from(lo), u128::from(stream))
}

/// A number in `0..n` (n ≥ 1) by Lemire's multiply-shift; the bias, under n/2^64, is far
/// below anything a trace can show.
#[inline]
pub(super) fn below(rng: &mut Pcg64, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// A number uniform in [0, 1) with 53 random bits.
#[inline]
pub(super) fn unit(rng: &mut Pcg64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

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
