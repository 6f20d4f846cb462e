//! Set-associative LRU miss ratios from a stack-distance distribution (Smith, "On the
//! effectiveness of set associative page mapping", ICSE 1976; used by HOTL §2.4 and §3;
//! Hill & Smith 1989 evaluate it):
//!
//! `P(miss | sd) = P(Binomial(sd, 1/S) ≥ A)`
//!
//! for a cache of `S` sets of `A` ways. `sd` is the LRU stack distance (distinct other lines
//! since the previous reference to the line, docs/definitions.md; HOTL's reuse distance is
//! `sd + 1`). The assumption: each of those `sd` lines falls in the reused line's set
//! independently with probability `1/S`, and the reuse misses iff at least `A` did. With
//! `S = 1` this is the fully associative rule `sd ≥ A`.
//!
//! [`Distances`] is a distribution of stack distances, from the exact histogram
//! ([`Distances::from_stack_distances`]) or from HOTL's conversion
//! ([`crate::models::hotl::Filmer::stack_distances`]); [`miss_ratio`] and
//! [`set_associative_mrc`] apply the formula to it.
//!
//! ## Numerics
//! The binomial tail is summed term by term from the probability mass, computed by Loader's
//! saddle-point method ("Fast and accurate computation of binomial probabilities", 2000; the
//! algorithm of R's `dbinom`), which keeps about 14 significant digits for any `sd` up to
//! 2^53 with no overflow or cancellation. Only terms within `t` of the mean `sd/S` are
//! summed, with `t` chosen by Bernstein's inequality so that the mass left out is below
//! 10⁻¹⁶: the result is within 10⁻¹³ of the exact tail, at a cost of at most `min(A, 2t + 1)`
//! terms (`t ≈ 9·√(sd/S) + 27`).
//!
//! A binned distance (the exact histogram bins distances above 2^16 in bins of relative width
//! 1/256) is evaluated at its bin's middle value.

use crate::error::{Error, Result};
use crate::reuse::{Mrc, MrcPoint, StackDistances};

/// `ln(2^-17)`-ish: the Bernstein exponent that leaves out less than 10⁻¹⁶ of the mass.
const TAIL_EXPONENT: f64 = 40.0;

/// `P(Binomial(sd, 1/sets) ≥ ways)`: the probability that a reuse at stack distance `sd`
/// misses in an LRU cache of `sets` sets of `ways` ways. `sets = 0` or `ways = 0` is read as
/// a cache that holds nothing (1).
pub fn miss_probability(sd: u64, sets: u64, ways: u64) -> f64 {
    if sets == 0 || ways == 0 {
        return 1.0;
    }
    if sd < ways {
        return 0.0;
    }
    if sets == 1 {
        return 1.0;
    }
    let p = 1.0 / sets as f64;
    let d = sd as f64;
    let mean = d * p;
    let var = mean * (1.0 - p);
    let t =
        TAIL_EXPONENT / 3.0 + ((TAIL_EXPONENT / 3.0).powi(2) + 2.0 * TAIL_EXPONENT * var).sqrt();
    let last = ways - 1; // P(miss) = 1 − P(X ≤ ways − 1)
    if (last as f64) < mean - t {
        return 1.0;
    }
    if (ways as f64) > mean + t {
        return 0.0;
    }
    let first = (mean - t).floor().max(0.0) as u64;
    let ratio = p / (1.0 - p);
    let mut term = binomial_pmf(sd, first, p);
    let mut low = 0.0;
    let end = last.min(sd);
    let mut k = first;
    loop {
        low += term;
        if k == end {
            break;
        }
        term *= (d - k as f64) / (k + 1) as f64 * ratio;
        k += 1;
    }
    (1.0 - low).clamp(0.0, 1.0)
}

/// `P(Binomial(n, p) = k)` by Loader's method.
fn binomial_pmf(n: u64, k: u64, p: f64) -> f64 {
    let q = 1.0 - p;
    if k == 0 {
        return (n as f64 * (-p).ln_1p()).exp();
    }
    if k == n {
        return (n as f64 * p.ln()).exp();
    }
    let (n, k) = (n as f64, k as f64);
    let lc = stirling_error(n) - stirling_error(k) - stirling_error(n - k);
    let lf = (2.0 * std::f64::consts::PI * k * (n - k) / n).ln();
    (lc - bd0(k, n * p) - bd0(n - k, n * q) - 0.5 * lf).exp()
}

/// `ln(x!) − (x + ½)·ln(x) + x − ½·ln(2π)`, the error of Stirling's formula, for integer x.
fn stirling_error(x: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if x <= 15.0 {
        let ln_fact: f64 = (2..=x as u64).map(|i| (i as f64).ln()).sum();
        return ln_fact - (x + 0.5) * x.ln() + x - 0.5 * (2.0 * std::f64::consts::PI).ln();
    }
    let x2 = x * x;
    if x > 500.0 {
        return (S0 - S1 / x2) / x;
    }
    if x > 80.0 {
        return (S0 - (S1 - S2 / x2) / x2) / x;
    }
    if x > 35.0 {
        return (S0 - (S1 - (S2 - S3 / x2) / x2) / x2) / x;
    }
    (S0 - (S1 - (S2 - (S3 - S4 / x2) / x2) / x2) / x2) / x
}

/// `x·ln(x/np) + np − x`, the deviance term, without cancellation when `x ≈ np`.
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            ej *= v2;
            let s1 = s + ej / (2 * j + 1) as f64;
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * (x / np).ln() + np - x
}

/// Stack distances `sd .. sd + len − 1`, together a fraction `weight` of the references.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SdMass {
    /// Smallest stack distance.
    pub sd: u64,
    /// Number of distances covered (1 for one exact distance).
    pub len: u64,
    /// Fraction of all counted references.
    pub weight: f64,
}

impl SdMass {
    /// The distance the formula is evaluated at: the middle of the range.
    fn middle(&self) -> u64 {
        self.sd + (self.len - 1) / 2
    }
}

/// A distribution of LRU stack distances (`sd`, docs/definitions.md) as fractions of the
/// counted references, plus the cold share.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Distances {
    /// Where it comes from (`exact`, `hotl`…); set-associative curves are named `<this>+smith`.
    pub method: String,
    /// Line size in bytes.
    pub line_size: u64,
    /// References the distribution describes.
    pub refs: u64,
    /// Fraction of references that are first references (cold misses), when known.
    pub cold: Option<f64>,
    /// Distances by increasing `sd`, non-overlapping.
    pub masses: Vec<SdMass>,
}

impl Distances {
    /// The exact histogram's distribution: one mass per non-empty bin.
    pub fn from_stack_distances(sd: &StackDistances) -> Distances {
        let n = sd.refs.max(1) as f64;
        Distances {
            method: "exact".into(),
            line_size: sd.line_size,
            refs: sd.refs,
            cold: Some(sd.cold as f64 / n),
            masses: sd
                .histogram
                .bins()
                .map(|b| SdMass {
                    sd: b.start,
                    len: b.len,
                    weight: b.count as f64 / n,
                })
                .collect(),
        }
    }
}

/// Misses per counted reference of one cache.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// Cold misses included, when the distribution knows them.
    pub miss_ratio: Option<f64>,
    /// Cold misses left out (same denominator).
    pub miss_ratio_warm: f64,
}

/// Smith's estimate for an LRU cache of `sets` sets of `ways` ways. Errors on 0 sets or ways.
pub fn miss_ratio(d: &Distances, sets: u64, ways: u64) -> Result<Estimate> {
    if sets == 0 || ways == 0 {
        return Err(Error::InvalidParameter {
            name: "cache shape",
            message: format!("{sets} sets of {ways} ways: a cache has at least one of each"),
        });
    }
    let warm = d
        .masses
        .iter()
        .map(|m| m.weight * miss_probability(m.middle(), sets, ways))
        .sum();
    Ok(Estimate {
        miss_ratio: d.cold.map(|c| c + warm),
        miss_ratio_warm: warm,
    })
}

/// Smith's LRU miss-ratio curve for caches of `ways` ways at `sizes_bytes`: each cache holds
/// `lines = size / line_size` lines in `S = lines / ways` sets (rounded down; the capacity
/// used is `S·ways`); a cache of fewer lines than `ways` is one set of `lines` ways. Method
/// `<d.method>+smith`, policy `lru`. Errors on 0 ways or an invalid line size.
pub fn set_associative_mrc(d: &Distances, ways: u32, sizes_bytes: &[u64]) -> Result<Mrc> {
    crate::access::LineSize::new(d.line_size)?;
    if ways == 0 {
        return Err(Error::InvalidParameter {
            name: "associativity",
            message: "0 ways: a cache has at least one way (1 = direct mapped)".into(),
        });
    }
    let ways = u64::from(ways);
    let points = sizes_bytes
        .iter()
        .map(|&size_bytes| {
            let lines = size_bytes / d.line_size;
            let (sets, a) = if lines >= ways {
                (lines / ways, ways)
            } else {
                (1, lines)
            };
            let e = if a == 0 {
                let warm = d.masses.iter().map(|m| m.weight).sum();
                Estimate {
                    miss_ratio: d.cold.map(|c| c + warm),
                    miss_ratio_warm: warm,
                }
            } else {
                miss_ratio(d, sets, a).expect("sets and ways are positive")
            };
            MrcPoint {
                size_bytes,
                lines,
                miss_ratio: e.miss_ratio,
                miss_ratio_warm: e.miss_ratio_warm,
            }
        })
        .collect();
    Ok(Mrc {
        method: format!("{}+smith", d.method),
        policy: "lru".into(),
        line_size: d.line_size,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(Bin(n, p) ≥ a) by summing exact terms in f64 (small n only).
    fn naive_tail(n: u64, p: f64, a: u64) -> f64 {
        let mut total = 0.0;
        for k in a..=n {
            let mut c = 1.0f64;
            for i in 0..k {
                c = c * (n - i) as f64 / (i + 1) as f64;
            }
            total += c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
        }
        total
    }

    #[test]
    fn matches_direct_summation_on_small_cases() {
        for sets in [1u64, 2, 3, 8, 64] {
            for ways in [1u64, 2, 4, 8, 16] {
                for sd in [0u64, 1, 3, 7, 8, 15, 16, 40, 100, 300, 1000] {
                    let want = if sets == 1 {
                        f64::from(u8::from(sd >= ways))
                    } else {
                        naive_tail(sd, 1.0 / sets as f64, ways)
                    };
                    let got = miss_probability(sd, sets, ways);
                    assert!(
                        (got - want).abs() < 1e-12,
                        "sd {sd} S {sets} A {ways}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn pmf_is_accurate_for_large_n() {
        // The pmf sums to 1 around the mean even where (1 − p)^n underflows.
        let (n, p) = (10_000_000_000u64, 1.0 / 4096.0);
        let mean = n as f64 * p;
        let sd = (mean * (1.0 - p)).sqrt();
        let lo = (mean - 12.0 * sd) as u64;
        let sum: f64 = (lo..(mean + 12.0 * sd) as u64)
            .map(|k| binomial_pmf(n, k, p))
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
        // Near the mean the tail is about one half, and it rises with the distance.
        let a = mean as u64;
        let m = miss_probability(n, 4096, a);
        assert!((m - 0.5).abs() < 0.01, "{m}");
        assert!(miss_probability(n + 100_000, 4096, a) > m);
        assert_eq!(miss_probability(n, 4096, a / 2), 1.0);
        assert_eq!(miss_probability(n, 4096, a * 2), 0.0);
    }

    #[test]
    fn direct_mapped_is_one_minus_the_chance_no_line_collides() {
        // With one way, a reuse hits iff none of the sd lines fell in its set.
        for (sd, sets) in [(1u64, 2u64), (10, 16), (1000, 512), (100_000, 65_536)] {
            let want = 1.0 - (1.0 - 1.0 / sets as f64).powf(sd as f64);
            assert!((miss_probability(sd, sets, 1) - want).abs() < 1e-12);
        }
    }
}
