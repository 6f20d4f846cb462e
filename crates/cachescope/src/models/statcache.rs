//! StatCache: miss ratios of fully-associative random-replacement caches from sampled reuse
//! distances (Berg & Hagersten, *StatCache: a probabilistic approach to efficient and accurate
//! data locality analysis*, ISPASS 2004, §2.4–2.6).
//!
//! ## The equation
//! In a random cache of `L` lines a line survives one miss with probability `1 − 1/L`, so it has
//! been evicted after `n` misses with probability `f(n) = 1 − (1 − 1/L)^n`. A reference whose
//! previous reference to the same line was `k` references earlier (StatCache reuse distance
//! `k = i − j − 1`, references in between; docs/definitions.md) misses with probability
//! `f(k·R)` if the miss ratio `R` is constant over those `k` references. Summing over the `N`
//! reuse samples of a histogram `h` gives eq. 6, solved for `R` in `[0, 1]`:
//!
//! ```text
//! R·N = Σ_k h(k)·f(k·R)
//! ```
//!
//! `L` is any real number ≥ 1 (not only a power of two, §2.5); a cache of fewer than one line
//! misses every reference.
//!
//! ## Root finding
//! `g(R) = Σ h(k) f(kR) − N·R` is concave with `g(0) = 0` (the trivial root) and `g(1) ≤ 0`, so
//! [`miss_ratio`] solves `φ(R) = g(R)/R = 0`, where `φ` decreases (and is convex) on `(0, 1]`:
//! each evaluation narrows a bracket from above by `g`'s tangent and from below by `φ`'s, to a
//! relative width of 10^−14 (`solve`, whose documentation says why both converge fast). Each
//! slot's histogram is prepared once for all the curve's sizes.
//! Degenerate cases:
//! - `φ(0⁺) = c·Σ h(k)·k − N ≤ 0` with `c = −ln(1 − 1/L)`: the only root is `R = 0` (the reuses
//!   are so short that the cache's misses cannot sustain themselves; every reuse at distance 0
//!   hits; a cache larger than the whole reuse footprint lands here);
//! - no reuse samples (`N = 0`, e.g. every sample cold): `R = 0`, nothing to miss;
//! - `L = 1`: `f = 1` for every `k ≥ 1`, so `R` is the fraction of reuses with `k ≥ 1`;
//! - `L < 1` (a cache smaller than a line): `R = 1`.
//!
//! ## Cold misses ([`Cold`])
//! - [`Cold::Exclude`], the paper's choice (§2.6): only reuse samples enter the equation.
//! - [`Cold::Estimate`]: each of the `D` dangling samples stands for one cold miss (a line's last
//!   reference and its first are equally many), counted as an infinite distance (`f = 1`), so
//!   cold misses also drive evictions: `(N + D)·R = Σ_k h(k)·f(k·R) + D`. `R` then includes the
//!   cold misses; its reuse part is `Σ_k h(k)·f(k·R)`.
//!
//! ## Time slots and the curve
//! The equation assumes `R` constant in time; as in §2.4 it is solved per time slot of the
//! profile (a reuse sample belongs to the slot of its reuse, a dangling one to the slot of its
//! own position: [`Profile::slot_of`]). Slot `s` with `N_s` reuse and `D_s` dangling samples
//! predicts `N_s·R_s` reuse misses (Exclude) or `(N_s + D_s)·R_s` misses of which `D_s` cold
//! (Estimate), in samples. Each sample stands for `1/rate` references, so summing the slots and
//! dividing by all `S` samples gives misses per counted reference: the slots are averaged
//! weighted by the references they stand for. A slot with no reuse sample predicts no reuse
//! miss; slots with no sample at all add nothing. With one slot, `miss_ratio_warm = R·(1 − d)`,
//! `d = D/S` (see [`crate::sampling`]). Curves ([`mrc`]) have method `statcache`, policy
//! `random`, `miss_ratio_warm` always (misses per counted reference, cold left out, the
//! denominator of [`crate::reuse`]'s exact curves), and `miss_ratio` only with
//! [`Cold::Estimate`].
//!
//! ```
//! use cachescope::models::statcache;
//!
//! // Half the reuses at distance 0 (always hit), half at 1000, in a 100-line random cache.
//! let hist = [(0, 1.0), (1000, 1.0)];
//! let r = statcache::miss_ratio(&hist, 0.0, 100.0);
//! let f = |n: f64| 1.0 - (1.0 - 1.0 / 100.0f64).powf(n);
//! assert!((2.0 * r - f(1000.0 * r)).abs() < 1e-9); // R·N = Σ h(k)·f(k·R)
//! assert!(r > 0.49 && r < 0.5);
//! ```

use crate::error::Result;
use crate::reuse::{Mrc, MrcPoint};
pub use crate::sampling::Cold;
use crate::sampling::Profile;
use solve::Histogram;

mod solve;

/// The root `R` in `[0, 1]` of `(N + D)·R = Σ_k h(k)·f(k·R) + D` for a cache of `lines` lines,
/// where `hist` holds (StatCache distance `k`, weight `h(k)`) pairs in any order (weights ≥ 0,
/// repeated distances allowed), `N = Σ h(k)` and `D = dangling` (cold references, see the
/// [module documentation](self)). With `dangling = 0` this is the paper's eq. 6 and `R` is
/// misses per reuse; otherwise misses per reference, cold included, and its reuse part is
/// `R − D/(N + D)`. Returns 0 when `N + D = 0`, 1 when `lines < 1`, NaN when `lines` is NaN.
pub fn miss_ratio(hist: &[(u64, f64)], dangling: f64, lines: f64) -> f64 {
    Histogram::new(hist).solve(dangling, lines)
}

/// The StatCache working-set graph of `profile` at `sizes_bytes` (each cache holds
/// `size / line_size` lines, rounded down): method `statcache`, policy `random`, ratios per
/// counted reference as in the [module documentation](self). Errors when the profile has no
/// sample.
pub fn mrc(profile: &Profile, sizes_bytes: &[u64], cold: Cold) -> Result<Mrc> {
    mrc_on(profile, sizes_bytes, cold, 1)
}

/// [`mrc`], the sizes solved on up to `threads` threads (each size's equation is solved
/// alone, so the points do not depend on `threads`).
pub fn mrc_on(profile: &Profile, sizes_bytes: &[u64], cold: Cold, threads: usize) -> Result<Mrc> {
    profile.expect_samples()?;
    // Each slot's histogram is prepared once for every size.
    let slots: Vec<(Histogram, f64, u64)> = profile
        .slot_histograms()
        .iter()
        .map(|slot| {
            let n: f64 = slot.reuses.iter().map(|&(_, w)| w).sum();
            (Histogram::new(&slot.reuses), n, slot.dangling)
        })
        .collect();
    let samples = profile.samples().len() as f64;
    let line_size = profile.line_size().bytes();
    let points = crate::threads::map_in_order(sizes_bytes, threads, |&size_bytes| {
        let lines = size_bytes / line_size;
        let (mut warm, mut all) = (0.0, 0.0);
        for (hist, n, dangling) in &slots {
            let (n, dangling) = (*n, *dangling);
            match cold {
                Cold::Exclude => warm += n * hist.solve(0.0, lines as f64),
                Cold::Estimate => {
                    let d = dangling as f64;
                    let misses = (n + d) * hist.solve(d, lines as f64);
                    all += misses;
                    warm += (misses - d).max(0.0);
                }
            }
        }
        MrcPoint {
            size_bytes,
            lines,
            miss_ratio: (cold == Cold::Estimate).then_some(all / samples),
            miss_ratio_warm: warm / samples,
        }
    });
    Ok(Mrc {
        method: "statcache".into(),
        policy: "random".into(),
        line_size,
        points,
    })
}

#[cfg(test)]
mod reference;
#[cfg(test)]
pub(crate) mod tests;
