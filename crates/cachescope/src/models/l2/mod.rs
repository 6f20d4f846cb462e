//! L2 reuse distances and local L2 miss ratios from the L1 stack-distance histogram (Ji, Ling &
//! Liu, *A probability model of calculating L2 cache misses*).
//!
//! The L1 is a fully-associative LRU of `l` lines; the L2 (non-inclusive, fully associative,
//! LRU or random) sees only the L1 misses. An L1 miss at stack distance `k ≥ l` (Eq. 1) is an
//! L2 reuse whose StatCache reuse distance `r` is, in the paper's reading, the number of L1
//! misses between the two references of its L1 epoch; Eq. 2 sums `P_{k→r}·H(k)` over `k ≥ l`.
//! The miss ratios come from that histogram through StatCache (random) and StatStack (LRU).
//!
//! ## The equations as read here ([`Variant::Paper`])
//! `H(k)` is the L1 histogram (reuses only), `T(s) = Σ_{k≥s} H(k)`.
//! - **Eq. 3**, `P_m`, the chance that a reference known to have `sd ≥ m` misses the L1: the
//!   printed fraction `Σ_{k≥m} H / Σ_{k≥l} H` is upside down (it is ≥ 1 for `m < l`); read as
//!   `T(l)/T(m)` for `m < l`, 1 for `m ≥ l` ([`L2Model::p_m`]).
//! - **Eq. 4**, `P_m_avg = Σ_{m≥1} P_m·T(m) / Σ_{m≥1} T(m) = [(l−1)·T(l) + Σ_{m≥l} T(m)] /
//!   Σ_k k·H(k)`, finite sums over the histogram ([`L2Model::p_m_avg`]).
//! - **Eqs. 5–6**, `P_y = (k−l)(k−l+1)(k−l+2) / (3k(k+1))` (the double sum in closed form; it
//!   gives the paper's 1/6 for `k = 3, l = 2`), `P_y(n) = P_y/n`. Eq. 5 exceeds 1 for large
//!   `k − l`; each `P_y(n)` is clamped to 1 ([`L2Model::p_y`]).
//! - **Eqs. 7–8**, `q = P_e(k,1) = Σ_{s=1}^{k−1} H(k)/T(s)` ([`L2Model::p_e1`]) and
//!   `P_e(k,n) = q^n`. Read as intended: `n` independent embeddings, a distribution over `n`,
//!   normalised to `(1−q)·q^n` for `n ≥ 0` (Eq. 9's sum from `n = 1` without normalisation
//!   would give each epoch a total probability `q/(1−q)` instead of 1). Eq. 7 exceeds 1 on
//!   most real histograms; then the geometric has no normalisation and its limit `q → 1` is
//!   used: every `n` up to `P_y` is certain to miss, so `E[x] = P_y`.
//! - **Eq. 9** leaves `x` free: it is summed over `x = 0..n`, i.e. `P_{k→r} = Σ_n Σ_x P_e(k,n)
//!   ·C(n,x)P_y(n)^x(1−P_y(n))^{n−x}·C(k,r−x)P^{r−x}(1−P)^{k−r+x}`, `P = P_m_avg`: the
//!   `{NE}` misses `Binomial(k, P)` plus the `{E}` misses `x`.
//!
//! **Numerics.** The binomial `Binomial(k, P)` is evaluated in log space at its mode (Stirling
//! series for `ln k!`) and by the ratio recurrence outwards, over the Bernstein window
//! `|j − kP| ≤ t`, `t = 40/3 + √((40/3)² + 80·kP(1−P))`: the mass left out is below
//! `2e^−40 < 10⁻¹⁷` per epoch. The `{E}` part enters through its exact mean `E[x] = E[min(n,
//! P_y)] = q(1−q^⌊P_y⌋)/(1−q) + (P_y−⌊P_y⌋)q^{⌊P_y⌋+1}` ([`L2Model::expected_x`]), split over
//! the two neighbouring integers: the mean of `r | k` is exact, the variance of `x` is dropped
//! (a documented simplification: `x` is small next to `k·P` for the L1 sizes of interest).
//!
//! ## Corrected readings ([`Variant::Footprint`], [`Variant::FootprintResident`])
//! Under the paper's own assumption (references distributed as the histogram, independently),
//! the `m`-th new line of an epoch arrives when the window holds `m` lines and misses with
//! `M(l)/M(m)`, `M(s) = cold + T(s)` (cold references are infinite distances: they miss too).
//! The re-references (`{E}`) between the `f`-th and the `(f+1)`-th new line have `sd < f`;
//! with `N` references, a geometric number (mean `(N − M(f))/M(f)`) of them come before the
//! next new line, each missing with `(M(l) − M(f))/(N − M(f))`, so `{E}` adds `M(l)/M(f) − 1`
//! misses for each `f ≥ l` and none below (HOTL's fill-time argument). So the expected L1
//! misses of an epoch of stack distance `k` are `M(l)·Σ_{f=1}^{k} 1/M(f)`, which replaces
//! Eqs. 5–8 (no bound above 1 is needed). The distribution: `{NE}` lines `1..l−1` as
//! `Binomial(l−1, P̄)` with `P̄` their average `P_m` (Eq. 4's idea: one binomial for a group
//! of `P_m`), the rest as its mean. [`Variant::FootprintResident`] also counts the L1 misses
//! that reach the L2 before the epoch while the line sits in the L1 (its previous references
//! hit the L1, so the L2 last saw it earlier): `Σ_{f=1}^{l−1} (T(f) − T(l))/M(f)` more,
//! assuming successive stack distances of a line independent ([`L2Model::resident_misses`]).
//!
//! ## Cost
//! The L1 masses (exact below 2^16, 256 per octave above, as [`crate::reuse`] bins them) are
//! grouped by `k` into bins of relative width at most 1/256 (exact below 256). Building the
//! model is O(B) for B masses, each mass costs an O(log B) tail lookup, and each of the G ≤
//! 256·log2(k_max/l) + 256 groups spreads one binomial window: O(B log B + G·W) with `W` the
//! window (`≈ 9√(kP(1−P)) + 27` terms for the paper's `Binomial(k, P)`, `≈ 9√(lP̄(1−P̄)) + 27`
//! for the corrected ones). The output is binned the same way (weighted mean distance per
//! bin). Nothing depends on trace length.
//!
//! ## Miss ratios ([`l2_mrc`])
//! The L2 sees `T(l) + cold` references (every L1 miss), of which `cold` are its cold misses
//! (a first reference misses every level) and `T(l)` are reuses, with the histogram of Eq. 2.
//! Random replacement: [`statcache::miss_ratio`] with
//! the cold references as dangling (infinite) distances (or, for [`Variant::Fills`], the
//! [evicting-fill model](self#random-replacement)); LRU:
//! [`statstack::miss_ratios`] with the cold references
//! as forward reuse times of ∞ (the L2 stream has one last reference per line). Both give
//! misses per L2 reference, cold included (`miss_ratio`); `miss_ratio_warm` takes the cold
//! share `cold/(T(l) + cold)` away. These are *local* ratios: L2 misses per L1 miss.
//!
//! An L2 no larger than the L1 is accepted: both the model and the two-level simulation
//! ([`TwoLevelAnalysis`]) are defined for it (a non-inclusive L2 of any size sees the L1
//! misses). An L1 or L2 of 0 lines, a line size other than the histogram's, or an L2 policy
//! other than LRU and random is an [`Error::InvalidParameter`].
//!
//! ## Random replacement
//! StatCache on the predicted histogram over-predicts random-replacement misses by 2–3 pp
//! (also on the *exact* L2 histogram, up to 8 pp): it charges every miss as an eviction. A
//! random L2 of `C` lines evicts nothing until its `C` free lines are filled, so only
//! `misses − min(C, cold)` fills evict; where the distinct lines fit, the only misses are
//! cold. [`Variant::Fills`] counts `R − min(C, cold)/M(l)` evicting fills per L2 reference
//! (`R` the local miss ratio, `M(l)` the L2 references) and averages the survival `z^r`,
//! `z = (1 − 1/C)^(evicting fills per reference)`, over the whole law of `r | k` (independent
//! stack distances make it a product of generating functions: a Bernoulli per new line below
//! `l`, a geometric per new line from `l` on, a geometric chain of L1-hitting epochs before),
//! where the footprint variants keep only its mean; survival is convex in `r`. The evicting
//! fills are most of the gain; the spread adds 0.1–0.5 pp at the smallest L2s.
//!
//! ## Measured accuracy and speed
//! L1 32 KiB (512 lines of 64 B), L2 128K–2M fully associative; mean absolute error of the
//! local `miss_ratio` over the five sizes against [`TwoLevelAnalysis`]
//! (`cargo test --release -p cachescope --test l2_accuracy -- --ignored --nocapture`):
//!
//! | traces | policy | `ji-l2` (paper) | `ji-l2-footprint` | `ji-l2-resident` |
//! |---|---|---|---|---|
//! | 8 synthetic | LRU | 0.038 | 0.002 | 0.0004 |
//! | 8 synthetic | random | 0.054 | 0.019 | 0.020 |
//! | gzip, sort, awk, mm, hash (lackey) | LRU | 0.035 | 0.002 | 0.0004 |
//! | same | random | 0.038 | 0.017 | 0.020 |
//!
//! (Before [`Variant::Fills`]; docs/accuracy/l2.md has its numbers.) The random-replacement
//! error is mostly StatCache's own (largest where the L2 is about the
//! reuse footprint: `hash` at 2M, `sort` at 1M, `random` at 1M). The paper's reading is worst
//! where Eq. 7 passes 1 and `E[x]` grows like `k/3`: mid-size L2s on `zipf`, `sort`, `hash`.
//! Time (benches/l2.rs, 66 443 L1 masses from 4 M Zipf references over 1 Mi lines, five LRU
//! L2s): 6–7 ms for the corrected variants, 12 ms for the paper's, against 1.7 s for the
//! two-level simulation of the same references held in memory; the model needs only the L1
//! histogram, whose one pass serves every L1 and L2 size.
//!
//! ```
//! use cachescope::models::l2::{self, L1Histogram, Variant};
//! use cachescope::sim::Policy;
//!
//! // A loop over 1000 lines, 100 times: every reuse has stack distance 999.
//! let h = L1Histogram::from_masses(64, 1000.0, &[(999, 1, 99_000.0)])?;
//! // A 512-line L1 misses everything; the L2 sees the same loop: r = 999 exactly.
//! let model = l2::L2Model::new(&h, 512, Variant::Footprint)?;
//! assert!((model.mean_misses(999) - 999.0).abs() < 1e-9);
//! let mrc = l2::l2_mrc(&h, 512, &[512 << 6, 1024 << 6], Policy::Lru, Variant::Footprint)?;
//! assert!((mrc.points[0].miss_ratio_warm - 0.99).abs() < 1e-12); // 999 ≥ 512: all miss
//! assert!(mrc.points[1].miss_ratio_warm < 1e-12); // 999 < 1024: all hit
//! # Ok::<(), cachescope::Error>(())
//! ```

mod binomial;
mod bins;
mod fills;
mod histogram;
mod model;
mod twolevel;

pub use crate::sim::TwoLevelResult;
pub use histogram::{L1Histogram, Mass};
pub use model::L2Model;
pub use twolevel::TwoLevelAnalysis;

use crate::error::{Error, Result};
use crate::models::{statcache, statstack};
use crate::reuse::{Mrc, MrcPoint};
use crate::sim::Policy;

/// Which reading of the equations to evaluate; see the [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Eqs. 3–9 as printed, with the slips read as intended (Eq. 3 turned right side up,
    /// Eqs. 5–7 clamped, Eq. 8 normalised, Eq. 9 summed over `x`). Method name `ji-l2`.
    Paper,
    /// Expected L1 misses per epoch from the fill-time argument, `M(l)·Σ_{f≤k} 1/M(f)`, in
    /// place of Eqs. 5–8; cold references counted as misses. Method name `ji-l2-footprint`.
    Footprint,
    /// [`Variant::Footprint`] plus the misses the L2 sees while the line sits in the L1 before
    /// the epoch. Method name `ji-l2-resident`. The most accurate for an LRU L2 against an
    /// exact two-level simulation (docs/accuracy/l2.md).
    FootprintResident,
    /// [`Variant::FootprintResident`]'s epochs; for a random L2, only the fills that evict
    /// (none into free lines) and the survival averaged over the whole law of the fills
    /// between two references of a line ([module documentation](self#random-replacement)),
    /// instead of StatCache on the histogram; LRU as `ji-l2-resident`. Method name `ji-l2-fills`. The
    /// default: the most accurate for both policies.
    #[default]
    Fills,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 4] = [
        Variant::Paper,
        Variant::Footprint,
        Variant::FootprintResident,
        Variant::Fills,
    ];

    /// The `method` of the curves it gives.
    pub fn method(self) -> &'static str {
        match self {
            Variant::Paper => "ji-l2",
            Variant::Footprint => "ji-l2-footprint",
            Variant::FootprintResident => "ji-l2-resident",
            Variant::Fills => "ji-l2-fills",
        }
    }
}

/// The model's local L2 miss-ratio curve: an L1 of `l1_lines` lines (fully-associative LRU)
/// over `hist`, fully-associative L2s of `l2_sizes_bytes` (each `size / line_size` lines,
/// rounded down) under `policy` (LRU, or random with any seed: the model has no seed), ratios
/// per L2 reference (per L1 miss) as in the [module documentation](self). Method
/// [`Variant::method`], policy `lru` or `random`. Errors on a 0-line L1 or L2, a policy other
/// than LRU or random.
pub fn l2_mrc(
    hist: &L1Histogram,
    l1_lines: u64,
    l2_sizes_bytes: &[u64],
    policy: Policy,
    variant: Variant,
) -> Result<Mrc> {
    let lines = l2_lines(hist.line_size, l2_sizes_bytes)?;
    check_policy(policy)?;
    let model = L2Model::new(hist, l1_lines, variant)?;
    let h = model.reuse_histogram();
    let cold = hist.cold;
    let refs = model.reuses_at_least(l1_lines) + cold;
    let cold_share = if refs > 0.0 { cold / refs } else { 0.0 };
    let ratios: Vec<f64> = match policy {
        Policy::Lru => {
            let l: Vec<f64> = lines.iter().map(|&x| x as f64).collect();
            statstack::miss_ratios(&h, cold, &l)
        }
        _ if variant == Variant::Fills => {
            let fills = fills::Fills::new(&model);
            lines.iter().map(|&x| fills.miss_ratio(x)).collect()
        }
        _ => lines
            .iter()
            .map(|&x| statcache::miss_ratio(&h, cold, x as f64))
            .collect(),
    };
    let points = l2_sizes_bytes
        .iter()
        .zip(lines)
        .zip(ratios)
        .map(|((&size_bytes, lines), r)| MrcPoint {
            size_bytes,
            lines,
            miss_ratio: Some(r),
            miss_ratio_warm: (r - cold_share).max(0.0),
        })
        .collect();
    Ok(Mrc {
        method: variant.method().into(),
        policy: policy.name().into(),
        line_size: hist.line_size,
        points,
    })
}

/// Lines of each L2 size; errors on a size under one line.
fn l2_lines(line_size: u64, sizes_bytes: &[u64]) -> Result<Vec<u64>> {
    crate::access::LineSize::new(line_size)?;
    sizes_bytes
        .iter()
        .map(|&s| {
            let lines = s / line_size;
            if lines == 0 {
                return Err(Error::InvalidParameter {
                    name: "L2 size",
                    message: format!("{s} bytes holds no {line_size}-byte line"),
                });
            }
            Ok(lines)
        })
        .collect()
}

/// LRU or random only.
fn check_policy(policy: Policy) -> Result<()> {
    match policy {
        Policy::Lru | Policy::Random { .. } => Ok(()),
        p => Err(Error::InvalidParameter {
            name: "L2 replacement policy",
            message: format!("{p}: the L2 model covers lru and random"),
        }),
    }
}
