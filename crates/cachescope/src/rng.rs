//! The seeded generators behind every random choice (random replacement, the workloads, the
//! samplers, k-means seeding). Only `next_u64` of [`Pcg64`] is used and its state comes from
//! the seed through SplitMix64, so a seed gives the same numbers on every platform and every
//! `rand` version (rand's own range sampling and `seed_from_u64` are free to change; the PCG
//! output function is fixed by its specification). Changing anything here changes seeded
//! results users have saved: the functions are shared so that they cannot drift apart.

use rand::Rng;
use rand_pcg::Pcg64;

/// SplitMix64's output function (Steele, Lea & Flood 2014): spreads a small seed over 64 bits.
#[inline]
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The generator of `seed`; `stream` tells apart generators of one seed.
pub(crate) fn seeded(seed: u64, stream: u128) -> Pcg64 {
    let hi = splitmix64(seed);
    let lo = splitmix64(seed ^ 0x5851_f42d_4c95_7f2d);
    Pcg64::new((u128::from(hi) << 64) | u128::from(lo), stream)
}

/// The generator of `seed` whose state's low half is spread from `!seed`: the samplers' (and
/// random replacement's) form, kept for their saved results.
pub(crate) fn seeded_complement(seed: u64, stream: u128) -> Pcg64 {
    let state = (u128::from(splitmix64(seed)) << 64) | u128::from(splitmix64(!seed));
    Pcg64::new(state, stream)
}

/// A number in `0..n` (n ≥ 1) by Lemire's multiply-shift; the bias, under n/2^64, is far
/// below anything a trace can show.
#[inline]
pub(crate) fn below(rng: &mut Pcg64, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// A number uniform in [0, 1) with 53 random bits.
#[inline]
pub(crate) fn unit(rng: &mut Pcg64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
