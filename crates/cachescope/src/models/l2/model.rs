//! The equations: [`L2Model`] turns an [`L1Histogram`] and an L1 of `l` lines into the L2
//! reuse-distance histogram `H_r,L2` (Eq. 2). See the [module documentation](super) for the
//! reading of each equation.

use super::binomial::binomial_terms;
use super::bins::{Accumulator, Group, bin_index};
use super::{L1Histogram, Variant};
use crate::error::{Error, Result};

/// The L2 model for one L1 histogram and one L1 size. Building it precomputes every tail sum
/// the equations need (O(B) for B masses); [`L2Model::reuse_histogram`] evaluates Eq. 2.
#[derive(Clone, Debug)]
pub struct L2Model<'a> {
    hist: &'a L1Histogram,
    l1_lines: u64,
    variant: Variant,
    /// `suffix[i]`: reuse weight of masses `i..` (one more entry, 0).
    suffix: Vec<f64>,
    /// Cumulative sums of `1/(cold + T(s))` at each mass start (see [`Recip`]), for the
    /// corrected variants; of `1/T(s)` for the paper's.
    recip: Recip,
}

/// `Σ_{s=0}^{x−1} 1/(extra + T(s))` for any `x`, where `T(s)` is the reuse weight at stack
/// distance `≥ s` (a mass of `len > 1` spread evenly over its distances).
#[derive(Clone, Debug)]
struct Recip {
    extra: f64,
    /// `at_start[i]`: the sum up to (not including) the start of mass `i`.
    at_start: Vec<f64>,
}

impl<'a> L2Model<'a> {
    /// The model of an L1 of `l1_lines` lines (fully associative LRU) fed by `hist`. Errors
    /// when `l1_lines` is 0.
    pub fn new(hist: &'a L1Histogram, l1_lines: u64, variant: Variant) -> Result<L2Model<'a>> {
        if l1_lines == 0 {
            return Err(Error::InvalidParameter {
                name: "L1 size",
                message: "0 lines: the L1 holds at least one line".into(),
            });
        }
        let m = &hist.masses;
        let mut suffix = vec![0.0; m.len() + 1];
        for i in (0..m.len()).rev() {
            suffix[i] = suffix[i + 1] + m[i].weight;
        }
        let extra = match variant {
            Variant::Paper => 0.0,
            Variant::Footprint | Variant::FootprintResident | Variant::Fills => hist.cold,
        };
        let mut model = L2Model {
            hist,
            l1_lines,
            variant,
            suffix,
            recip: Recip {
                extra,
                at_start: Vec::with_capacity(m.len()),
            },
        };
        let mut acc = 0.0;
        let mut at = 0u64; // sum covers s < at
        for (i, mass) in m.iter().enumerate() {
            // Gap before the mass: T(s) constant = suffix[i].
            if mass.sd > at {
                acc += (mass.sd - at) as f64 / (extra + model.suffix[i]);
            }
            model.recip.at_start.push(acc);
            acc += model.recip_within(i, mass.len);
            at = mass.sd + mass.len;
        }
        Ok(model)
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The L1 size in lines.
    pub fn l1_lines(&self) -> u64 {
        self.l1_lines
    }

    /// The L1 histogram.
    pub fn histogram(&self) -> &L1Histogram {
        self.hist
    }

    /// `T(s)`: reuse weight (references) with stack distance `≥ s`, cold references left out;
    /// inside a binned mass the weight is spread evenly.
    pub fn reuses_at_least(&self, s: u64) -> f64 {
        let m = &self.hist.masses;
        let i = m.partition_point(|x| x.sd + x.len <= s);
        if i == m.len() {
            return 0.0;
        }
        let mass = m[i];
        if s <= mass.sd {
            return self.suffix[i];
        }
        let share = (mass.sd + mass.len - s) as f64 / mass.len as f64;
        self.suffix[i + 1] + mass.weight * share
    }

    /// `M(s) = cold + T(s)`: references that miss an LRU cache of `s` lines.
    pub fn misses_at_least(&self, s: u64) -> f64 {
        self.hist.cold + self.reuses_at_least(s)
    }

    /// `Σ_{s = start}^{start + n − 1} 1/(extra + T(s))` inside mass `i` (`n ≤ len`), by the
    /// integral of `1/T` over `[start − ½, start + n − ½]` (exact for `len = 1`; T is linear
    /// inside a mass).
    fn recip_within(&self, i: usize, n: u64) -> f64 {
        let mass = self.hist.masses[i];
        let base = self.recip.extra + self.suffix[i + 1];
        if mass.len == 1 {
            return if n == 0 {
                0.0
            } else {
                1.0 / (base + mass.weight)
            };
        }
        let c = mass.weight / mass.len as f64; // weight per distance
        if c <= 0.0 {
            return n as f64 / base;
        }
        // T(s) = base + c·(end − s), end = sd + len, for s in the mass.
        let end = (mass.sd + mass.len) as f64;
        let t = |s: f64| base + c * (end - s);
        let (a, b) = (mass.sd as f64 - 0.5, (mass.sd + n) as f64 - 0.5);
        (t(a) / t(b)).ln() / c
    }

    /// `Σ_{s=0}^{x−1} 1/(extra + T(s))`; infinite terms (no weight at all at `≥ s`) make it
    /// infinite.
    fn recip_below(&self, x: u64) -> f64 {
        let m = &self.hist.masses;
        let i = m.partition_point(|mass| mass.sd < x);
        if i == 0 {
            return if x == 0 {
                0.0
            } else {
                x as f64 / (self.recip.extra + self.suffix[0])
            };
        }
        let prev = m[i - 1];
        let base = self.recip.at_start[i - 1];
        let inside = (x - prev.sd).min(prev.len);
        let after = x - prev.sd - inside; // in the gap after mass i − 1
        let gap = if after == 0 {
            0.0
        } else {
            after as f64 / (self.recip.extra + self.suffix[i])
        };
        base + self.recip_within(i - 1, inside) + gap
    }

    /// `Σ_{s=a}^{b} 1/(extra + T(s))` (0 when `b < a`).
    fn recip_sum(&self, a: u64, b: u64) -> f64 {
        if b < a {
            return 0.0;
        }
        self.recip_below(b + 1) - self.recip_below(a)
    }

    /// Eq. 3 (orientation corrected, see the module documentation): the probability that a
    /// reference whose stack distance is known to be `≥ m` misses the L1: `T(l)/T(m)` below
    /// `l`, 1 from `l` on. The paper's variant counts reuses only; the corrected ones count
    /// cold references too (`M(l)/M(m)`).
    pub fn p_m(&self, m: u64) -> f64 {
        let l = self.l1_lines;
        if m >= l {
            return 1.0;
        }
        let (num, den) = match self.variant {
            Variant::Paper => (self.reuses_at_least(l), self.reuses_at_least(m)),
            _ => (self.misses_at_least(l), self.misses_at_least(m)),
        };
        if den <= 0.0 { 1.0 } else { num / den }
    }

    /// `Σ_k H(k)·(k − a + 1)⁺ = Σ_{m ≥ a} T(m)`, masses spread evenly.
    fn excess(&self, a: u64) -> f64 {
        self.hist
            .masses
            .iter()
            .map(|mass| {
                let last = mass.sd + mass.len - 1;
                if last < a {
                    return 0.0;
                }
                let first = mass.sd.max(a);
                let n = (last - first + 1) as f64;
                let (lo, hi) = ((first - a + 1) as f64, (last - a + 1) as f64);
                mass.weight / mass.len as f64 * n * (lo + hi) / 2.0
            })
            .sum()
    }

    /// Eq. 4 for the paper's variant: one average of `P_m` weighted by `T(m)`,
    /// `[(l − 1)·T(l) + Σ_{m≥l} T(m)] / Σ_{m≥1} T(m)`. For the corrected variants, the plain
    /// average of `P_1 … P_{l−1}` (the first `l − 1` new lines of every L1-missing epoch; the
    /// others miss for sure). 1 when there is nothing to average.
    pub fn p_m_avg(&self) -> f64 {
        let l = self.l1_lines;
        match self.variant {
            Variant::Paper => {
                let den = self.excess(1);
                if den <= 0.0 {
                    return 1.0;
                }
                ((l - 1) as f64 * self.reuses_at_least(l) + self.excess(l)) / den
            }
            _ => {
                if l <= 1 {
                    return 1.0;
                }
                self.misses_at_least(l) * self.recip_sum(1, l - 1) / (l - 1) as f64
            }
        }
    }

    /// Eq. 5, the paper's closed form: `Σ_{m=0}^{k−l} Σ_{i=1}^{k−l−m} i / Σ_{i=1}^{k} i =
    /// (k−l)(k−l+1)(k−l+2) / (3k(k+1))` for `k ≥ l` (0 below). Not clamped: it exceeds 1 once
    /// `k − l` passes about `(3k²)^{1/3}`; Eq. 6 divides it by `n` and [`L2Model::expected_x`]
    /// clamps each `P_y(n)` to 1.
    pub fn p_y(&self, k: u64) -> f64 {
        let l = self.l1_lines;
        if k < l || k == 0 {
            return 0.0;
        }
        let j = (k - l) as f64;
        let k = k as f64;
        j * (j + 1.0) * (j + 2.0) / (3.0 * k * (k + 1.0))
    }

    /// Eq. 7: `P_e(k, 1) = Σ_{s=1}^{k−1} H(k)/T(s)`, with `H(k)` the weight per distance of
    /// the mass holding `k` (its weight over its length). Not clamped (it can exceed 1).
    pub fn p_e1(&self, k: u64) -> f64 {
        if k < 2 {
            return 0.0;
        }
        let m = &self.hist.masses;
        let i = m.partition_point(|x| x.sd + x.len <= k);
        let h = match m.get(i) {
            Some(mass) if mass.sd <= k => mass.weight / mass.len as f64,
            _ => return 0.0,
        };
        h * self.recip_paper(1, k - 1)
    }

    /// `Σ_{s=a}^{b} 1/T(s)` whatever the variant (the paper's sums never count cold).
    fn recip_paper(&self, a: u64, b: u64) -> f64 {
        if self.variant == Variant::Paper {
            return self.recip_sum(a, b);
        }
        // Rare path (tests): direct summation by masses.
        let paper = L2Model::new(self.hist, self.l1_lines, Variant::Paper)
            .expect("the L1 size was checked");
        paper.recip_sum(a, b)
    }

    /// The expected number `E[x]` of L1 misses among the embedded epochs (`{E}`) of an epoch
    /// of stack distance `k` under Eqs. 5–8: `n ~ P(n) = (1 − q)·q^n`, `n ≥ 0`, with `q =`
    /// [`L2Model::p_e1`] (Eq. 8 normalised), and `x | n ~ Binomial(n, min(1, P_y/n))`
    /// (Eq. 6). Closed form: `E[min(n, P_y)] = q(1 − q^⌊P_y⌋)/(1 − q) + (P_y −
    /// ⌊P_y⌋)·q^(⌊P_y⌋+1)`; for `q ≥ 1` (Eq. 7 above 1) its limit `P_y`.
    pub fn expected_x(&self, k: u64) -> f64 {
        let c = self.p_y(k);
        let q = self.p_e1(k);
        if c <= 0.0 || q <= 0.0 {
            return 0.0;
        }
        if q >= 1.0 {
            return c;
        }
        let fl = c.floor();
        q * (1.0 - q.powf(fl)) / (1.0 - q) + (c - fl) * q.powf(fl + 1.0)
    }

    /// Misses the line itself may have gathered in L2 before the epoch, while it sat in the
    /// L1 (only [`Variant::FootprintResident`] and [`Variant::Fills`]; 0 otherwise): `Σ_{f=1}^{l−1} (T(f) −
    /// T(l))/M(f)`, the expected misses of the chain of L1-hitting epochs before an
    /// L1-missing one, their stack distances drawn independently from the histogram.
    pub fn resident_misses(&self) -> f64 {
        let l = self.l1_lines;
        if matches!(self.variant, Variant::Paper | Variant::Footprint) || l <= 1 {
            return 0.0;
        }
        // Σ_{f<l} T(f)/M(f) − T(l)·Σ_{f<l} 1/M(f), with T(f)/M(f) = 1 − cold/M(f).
        let s = self.recip_sum(1, l - 1);
        (l - 1) as f64 - self.hist.cold * s - self.reuses_at_least(l) * s
    }

    /// The mean of `r | k` (Eq. 9's distribution): L1 misses between the two references of an
    /// epoch of stack distance `k ≥ l`. Paper: `k·P_m_avg + E[x]`. Footprint: `M(l)·Σ_{f=1}^{k}
    /// 1/M(f)` (plus [`L2Model::resident_misses`]).
    pub fn mean_misses(&self, k: u64) -> f64 {
        let (shift, n, p) = self.shape(k);
        shift + n as f64 * p
    }

    /// `r | k` as `shift + Binomial(n, p)`.
    fn shape(&self, k: u64) -> (f64, u64, f64) {
        let l = self.l1_lines;
        match self.variant {
            Variant::Paper => (self.expected_x(k), k, self.p_m_avg_cached()),
            _ => {
                let ml = self.misses_at_least(l);
                let shift = ml * self.recip_sum(l, k) + self.resident_misses();
                (shift, l - 1, self.p_m_avg_cached())
            }
        }
    }

    fn p_m_avg_cached(&self) -> f64 {
        self.p_m_avg().clamp(0.0, 1.0)
    }

    /// Eq. 2: `H_r,L2(r) = Σ_{k ≥ l} P_{k→r}·H(k)`, as (StatCache reuse distance `r` = L2
    /// references in between, weight in references) by increasing `r`. The total weight is
    /// `T(l)`, the warm L1 misses (each one an L2 reuse). See the module documentation for the
    /// binning and the cost.
    pub fn reuse_histogram(&self) -> Vec<(u64, f64)> {
        let l = self.l1_lines;
        let p = self.p_m_avg_cached();
        let resident = self.resident_misses();
        let ml = self.misses_at_least(l);
        let mut groups: Vec<Group> = Vec::new();
        // Masses at `sd ≥ l` (the part of a straddling mass above l), grouped by log bin of k.
        for mass in &self.hist.masses {
            let end = mass.sd + mass.len;
            if end <= l || mass.weight <= 0.0 {
                continue;
            }
            let first = mass.sd.max(l);
            let w = mass.weight * (end - first) as f64 / mass.len as f64;
            let k = first + (end - 1 - first) / 2;
            let shift = match self.variant {
                Variant::Paper => self.expected_x(k),
                _ => ml * self.recip_sum(l, k) + resident,
            };
            let g = bin_index(k);
            match groups.last_mut() {
                Some(last) if last.bin == g => last.add(w, k, shift),
                _ => groups.push(Group::new(g, w, k, shift)),
            }
        }
        let mut out = Accumulator::default();
        let mut terms = Vec::new();
        for g in &groups {
            let k = (g.k / g.w).round() as u64;
            let shift = g.shift / g.w;
            let n = match self.variant {
                Variant::Paper => k,
                _ => l - 1,
            };
            let first = binomial_terms(n, p, &mut terms);
            let base = shift.floor();
            let frac = shift - base;
            for (j, &t) in terms.iter().enumerate() {
                let r = base as u64 + first + j as u64;
                out.add(r, g.w * t * (1.0 - frac));
                if frac > 0.0 {
                    out.add(r + 1, g.w * t * frac);
                }
            }
        }
        out.finish()
    }
}
