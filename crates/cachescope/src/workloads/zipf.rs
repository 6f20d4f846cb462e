//! `zipf`: loads of `min(8, line_size)` bytes at the start of one of `lines` lines, the line of
//! popularity rank k (1-based) drawn with probability k^−s / H(lines, s), s = `zipf_s`.
//! Ranks are scattered over the working set by a seeded permutation ([`Scatter`]), so hot lines
//! are not neighbours in memory. Natural length: 256·`lines` loads.
//!
//! Ranks are drawn by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to
//! generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), as in Apache
//! Commons RNG: O(1) memory and about one uniform draw per sample for any s > 0 and any
//! number of lines. With H(x) = ∫ x^−s dx = (x^(1−s) − 1)/(1 − s) (ln x when s = 1), a uniform
//! u between H(1.5) − 1 and H(lines + 0.5) gives x = H⁻¹(u) and k = round(x), accepted when
//! k − x ≤ s′ or u ≥ H(k + 0.5) − k^−s.

use rand_pcg::Pcg64;

use super::kernel::{Code, Kernel, Refs, data_base};
use super::params::Params;
use super::random::{seeded, unit};
use crate::access::AccessKind;

/// The sampler's loop (two transcendental calls, a compare) and the load.
const ZIPF_CODE: Code = Code {
    start: 0x40_1400,
    len: 24,
};
const ZIPF_SLOT: u32 = 20;

/// Zipf ranks in `1..=n` by rejection-inversion; see the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Sampler {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s_prime: f64,
}

impl Sampler {
    /// A sampler of ranks `1..=n` with exponent `s > 0`.
    pub fn new(n: u64, s: f64) -> Sampler {
        let n = n as f64;
        let h_integral_x1 = h_integral(1.5, s) - 1.0;
        let h_integral_n = h_integral(n + 0.5, s);
        let s_prime = 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s);
        Sampler {
            n,
            s,
            h_integral_x1,
            h_integral_n,
            s_prime,
        }
    }

    /// One rank.
    pub fn sample(&self, rng: &mut Pcg64) -> u64 {
        loop {
            let u = self.h_integral_n + unit(rng) * (self.h_integral_x1 - self.h_integral_n);
            let x = h_integral_inverse(u, self.s);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s_prime || u >= h_integral(k + 0.5, self.s) - h(k, self.s) {
                return k as u64;
            }
        }
    }
}

/// x^−s.
fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

/// (x^(1−s) − 1)/(1 − s), continuous through s = 1 (where it is ln x).
fn h_integral(x: f64, s: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - s) * log_x) * log_x
}

/// The inverse of [`h_integral`].
fn h_integral_inverse(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (helper1(t) * x).exp()
}

/// ln(1 + x)/x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1)/x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// A seeded permutation of `0..lines` in O(1) memory: three rounds of an odd multiply, an add
/// and an xor-shift permute `0..2^bits` (each step is invertible modulo 2^bits), and
/// cycle-walking (apply again until the value is below `lines`) restricts that permutation to
/// `0..lines`, which takes fewer than two rounds on average since `lines > 2^(bits−1)`.
#[derive(Clone, Debug)]
pub(super) struct Scatter {
    lines: u64,
    mask: u64,
    shift: u32,
    mul: [u64; 3],
    add: [u64; 3],
}

impl Scatter {
    pub fn new(lines: u64, rng: &mut Pcg64) -> Scatter {
        use rand::Rng;
        let bits = 64 - (lines - 1).leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        let mut mul = [0; 3];
        let mut add = [0; 3];
        for r in 0..3 {
            mul[r] = rng.next_u64() | 1;
            add[r] = rng.next_u64();
        }
        Scatter {
            lines,
            mask,
            shift: bits / 2 + 1,
            mul,
            add,
        }
    }

    /// The image of `x < lines`.
    #[inline]
    pub fn permute(&self, x: u64) -> u64 {
        let mut y = x;
        loop {
            for r in 0..3 {
                y = y.wrapping_mul(self.mul[r]).wrapping_add(self.add[r]) & self.mask;
                y ^= y >> self.shift;
            }
            if y < self.lines {
                return y;
            }
        }
    }
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Zipf {
    rng: Pcg64,
    sampler: Sampler,
    scatter: Scatter,
    base: u64,
    line_size: u64,
    size: u32,
}

impl Zipf {
    pub fn new(p: &Params) -> Zipf {
        let scatter = Scatter::new(p.lines, &mut seeded(p.seed, 3));
        Zipf {
            rng: seeded(p.seed, 2),
            sampler: Sampler::new(p.lines, p.zipf_s),
            scatter,
            base: data_base(p.line_size),
            line_size: p.line_size,
            size: p.line_size.min(8) as u32,
        }
    }

    /// The line (0-based, from the base) holding popularity rank `rank` (1-based).
    pub fn line_of_rank(&self, rank: u64) -> u64 {
        self.scatter.permute(rank - 1)
    }
}

impl Kernel for Zipf {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = ZIPF_CODE;
        for _ in 0..out.room() {
            let rank = self.sampler.sample(&mut self.rng);
            let line = self.line_of_rank(rank);
            out.push(
                self.base + line * self.line_size,
                self.size,
                AccessKind::Load,
                ZIPF_SLOT,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_permutation() {
        for lines in [1, 2, 3, 5, 64, 100, 1000] {
            let s = Scatter::new(lines, &mut seeded(7, 3));
            let mut seen = vec![false; lines as usize];
            for x in 0..lines {
                let y = s.permute(x);
                assert!(y < lines && !seen[y as usize], "lines {lines}: {x} -> {y}");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn sampler_matches_the_distribution() {
        // s = 1 over 4 ranks: probabilities 12/25, 6/25, 4/25, 3/25.
        let sampler = Sampler::new(4, 1.0);
        let mut rng = seeded(1, 0);
        let mut counts = [0u32; 4];
        let draws = 50_000;
        for _ in 0..draws {
            counts[sampler.sample(&mut rng) as usize - 1] += 1;
        }
        for (k, want) in [12.0, 6.0, 4.0, 3.0].into_iter().enumerate() {
            let got = f64::from(counts[k]) / f64::from(draws);
            assert!(
                (got - want / 25.0).abs() < 0.01,
                "rank {}: {got} vs {}",
                k + 1,
                want / 25.0
            );
        }
    }

    #[test]
    fn sampler_survives_extreme_exponents() {
        let mut rng = seeded(1, 0);
        for s in [1e-9, 0.5, 1.0 - 1e-12, 3.0, 1e3, 1e300] {
            let sampler = Sampler::new(1000, s);
            for _ in 0..100 {
                assert!((1..=1000).contains(&sampler.sample(&mut rng)), "s = {s}");
            }
        }
    }
}
