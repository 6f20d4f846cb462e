//! The root finder of [`super::miss_ratio`]: tangents from both sides at each point.
//!
//! `g(R) = D + Σ h(k)·(1 − e^(−c·k·R)) − (N + D)·R` is concave and `φ(R) = g(R)/R` convex
//! and decreasing (each term `(1 − e^(−u))/u` is a mixture of exponentials), so at any `x` the
//! zero of `g`'s tangent lies at or above the root and the zero of `φ`'s tangent at or below
//! it. One evaluation (the exponentials give `g` and `g′` together) thus narrows a bracket
//! from both ends, and the next point is its middle. Each tangent is exact where the other is
//! slow: `g` is nearly linear when every reuse is long (a small cache), `φ` when `R` is small
//! (a large cache), so both ends converge quadratically and a size takes a handful of
//! evaluations instead of the dozen or more of regula falsi.

/// `e^(−u)` is below half an ulp of 1 beyond this, so `1 − e^(−u)` rounds to 1: those terms
/// are added at once from suffix sums.
const SATURATED: f64 = 40.0;

/// The bracket's relative width at which the solver stops (results agree with a 10^−12
/// bisection to about 10^−13).
const RELATIVE_WIDTH: f64 = 1e-14;

/// Most evaluations; convergence takes well under ten.
const MAX_STEPS: usize = 100;

/// A reuse histogram prepared for the root finder at any cache size.
pub(crate) struct Histogram {
    /// Distances `k > 0` in increasing order (a reuse at distance 0 always hits).
    k: Vec<f64>,
    /// Weight of each distance in `k`.
    w: Vec<f64>,
    /// `tail[i] = Σ_{j ≥ i} w[j]`, one longer than `k`.
    tail: Vec<f64>,
    /// `N = Σ h(k)`, distance 0 included.
    reuses: f64,
    /// `Σ h(k)·k`.
    weighted: f64,
}

impl Histogram {
    /// Prepares (distance, weight) pairs in any order, repeated distances allowed.
    pub(crate) fn new(hist: &[(u64, f64)]) -> Histogram {
        let mut pairs: Vec<(u64, f64)> = hist.iter().copied().filter(|&(k, _)| k > 0).collect();
        pairs.sort_unstable_by_key(|&(k, _)| k);
        let k: Vec<f64> = pairs.iter().map(|&(k, _)| k as f64).collect();
        let w: Vec<f64> = pairs.iter().map(|&(_, w)| w).collect();
        let mut tail = vec![0.0; w.len() + 1];
        for i in (0..w.len()).rev() {
            tail[i] = tail[i + 1] + w[i];
        }
        Histogram {
            k,
            w,
            tail,
            reuses: hist.iter().map(|&(_, w)| w).sum(),
            weighted: hist.iter().map(|&(k, w)| k as f64 * w).sum(),
        }
    }

    /// `(g(x), g′(x))` for `f(n) = 1 − e^(−c·n)`.
    fn eval(&self, c: f64, dangling: f64, total: f64, x: f64) -> (f64, f64) {
        let cx = c * x;
        let cut = self.k.partition_point(|&k| k * cx <= SATURATED);
        let (mut s, mut d) = (dangling + self.tail[cut], 0.0);
        for (&k, &w) in self.k[..cut].iter().zip(&self.w[..cut]) {
            let e = (-cx * k).exp_m1();
            s -= w * e;
            d += w * k * (1.0 + e);
        }
        (s - total * x, c * d - total)
    }

    /// The root `R` of [`super::miss_ratio`] for `dangling` cold references and `lines` lines.
    pub(crate) fn solve(&self, dangling: f64, lines: f64) -> f64 {
        if lines.is_nan() {
            return f64::NAN;
        }
        let total = self.reuses + dangling;
        if total <= 0.0 {
            return 0.0;
        }
        if lines < 1.0 {
            return 1.0;
        }
        let c = -(-1.0 / lines).ln_1p();
        if c.is_infinite() {
            // One line: every reuse at k ≥ 1 misses, so R·(N + D) = Σ_{k≥1} h(k) + D.
            return ((dangling + self.tail[0]) / total).min(1.0);
        }
        // φ(0⁺) = c·Σ h(k)·k − N ≤ 0: only the trivial root (module documentation).
        if dangling <= 0.0 && c * self.weighted - total <= 0.0 {
            return 0.0;
        }
        let (mut x, (mut g, mut dg)) = (1.0, self.eval(c, dangling, total, 1.0));
        if g >= 0.0 {
            return 1.0;
        }
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..MAX_STEPS {
            if g <= 0.0 {
                hi = hi.min(x);
            }
            if g >= 0.0 {
                lo = lo.max(x);
            }
            if dg < 0.0 {
                hi = hi.min(x - g / dg);
            }
            let phi = g / x;
            let dphi = (dg - phi) / x;
            if dphi < 0.0 {
                lo = lo.max(x - phi / dphi);
            }
            if hi - lo <= RELATIVE_WIDTH * hi {
                break;
            }
            x = 0.5 * (lo + hi);
            (g, dg) = self.eval(c, dangling, total, x);
        }
        (0.5 * (lo + hi)).clamp(0.0, 1.0)
    }
}
