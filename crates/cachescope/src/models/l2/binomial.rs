//! Binomial probabilities for the L2 model's equations, computed in log space so that no
//! `n` overflows, and truncated where the left-out mass is negligible.

/// Bernstein exponent of the binomial truncation: the mass left out of each binomial is below
/// `2·e^−40 < 10⁻¹⁷`.
const TAIL_EXPONENT: f64 = 40.0;

/// `ln(n!)`: a table below 256, Stirling's series (error below 10⁻¹⁵ relative) above.
fn ln_factorial(n: u64) -> f64 {
    if n < 256 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64;
    let x2 = x * x;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x2)
        + 1.0 / (1260.0 * x * x2 * x2)
}

/// `ln P(Binomial(n, p) = j)`, `0 < p < 1`.
fn ln_binomial_pmf(n: u64, j: u64, p: f64) -> f64 {
    ln_factorial(n) - ln_factorial(j) - ln_factorial(n - j)
        + j as f64 * p.ln()
        + (n - j) as f64 * (-p).ln_1p()
}

/// The probabilities of `Binomial(n, p)` within the Bernstein window around the mean (mass
/// left out below `2·e^−40`), into `terms`; returns the first `j`. Computed from the mode in
/// log space, then by the ratio recurrence outwards, so nothing overflows for any `n`.
pub(super) fn binomial_terms(n: u64, p: f64, terms: &mut Vec<f64>) -> u64 {
    terms.clear();
    if p <= 0.0 || n == 0 {
        terms.push(1.0);
        return 0;
    }
    if p >= 1.0 {
        terms.push(1.0);
        return n;
    }
    let nf = n as f64;
    let mean = nf * p;
    let var = mean * (1.0 - p);
    let e3 = TAIL_EXPONENT / 3.0;
    let t = e3 + (e3 * e3 + 2.0 * TAIL_EXPONENT * var).sqrt();
    let lo = (mean - t).floor().max(0.0) as u64;
    let hi = ((mean + t).ceil() as u64).min(n);
    let mode = (((nf + 1.0) * p).floor() as u64).clamp(lo, hi);
    terms.resize((hi - lo + 1) as usize, 0.0);
    let ratio = p / (1.0 - p);
    let at_mode = ln_binomial_pmf(n, mode, p).exp();
    terms[(mode - lo) as usize] = at_mode;
    let mut v = at_mode;
    for j in mode..hi {
        v *= (nf - j as f64) / (j + 1) as f64 * ratio;
        terms[(j + 1 - lo) as usize] = v;
    }
    let mut v = at_mode;
    for j in (lo + 1..=mode).rev() {
        v *= j as f64 / (nf - j as f64 + 1.0) / ratio;
        terms[(j - 1 - lo) as usize] = v;
    }
    lo
}
