//! [`Filmer`]: the HOTL conversions (§2.3–2.6) from a footprint to the fill time, the
//! inter-miss time, the miss ratio and the reuse-distance distribution, and back
//! ([`footprint_from_distances`]).
//!
//! With `fp` the footprint curve (linear between its points) and `c` a cache size in lines:
//! - fill time `vt(c) = fp⁻¹(c)` for `0 ≤ c ≤ m`, `∞` above;
//! - miss ratio `mr(c) = (fp(x + Δx) − fp(x)) / Δx` for `fp(x) ≤ c < fp(x + Δx)`: the slope of
//!   the segment that holds `c`, cold misses included; `m/n` for `c ≥ m`;
//! - inter-miss time `im(c) = vt(c + 1) − vt(c)`, `n/m` for `c ≥ m`;
//! - reuse distance `P(rd = c) = mr(c − 1) − mr(c)`, HOTL's `rd = sd + 1` (so an LRU cache of
//!   `c` lines hits iff `rd ≤ c`).
//!
//! ## Cold misses and the trace's ends
//! The slope of the Xiang footprint counts cold misses: for `w ≪ n` it is about
//! `(m + #{rt > w}) / n` (HOTL Theorem 2.2's derivation, with the first and last terms of the
//! formula kept), and HOTL sets `im(c) = n/m` for `c ≥ m`. So [`Filmer::miss_ratio`] includes
//! cold misses and [`Filmer::miss_ratio_warm`] is `mr(c) − m/n`, the same split as the exact
//! curve's (`m` cold misses per `n` references at every size). Near `w = n` the finite trace
//! bends the footprint: its slope can fall below `m/n`, which no LRU cache can (every line
//! misses once). There the miss ratio is raised to `m/n`; the reuse-distance distribution then
//! sums to `1 − m/n`, the non-cold fraction, exactly.
//!
//! ## Concavity
//! HOTL's Corollary 2.4 (fp is concave) holds for `n ≫ w`; on a finite trace the exact
//! footprint is only nearly concave: `fp(w+1) − fp(w) ≤ (n−w+2)/(n−w) · (fp(w) − fp(w−1))`
//! (tested in `tests/hotl_footprint.rs`). The conversions use the least concave majorant of the
//! curve's points (their upper hull), so the miss ratio never rises with the cache size; on
//! real traces the majorant differs from the points only where the bound above allows.
//! Sampled curves (no `m`) have no cold floor, and past their largest footprint keep the last
//! segment's slope.

use super::curve::{CurvePoint, FootprintCurve};
use super::footprint::Footprint;
use crate::error::{Error, Result};
use crate::models::smith::{Distances, SdMass};
use crate::reuse::{Mrc, MrcPoint, sizes_log_range};

/// Windows per power of two of the curve [`Filmer::new`] converts above
/// [`DENSE_WINDOWS`] (HOTL §4.1).
pub const PER_OCTAVE: u64 = 256;

/// [`Filmer::new`] converts the footprint at every window below this (where the default
/// layout makes it exact), so a sharp knee in the footprint (a loop over `K` lines) gives a
/// sharp step in the miss ratio; on the 256-per-octave grid alone, the sizes within 1/256 of
/// `K` would get a slope averaged across the knee.
pub const DENSE_WINDOWS: u64 = 1 << 16;

/// The five Filmer metrics of one footprint curve; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Filmer {
    line_size: u64,
    refs: u64,
    distinct_lines: Option<u64>,
    /// Vertices of the concave majorant, from (0, 0): windows and footprints both strictly
    /// increasing, slopes strictly decreasing.
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// Slope of the segment from vertex `j` to `j + 1`.
    slopes: Vec<f64>,
    /// `m/n` for a whole trace, 0 for a sampled curve.
    floor: f64,
}

impl Filmer {
    /// The conversions of a whole trace's footprint: its curve at every window below
    /// [`DENSE_WINDOWS`], then [`PER_OCTAVE`] windows per power of two up to `n`.
    pub fn new(fp: &Footprint) -> Filmer {
        let n = fp.refs;
        let mut windows: Vec<u64> = (1..n.min(DENSE_WINDOWS)).collect();
        if n >= 1 {
            let grid = sizes_log_range(1, n, PER_OCTAVE).expect("a valid grid");
            windows.extend(grid.into_iter().filter(|&w| w >= DENSE_WINDOWS.min(n)));
        }
        let curve = FootprintCurve::at_windows(fp, &windows);
        if curve.points.is_empty() {
            // An empty trace: nothing misses.
            return Filmer::hull_of(&curve, 0.0);
        }
        Filmer::from_curve(&curve).expect("a whole trace's curve is valid")
    }

    /// The conversions of any curve (validated with [`FootprintCurve::validate`]).
    pub fn from_curve(curve: &FootprintCurve) -> Result<Filmer> {
        curve.validate()?;
        let floor = match curve.distinct_lines {
            Some(m) => m as f64 / curve.refs as f64,
            None => 0.0,
        };
        Ok(Filmer::hull_of(curve, floor))
    }

    fn hull_of(curve: &FootprintCurve, floor: f64) -> Filmer {
        let mut xs = vec![0.0];
        let mut ys = vec![0.0];
        for &CurvePoint { window, footprint } in &curve.points {
            // Pop vertices on or under the chord from the one before to the new point.
            while xs.len() >= 2 {
                let k = xs.len();
                let (x0, y0, x1, y1) = (xs[k - 2], ys[k - 2], xs[k - 1], ys[k - 1]);
                if (y1 - y0) * (window - x0) <= (footprint - y0) * (x1 - x0) {
                    xs.pop();
                    ys.pop();
                } else {
                    break;
                }
            }
            xs.push(window);
            ys.push(footprint);
        }
        // Keep the rising part (the hull is flat or falls after its highest vertex).
        let top = ys
            .iter()
            .enumerate()
            .fold(0, |best, (i, &y)| if y > ys[best] { i } else { best });
        xs.truncate(top + 1);
        ys.truncate(top + 1);
        let slopes = (1..xs.len())
            .map(|j| (ys[j] - ys[j - 1]) / (xs[j] - xs[j - 1]))
            .collect();
        Filmer {
            line_size: curve.line_size,
            refs: curve.refs,
            distinct_lines: curve.distinct_lines,
            xs,
            ys,
            slopes,
            floor,
        }
    }

    /// Line size in bytes.
    pub fn line_size(&self) -> u64 {
        self.line_size
    }

    /// The cold-miss share `m/n`, when the curve is a whole trace's.
    pub fn cold_ratio(&self) -> Option<f64> {
        self.distinct_lines.map(|_| self.floor)
    }

    /// The largest footprint of the curve (`m` for a whole trace).
    pub fn max_footprint(&self) -> f64 {
        *self.ys.last().expect("the hull starts at (0, 0)")
    }

    /// The converted footprint at window `w`: the concave majorant, `max_footprint` past its
    /// end.
    pub fn footprint(&self, w: f64) -> f64 {
        let j = self.xs.partition_point(|&x| x <= w);
        if j == 0 {
            return 0.0;
        }
        match self.slopes.get(j - 1) {
            Some(s) => self.ys[j - 1] + s * (w - self.xs[j - 1]),
            None => self.max_footprint(),
        }
    }

    /// Index of the segment holding `c` (`fp(x_j) ≤ c < fp(x_{j+1})`), `None` past the top.
    fn segment(&self, c: f64) -> Option<usize> {
        let j = self.ys.partition_point(|&y| y <= c.max(0.0));
        (j < self.ys.len()).then(|| j - 1)
    }

    /// Fill time `vt(c)` in references: the window whose footprint is `c` lines; 0 for
    /// `c ≤ 0`, infinite above the largest footprint.
    pub fn fill_time(&self, c: f64) -> f64 {
        if c <= 0.0 {
            return 0.0;
        }
        match self.segment(c) {
            Some(j) => self.xs[j] + (c - self.ys[j]) / self.slopes[j],
            None if c == self.max_footprint() => *self.xs.last().expect("non-empty"),
            None => f64::INFINITY,
        }
    }

    /// `vt(c)`, continued past the largest footprint at the tail miss ratio (`n/m` references
    /// per line for a whole trace), so that inter-miss times stay finite.
    fn fill_time_continued(&self, c: f64) -> f64 {
        let top = self.max_footprint();
        if c <= top {
            return self.fill_time(c);
        }
        let tail = self.miss_ratio(top);
        if tail <= 0.0 {
            return f64::INFINITY;
        }
        *self.xs.last().expect("non-empty") + (c - top) / tail
    }

    /// Inter-miss time `im(c) = vt(c + 1) − vt(c)` in references; `n/m` for `c ≥ m`
    /// (infinite where nothing misses any more).
    pub fn inter_miss_time(&self, c: f64) -> f64 {
        let c = c.max(0.0);
        let (a, b) = (
            self.fill_time_continued(c),
            self.fill_time_continued(c + 1.0),
        );
        if b.is_infinite() {
            f64::INFINITY
        } else {
            b - a
        }
    }

    /// Miss ratio of a fully associative LRU cache of `c` lines, cold misses included: the
    /// slope of the segment holding `c`, at least `m/n`; `m/n` for `c ≥ m`. 1 for `c < 1`.
    pub fn miss_ratio(&self, c: f64) -> f64 {
        match self.segment(c) {
            Some(j) => self.slopes[j].max(self.floor),
            None if self.distinct_lines.is_some() || self.slopes.is_empty() => self.floor,
            None => *self.slopes.last().expect("non-empty"),
        }
    }

    /// [`Filmer::miss_ratio`] without cold misses: `mr(c) − m/n` (same denominator).
    pub fn miss_ratio_warm(&self, c: f64) -> f64 {
        self.miss_ratio(c) - self.floor
    }

    /// `P(rd = c)` for HOTL's reuse distance `rd = sd + 1 ≥ 1`: `mr(c − 1) − mr(c)`, 0 for
    /// `c = 0`.
    pub fn reuse_distance_probability(&self, c: u64) -> f64 {
        if c == 0 {
            return 0.0;
        }
        self.miss_ratio((c - 1) as f64) - self.miss_ratio(c as f64)
    }

    /// Every non-zero `P(rd = c)`, by increasing `c`: the miss ratio only steps where a
    /// vertex of the majorant lies in `(c − 1, c]`. Sums to `mr(0) − m/n`, which is `1 − m/n`.
    pub fn reuse_distances(&self) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = Vec::new();
        for &y in &self.ys[1..] {
            let c = y.ceil() as u64;
            if out.last().is_some_and(|&(last, _)| last == c) {
                continue;
            }
            let p = self.reuse_distance_probability(c);
            if p > 0.0 {
                out.push((c, p));
            }
        }
        out
    }

    /// The converted distribution as stack distances (`sd = rd − 1`), for Smith's formula
    /// ([`crate::models::smith`]) and for [`footprint_from_distances`]. Method `hotl`.
    pub fn stack_distances(&self) -> Distances {
        Distances {
            method: "hotl".into(),
            line_size: self.line_size,
            refs: self.refs,
            cold: self.cold_ratio(),
            masses: self
                .reuse_distances()
                .into_iter()
                .map(|(rd, weight)| SdMass {
                    sd: rd - 1,
                    len: 1,
                    weight,
                })
                .collect(),
        }
    }

    /// The miss-ratio curve at `sizes_bytes` (method `hotl`, policy `lru`): `lines = size /
    /// line_size`, `miss_ratio` = [`Filmer::miss_ratio`] (left out for a sampled curve, which
    /// cannot count the trace's cold misses), `miss_ratio_warm` = `mr − m/n`.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        let points = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / self.line_size;
                let mr = self.miss_ratio(lines as f64);
                MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: self.distinct_lines.map(|_| mr),
                    miss_ratio_warm: mr - self.floor,
                }
            })
            .collect();
        Mrc {
            method: "hotl".into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points,
        }
    }
}

/// HOTL's miss-ratio curve of a trace at `sizes_bytes` (method `hotl`; see [`Filmer::mrc`]).
pub fn mrc(fp: &Footprint, sizes_bytes: &[u64]) -> Mrc {
    Filmer::new(fp).mrc(sizes_bytes)
}

/// The reverse conversion (HOTL §2.6, "integration"): the footprint implied by a
/// stack-distance distribution. `mr(c) = cold + Σ_{sd ≥ c} P(sd)` (the LRU miss ratio),
/// `vt(c) = Σ_{k < c} 1/mr(k)` (fill time: the sum of inter-miss times), `fp = vt⁻¹`.
///
/// The curve has a point at every cache size where `mr` steps: after each exact distance,
/// and at both ends of each binned one, across which `mr` falls linearly and `vt` is
/// integrated exactly. So [`Filmer::from_curve`] on the result gives back `mr` at every exact
/// size. The distribution must know its cold share; the curve ends at `c = m` (`m = cold·n`).
pub fn footprint_from_distances(d: &Distances) -> Result<FootprintCurve> {
    let Some(cold) = d.cold else {
        return Err(Error::InvalidParameter {
            name: "stack-distance distribution",
            message: "its cold share is unknown (a sampled distribution); the footprint it \
                      implies never reaches the trace's data size"
                .into(),
        });
    };
    let mut mr = cold + d.masses.iter().map(|m| m.weight).sum::<f64>();
    let (mut c, mut vt) = (0u64, 0.0f64);
    let mut points = Vec::with_capacity(2 * d.masses.len() + 1);
    for m in &d.masses {
        // Constant mr from c up to the distance m.sd + 1 at which this mass stops counting.
        let start = m.sd + 1;
        if start > c {
            vt += (start - c) as f64 / mr;
            c = start;
            points.push(CurvePoint {
                window: vt,
                footprint: c as f64,
            });
        }
        if m.len == 1 {
            mr -= m.weight;
            continue;
        }
        // Binned: mr falls by m.weight linearly over [start, start + len − 1]; ∫ dc / mr.
        let (len, end_mr) = ((m.len - 1) as f64, (mr - m.weight).max(f64::MIN_POSITIVE));
        vt += if m.weight > mr * 1e-12 {
            len / m.weight * (mr / end_mr).ln()
        } else {
            len / mr
        };
        c += m.len - 1;
        mr = end_mr;
        points.push(CurvePoint {
            window: vt,
            footprint: c as f64,
        });
    }
    let m = (cold * d.refs as f64).round() as u64;
    if m == 0 || d.line_size == 0 || !d.line_size.is_power_of_two() {
        return Err(Error::InvalidParameter {
            name: "stack-distance distribution",
            message: format!(
                "{} references with a cold share of {cold} and {}-byte lines: no trace to \
                 integrate",
                d.refs, d.line_size
            ),
        });
    }
    if m > c && mr > 0.0 {
        vt += (m - c) as f64 / mr;
        points.push(CurvePoint {
            window: vt,
            footprint: m as f64,
        });
    }
    Ok(FootprintCurve {
        line_size: d.line_size,
        refs: d.refs,
        distinct_lines: Some(m.max(1)),
        points,
    })
}
