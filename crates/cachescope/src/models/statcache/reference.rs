//! The regula falsi solver StatCache used before the two-tangent one ([`super::solve`]),
//! kept as the reference the new solver is tested against.

/// Width of the bracket at which the root finder stops.
const TOLERANCE: f64 = 1e-12;

/// Most root-finder steps (Illinois converges in about 10; bisection would need 40).
const MAX_STEPS: usize = 200;

/// The root `R` in `[0, 1]` of `(N + D)·R = Σ_k h(k)·f(k·R) + D` for a cache of `lines` lines,
/// where `hist` holds (StatCache distance `k`, weight `h(k)`) pairs in any order (weights ≥ 0,
/// repeated distances allowed), `N = Σ h(k)` and `D = dangling` (cold references, see the
/// [module documentation](self)). With `dangling = 0` this is the paper's eq. 6 and `R` is
/// misses per reuse; otherwise misses per reference, cold included, and its reuse part is
/// `R − D/(N + D)`. Returns 0 when `N + D = 0`, 1 when `lines < 1`, NaN when `lines` is NaN.
pub(super) fn miss_ratio(hist: &[(u64, f64)], dangling: f64, lines: f64) -> f64 {
    Equation::new(hist, dangling, lines).solve()
}

/// `φ(R) = (Σ h(k) f(kR) + D)/R − (N + D)` for one cache size.
struct Equation<'a> {
    hist: &'a [(u64, f64)],
    dangling: f64,
    total: f64,
    /// `−ln(1 − 1/L)`: `f(n) = 1 − e^(−c·n)`; +∞ for one line.
    c: f64,
    lines: f64,
}

impl<'a> Equation<'a> {
    fn new(hist: &'a [(u64, f64)], dangling: f64, lines: f64) -> Self {
        let total = hist.iter().map(|&(_, w)| w).sum::<f64>() + dangling;
        Equation {
            hist,
            dangling,
            total,
            c: -(-1.0 / lines).ln_1p(),
            lines,
        }
    }

    /// `φ(R)` for `R > 0`.
    fn phi(&self, r: f64) -> f64 {
        let mut s = self.dangling;
        for &(k, w) in self.hist {
            if k > 0 {
                s -= w * (-self.c * k as f64 * r).exp_m1();
            }
        }
        s / r - self.total
    }

    /// `lim φ(R)` as `R → 0⁺`: `c·Σ h(k)·k − N` without dangling references, else +∞.
    fn phi_at_zero(&self) -> f64 {
        let weighted: f64 = self.hist.iter().map(|&(k, w)| k as f64 * w).sum();
        if self.dangling > 0.0 {
            f64::INFINITY
        } else if weighted == 0.0 {
            -self.total
        } else {
            self.c * weighted - self.total
        }
    }

    fn solve(&self) -> f64 {
        if self.lines.is_nan() {
            return f64::NAN;
        }
        if self.total <= 0.0 {
            return 0.0;
        }
        if self.lines < 1.0 {
            return 1.0;
        }
        let (mut a, mut fa) = (0.0, self.phi_at_zero());
        if fa <= 0.0 {
            return 0.0;
        }
        let (mut b, mut fb) = (1.0, self.phi(1.0));
        if fb >= 0.0 {
            return 1.0;
        }
        // φ(a) > 0 > φ(b) throughout. `kept`: which end the last step kept (Illinois halves
        // the value at an end kept twice in a row).
        let mut kept = 0i8;
        for _ in 0..MAX_STEPS {
            if b - a <= TOLERANCE {
                break;
            }
            let x = if !fa.is_finite() {
                // An infinite end (dangling references, or one line): bisect, towards 0 first.
                if a == 0.0 { b / 8.0 } else { 0.5 * (a + b) }
            } else {
                let x = b - fb * (b - a) / (fb - fa);
                if x > a && x < b { x } else { 0.5 * (a + b) }
            };
            let fx = self.phi(x);
            if fx > 0.0 {
                (a, fa) = (x, fx);
                if kept == 1 {
                    fb *= 0.5;
                }
                kept = 1;
            } else if fx < 0.0 {
                (b, fb) = (x, fx);
                if kept == -1 {
                    fa *= 0.5;
                }
                kept = -1;
            } else {
                return x;
            }
        }
        0.5 * (a + b)
    }
}
