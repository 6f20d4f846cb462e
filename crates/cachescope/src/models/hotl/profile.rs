//! HOTL's footprint from StatCache's samples (`cachescope::sampling`), for a sampled report
//! (docs/sampled.md), whose spatial sample holds too few lines of a small program.
//!
//! The average footprint of windows of `w` references counts, in each window, the references
//! whose line is not referenced again inside it. So with `X_i` the forward reuse time of the
//! reference at position `i` (`∞` for a line's last) and `n` references,
//!
//! `fp(w) = Σ_i c_i(w) / (n − w + 1)`, `c_i(w) = #{windows of w holding i but not i + X_i}`
//!
//! `= max(0, min(i, n − w + 1, i + X_i − w) − max(1, i − w + 1) + 1)`, which is `min(X_i, w)`
//! away from the trace's ends (Denning & Schwartz 1972; HOTL §2.7). Each sampled reference is
//! a draw of `(i, X_i)` (`X = distance + 1`, or `∞` for a dangling sample), so the samples'
//! mean of `c_i(w)` times `n` estimates the sum without bias. (The Xiang formula from the
//! same samples would subtract sums of order `n·m` from one another and lose the footprint of
//! short windows in their sampling error; this form does not.) `fp` is computed on a grid of
//! windows, 8 per octave, and interpolated between them. The fill time is `fp⁻¹(c)` and the
//! miss ratio at `c` lines `P(X > fp⁻¹(c))`: the reuse-time conversion, first references
//! included (their `X` is infinite).

use crate::reuse::{Mrc, MrcPoint, sizes_log_range};
use crate::sampling::{NextUse, Profile};

/// The footprint a profile's samples estimate; see the module documentation.
#[derive(Clone, Debug)]
pub struct ProfileFootprint {
    /// Finite forward reuse times, sorted.
    times: Vec<u64>,
    /// Samples in all (the dangling ones have `X = ∞`).
    samples: f64,
    /// `(w, fp(w))` on the grid, `w` increasing from 1 to `n`.
    grid: Vec<(f64, f64)>,
    line_size: u64,
}

impl ProfileFootprint {
    /// The estimate from `profile`.
    pub fn new(profile: &Profile) -> ProfileFootprint {
        let n = profile.refs();
        let draws: Vec<(u64, Option<u64>)> = profile
            .samples()
            .iter()
            .map(|s| match s.next {
                NextUse::Reuse { distance } => (s.position, Some(distance + 1)),
                NextUse::Dangling { .. } => (s.position, None),
            })
            .collect();
        let mut times: Vec<u64> = draws.iter().filter_map(|d| d.1).collect();
        times.sort_unstable();
        let samples = draws.len() as f64;
        let windows = if n == 0 {
            Vec::new()
        } else {
            sizes_log_range(1, n, 8).unwrap_or_default()
        };
        let grid = holding_sums(&draws, &windows, n)
            .into_iter()
            .zip(&windows)
            .map(|(sum, &w)| {
                let fp = sum as f64 / samples.max(1.0) * n as f64 / (n - w + 1) as f64;
                (w as f64, fp)
            })
            .collect();
        ProfileFootprint {
            times,
            samples,
            grid,
            line_size: profile.line_size().bytes(),
        }
    }

    /// `fp(w)` in lines, interpolated between the grid's windows.
    pub fn fp(&self, w: f64) -> f64 {
        let at = self.grid.partition_point(|&(x, _)| x < w);
        match (at.checked_sub(1).map(|i| self.grid[i]), self.grid.get(at)) {
            (_, Some(&(x, f))) if x == w => f,
            (Some((x0, f0)), Some(&(x1, f1))) => f0 + (f1 - f0) * (w - x0) / (x1 - x0),
            (None, Some(&(x, f))) => f * w / x,
            (Some((_, f)), None) => f,
            (None, None) => 0.0,
        }
    }

    /// `P(X > t)`: the share of references whose line is not referenced within `t` more.
    pub fn longer_than(&self, t: f64) -> f64 {
        if self.samples == 0.0 {
            return 0.0;
        }
        let upto = self.times.partition_point(|&x| (x as f64) <= t);
        (self.samples - upto as f64) / self.samples
    }

    /// The fill time of `c` lines, `fp⁻¹(c)`: infinite when no window of the trace holds
    /// that many lines on average.
    pub fn fill_time(&self, c: f64) -> f64 {
        if c <= 0.0 {
            return 0.0;
        }
        let at = self.grid.partition_point(|&(_, f)| f < c);
        match (at.checked_sub(1).map(|i| self.grid[i]), self.grid.get(at)) {
            (Some((x0, f0)), Some(&(x1, f1))) if f1 > f0 => x0 + (x1 - x0) * (c - f0) / (f1 - f0),
            (_, Some(&(x, _))) => x,
            (_, None) => f64::INFINITY,
        }
    }
    /// The miss ratio at `c` lines, first references included: `P(X > fp⁻¹(c))`.
    pub fn miss_ratio(&self, c: f64) -> f64 {
        let t = self.fill_time(c);
        if t.is_finite() {
            self.longer_than(t)
        } else {
            self.longer_than(f64::INFINITY)
        }
    }

    /// The footprint conversion's miss ratio at `c` lines: the slope of `fp` at the fill
    /// time (between the grid's windows around it); the whole trace's cold share beyond the
    /// footprint.
    pub fn slope_miss_ratio(&self, c: f64) -> f64 {
        let t = self.fill_time(c);
        let at = self.grid.partition_point(|&(x, _)| x <= t);
        match (at.checked_sub(1).map(|i| self.grid[i]), self.grid.get(at)) {
            (Some((x0, f0)), Some(&(x1, f1))) if t.is_finite() => ((f1 - f0) / (x1 - x0)).max(0.0),
            _ => self.longer_than(f64::INFINITY),
        }
    }

    /// The footprint conversion's curve at `sizes_bytes` ([`ProfileFootprint::slope_miss_ratio`],
    /// method `hotl`, policy `lru`), cold misses the dangling samples' share.
    pub fn footprint_mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        self.curve("hotl", sizes_bytes, |c| self.slope_miss_ratio(c))
    }

    /// The reuse-time conversion's curve at `sizes_bytes` (method `hotl-rt`, policy `lru`);
    /// `miss_ratio_warm` leaves out the dangling samples' share, the cold misses.
    pub fn mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        self.curve("hotl-rt", sizes_bytes, |c| self.miss_ratio(c))
    }

    fn curve(&self, method: &str, sizes_bytes: &[u64], ratio: impl Fn(f64) -> f64) -> Mrc {
        let cold = self.longer_than(f64::INFINITY);
        Mrc {
            method: method.into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points: sizes_bytes
                .iter()
                .map(|&s| {
                    let lines = s / self.line_size;
                    let m = ratio(lines as f64).min(1.0);
                    MrcPoint {
                        size_bytes: s,
                        lines,
                        miss_ratio: Some(m),
                        miss_ratio_warm: (m - cold).max(0.0),
                    }
                })
                .collect(),
        }
    }
}

/// The windows of `w` references, among the `n − w + 1` of a trace of `n`, that hold the
/// reference at 1-based position `i` and not its line's next reference, `x` later (`None`:
/// none follows).
fn windows_holding(i: u64, x: Option<u64>, w: u64, n: u64) -> u64 {
    let lo = i.saturating_sub(w - 1).max(1);
    let mut hi = i.min(n - w + 1);
    if let Some(x) = x {
        // The window must end before `i + x`: start at most `i + x − w`.
        match (i + x).checked_sub(w) {
            Some(last) => hi = hi.min(last),
            None => return 0,
        }
    }
    (hi + 1).saturating_sub(lo)
}

/// `Σ windows_holding(i, x, w, n)` over `draws` at each of `windows` (increasing, within
/// `1..=n`). A draw's count is linear in `w` between the points where the terms of its min and
/// max cross (`w` = `i`, `x`, `n + 1 − i`, `i + x`), so it adds one line per stretch between
/// them to the windows there (difference arrays over the grid): a few evaluations a draw
/// instead of one per window, the same integers (the grid has ~250 windows, a profile up to
/// 2^17 draws: this sum was the sampled report's longest step after its run).
fn holding_sums(draws: &[(u64, Option<u64>)], windows: &[u64], n: u64) -> Vec<u64> {
    let g = windows.len();
    let (mut intercepts, mut slopes) = (vec![0i128; g + 1], vec![0i128; g + 1]);
    for &(i, x) in draws {
        let kinks = [
            Some(i),
            Some((n + 1).saturating_sub(i)),
            x,
            x.map(|x| i + x),
        ];
        // Each kink and the window after it start a stretch, so none straddles one.
        let (mut cuts, mut len) = ([1u64; 10], 1);
        for k in kinks.into_iter().flatten().flat_map(|k| [k, k + 1]) {
            if (1..=n).contains(&k) {
                cuts[len] = k;
                len += 1;
            }
        }
        cuts[len] = n + 1;
        let cuts = &mut cuts[..=len];
        cuts.sort_unstable();
        // The first window of each stretch: searched once per cut.
        let mut firsts = [0usize; 10];
        for (f, &c) in firsts.iter_mut().zip(cuts.iter()) {
            *f = windows.partition_point(|&w| w < c);
        }
        for j in 0..len {
            let ((lo, hi), (first, end)) = ((cuts[j], cuts[j + 1]), (firsts[j], firsts[j + 1]));
            if first == end {
                continue;
            }
            let at = windows_holding(i, x, lo, n) as i128;
            let slope = if hi - lo >= 2 {
                windows_holding(i, x, lo + 1, n) as i128 - at
            } else {
                0
            };
            let intercept = at - slope * lo as i128;
            intercepts[first] += intercept;
            intercepts[end] -= intercept;
            slopes[first] += slope;
            slopes[end] -= slope;
        }
    }
    let (mut a, mut b) = (0i128, 0i128);
    windows
        .iter()
        .enumerate()
        .map(|(k, &w)| {
            a += intercepts[k];
            b += slopes[k];
            (a + b * w as i128) as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analysis;
    use crate::models::hotl::FootprintAnalysis;
    use crate::reuse::Options;
    use crate::sampling::{Sampler, SamplerOptions};
    use crate::{Access, Batch};
    use proptest::prelude::*;

    proptest! {
        /// The stretches' lines add up to the count evaluated at every window.
        #[test]
        fn holding_sums_equal_the_sum_at_each_window(
            n in 1u64..400,
            draws in proptest::collection::vec((0u64..1000, proptest::option::of(1u64..500)), 0..40),
        ) {
            let draws: Vec<(u64, Option<u64>)> =
                draws.into_iter().map(|(i, x)| (i % n + 1, x)).collect();
            let windows = crate::reuse::sizes_log_range(1, n, 8).unwrap();
            let fast = holding_sums(&draws, &windows, n);
            for (k, &w) in windows.iter().enumerate() {
                let slow: u64 = draws.iter().map(|&(i, x)| windows_holding(i, x, w, n)).sum();
                prop_assert_eq!(fast[k], slow, "w {}", w);
            }
        }

        /// Every reference sampled: the estimate is the exact average footprint at every
        /// window of its grid.
        #[test]
        fn rate_one_is_the_exact_footprint(lines in proptest::collection::vec(0u64..60, 1..600)) {
            let batch: Batch = lines.iter().map(|&l| Access::load(l * 64, 4)).collect();
            let mut sampler = Sampler::new(SamplerOptions { rate: 1.0, ..SamplerOptions::default() }).unwrap();
            let mut exact = FootprintAnalysis::new(Options::default(), &[]).unwrap();
            sampler.observe(&batch);
            exact.observe(&batch);
            let (est, fp) = (ProfileFootprint::new(&sampler.finish()), exact.finish());
            for &(w, f) in &est.grid {
                prop_assert!((f - fp.fp(w as u64)).abs() < 1e-9 * f.max(1.0), "w {} {} {}", w, f, fp.fp(w as u64));
            }
        }
    }
}
