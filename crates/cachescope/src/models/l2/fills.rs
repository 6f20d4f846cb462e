//! Random replacement for [`Variant::Fills`]: only the fills that evict, and survival over
//! the whole distribution of the L2 references between two uses of a line, not at its mean.
//!
//! A random L2 of `C` lines evicts nothing while it has free lines: of the `R·M(l)` misses,
//! `min(C, cold)` fill free lines (the first `C` fills; a line once in never leaves without
//! an eviction) and the rest evict. Spread evenly, a line survives one L2 reference with `z =
//! (1 − 1/C)^(R − min(C, cold)/M(l))` (StatCache charges all `R`), so an L2 reuse `r`
//! references later hits with `E[z^r]`. That is convex in `r`: the footprint variants keep
//! only the mean of most of `r | k`, which undercounts hits.
//!
//! Under the footprint argument's own assumption (stack distances drawn independently from
//! the histogram), `r | k` is a sum of independent parts, so `E[z^r | k]` is a product of
//! generating functions, `M(s) = cold + T(s)`:
//! - new line `f < l` of the epoch misses the L1 with `q_f = M(l)/M(f)`: `1 − q_f + q_f·z`;
//! - from `f = l` on, the L1 misses until the next new line (re-references with `l ≤ sd < f`
//!   miss too) are geometric with success `p_f = M(f)/M(l)`: `p_f·z / (1 − (1 − p_f)·z)`;
//! - before the epoch the line sat in the L1 through a geometric chain of L1-hitting epochs
//!   (stack distance `j < l` with chance `H(j)/N`; the chain starts at an L1 miss, chance
//!   `M(l)/N`): `M(l) / (N − Σ_{j<l} H(j)·Π_{f≤j}(1 − q_f + q_f·z))`.
//!
//! Their means are those of [`Variant::FootprintResident`] (`M(l)/M(f)` per new line). `R`
//! solves `R·M(l) = cold + Σ_{k≥l} H(k)·(1 − E[z^r | k])`, by bisection (the right side
//! grows with `R`). Cost: one pass over the histogram's masses per step, 50 steps per size.

use super::{L2Model, Variant};

/// One step of the pass over stack distances `f = 1, 2, …`.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// `n` new-line stages sharing `q = M(l)/M(f)` (≤ 1 below `l`, ≥ 1 from `l` on).
    Stages { n: f64, q: f64 },
    /// Reuses of stack distance `k` (every stage `≤ k` passed): `w` of them, below `l`
    /// (`resident`, they end an L1-hitting epoch) or not (an L2 reuse).
    Mass { w: f64, resident: bool },
}

/// The pass, precomputed once per histogram and L1 size; [`Fills::miss_ratio`] per L2 size.
#[derive(Clone, Debug)]
pub(super) struct Fills {
    steps: Vec<Step>,
    cold: f64,
    refs: f64,
    /// `M(l)`: L1 misses, i.e. L2 references.
    ml: f64,
}

impl Fills {
    pub(super) fn new(model: &L2Model<'_>) -> Fills {
        debug_assert_eq!(model.variant(), Variant::Fills);
        let l = model.l1_lines();
        let hist = model.histogram();
        let ml = model.misses_at_least(l);
        let mut steps = Vec::new();
        // Stages `from..to` with `q` at their middle (one M(f) in a gap, nearly one inside a
        // binned mass), split at `l` where the stage's law changes.
        let stages = |steps: &mut Vec<Step>, from: u64, to: u64| {
            for (a, b) in [(from, to.min(l)), (from.max(l), to)] {
                if a < b {
                    let q = ml / model.misses_at_least(a + (b - a) / 2);
                    steps.push(Step::Stages {
                        n: (b - a) as f64,
                        q,
                    });
                }
            }
        };
        let mut at = 1u64; // stages below `at` are in `steps`
        for mass in hist.masses.iter().filter(|m| m.weight > 0.0) {
            let end = mass.sd + mass.len;
            // The part of a mass below l ends resident epochs, the rest L2 reuses; each
            // stands at its middle distance `k` (exact for an unbinned mass).
            let parts = [(mass.sd, end.min(l), true), (mass.sd.max(l), end, false)];
            for (lo, hi, resident) in parts.into_iter().filter(|p| p.0 < p.1) {
                let k = lo + (hi - 1 - lo) / 2;
                stages(&mut steps, at, k + 1);
                let w = mass.weight * (hi - lo) as f64 / mass.len as f64;
                steps.push(Step::Mass { w, resident });
                stages(&mut steps, (k + 1).max(at), hi);
                at = at.max(hi);
            }
        }
        Fills {
            steps,
            cold: hist.cold,
            refs: hist.refs,
            ml,
        }
    }

    /// L2 misses (cold included) when each L2 reference keeps a given line with `z`.
    fn misses(&self, z: f64) -> f64 {
        let (mut log_pgf, mut chain, mut hits) = (0.0, 0.0, 0.0);
        for step in &self.steps {
            match *step {
                Step::Stages { n, q } => {
                    let g = if q <= 1.0 {
                        1.0 - q + q * z
                    } else {
                        let p = 1.0 / q;
                        p * z / (1.0 - (1.0 - p) * z)
                    };
                    log_pgf += n * g.ln();
                }
                Step::Mass { w, resident } => {
                    let e = w * log_pgf.exp();
                    if resident {
                        chain += e;
                    } else {
                        hits += e;
                    }
                }
            }
        }
        let before = self.ml / (self.refs - chain); // E[z^(fills while in the L1)]
        self.ml - before * hits
    }

    /// The local miss ratio (cold included) of a random L2 of `lines` lines.
    pub(super) fn miss_ratio(&self, lines: u64) -> f64 {
        if self.ml <= 0.0 {
            return 0.0;
        }
        if lines <= 1 {
            return 1.0;
        }
        let ln_keep = (-1.0 / lines as f64).ln_1p();
        // The first `lines` fills go to free lines and evict nothing (random replacement never
        // frees a line): only misses beyond them evict, `R − free` per L2 reference.
        let free = (lines as f64).min(self.cold) / self.ml;
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..50 {
            let r = 0.5 * (lo + hi);
            if self.misses(((r - free).max(0.0) * ln_keep).exp()) > r * self.ml {
                lo = r;
            } else {
                hi = r;
            }
        }
        0.5 * (lo + hi)
    }
}
