//! The reuse-time conversion (HOTL §2.7, the "augmented Denning–Schwartz" formula):
//!
//! `mr_rt(c) = P(rt > vt(c))`, first references counted as misses (`rt = ∞`),
//!
//! with `vt = fp⁻¹` the Filmer fill time. A reuse is predicted to miss in a cache of `c` lines
//! iff its window's average footprint exceeds `c`. With `rt = i − j` (docs/definitions.md)
//! this is the form that Theorem 2.2 proves equal to the footprint conversion for `n ≫ w`;
//! the paper's worked example counts a reuse window's length as `i − j + 1`, one more.
//!
//! Cold misses: `miss_ratio = (m + #{rt > vt(c)}) / n`, `miss_ratio_warm = #{rt > vt(c)} / n`.
//! `#{rt > t}` is exact where `⌊t⌋ + 1` starts a bin of the reuse-time histogram (every `t`
//! below its exact limit) and interpolated inside a bin otherwise.

use super::filmer::Filmer;
use super::footprint::Footprint;
use super::sums::WindowSums;
use crate::reuse::{LogHistogram, Mrc, MrcPoint, ReuseTimes};

impl Footprint {
    /// The footprint implied by exact reuse-time histograms ([`crate::reuse::ReuseTimeAnalysis`]).
    /// Those keep counts only, so a binned value (at or above the layout's exact limit) is
    /// taken at its bin's middle: each is off by less than 1/512 of itself, and `fp` by at
    /// most as much of the excess `Σ (x − w)⁺`; below the limit nothing is approximated.
    pub fn from_reuse_times(rt: &ReuseTimes) -> Footprint {
        let layout = rt.reuse_time.layout();
        let sums = |h: &LogHistogram| {
            let mut s = WindowSums::new(layout, &[]);
            for b in h.bins() {
                let twice_mid = 2 * u128::from(b.start) + u128::from(b.len - 1);
                s.add_bin(b.start, b.len, b.count, u128::from(b.count) * twice_mid / 2);
            }
            s
        };
        Footprint::from_sums(
            rt.line_size,
            rt.refs,
            rt.distinct_lines,
            sums(&rt.reuse_time),
            sums(&rt.first),
            sums(&rt.last),
            Vec::new(),
        )
    }

    /// The reuse-time conversion's miss ratio at `c` lines, cold misses included (module
    /// documentation); `filmer` must be this footprint's ([`Filmer::new`]).
    pub fn reuse_time_miss_ratio(&self, filmer: &Filmer, c: f64) -> f64 {
        let n = self.refs.max(1) as f64;
        (self.distinct_lines as f64 + self.reuses_longer_than(filmer.fill_time(c))) / n
    }

    /// Reuses with `rt > t` (`t` real, possibly infinite).
    fn reuses_longer_than(&self, t: f64) -> f64 {
        if !t.is_finite() || t >= self.refs as f64 {
            return 0.0;
        }
        self.reuses_at_least(t.max(0.0).floor() as u64 + 1)
    }

    /// The reuse-time conversion's curve (method `hotl-rt`, policy `lru`).
    pub fn reuse_time_mrc(&self, sizes_bytes: &[u64]) -> Mrc {
        let filmer = Filmer::new(self);
        let n = self.refs.max(1) as f64;
        let points = sizes_bytes
            .iter()
            .map(|&size_bytes| {
                let lines = size_bytes / self.line_size;
                let warm = self.reuses_longer_than(filmer.fill_time(lines as f64)) / n;
                MrcPoint {
                    size_bytes,
                    lines,
                    miss_ratio: Some(warm + self.distinct_lines as f64 / n),
                    miss_ratio_warm: warm,
                }
            })
            .collect();
        Mrc {
            method: "hotl-rt".into(),
            policy: "lru".into(),
            line_size: self.line_size,
            points,
        }
    }
}

/// The reuse-time conversion of exact reuse-time histograms at `sizes_bytes` (method
/// `hotl-rt`): [`Footprint::from_reuse_times`], then [`Footprint::reuse_time_mrc`].
pub fn reuse_time_mrc(rt: &ReuseTimes, sizes_bytes: &[u64]) -> Mrc {
    Footprint::from_reuse_times(rt).reuse_time_mrc(sizes_bytes)
}
