//! [`Footprint`], the result of the footprint pass: `fp(w)` for any window from the sums the
//! pass left (see the parent module for the formula and its exactness).

use super::super::sums::{Tails, WindowSums};
use crate::error::Result;
use crate::reuse::sizes_log_range;

/// The average footprint `fp(w)` of a trace: one point.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FootprintPoint {
    /// Window length in references.
    pub window: u64,
    /// Average number of distinct lines in a window of that length.
    pub footprint: f64,
}

/// The result of a [`FootprintAnalysis`](super::FootprintAnalysis): `fp(w)` for every window length. Serialises as its
/// summary (`line_size`, `refs`, `distinct_lines`); the curve is [`Footprint::points`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct Footprint {
    /// Line size in bytes.
    pub line_size: u64,
    /// References counted, `n`.
    pub refs: u64,
    /// Distinct lines, `m` (also the cold misses of any cache).
    pub distinct_lines: u64,
    /// Reuse times `rt`, for the reuse-time conversion.
    #[serde(skip)]
    pub(crate) reuse: Tails,
    /// Reuse times, first positions `f` and reverse last positions `l` together.
    #[serde(skip)]
    all: Tails,
    /// Windows with exact partial sums.
    #[serde(skip)]
    listed: Vec<u64>,
}

impl Footprint {
    /// Builds the footprint from its sums.
    pub(crate) fn from_sums(
        line_size: u64,
        refs: u64,
        distinct_lines: u64,
        reuse: WindowSums,
        first: WindowSums,
        last: WindowSums,
        listed: Vec<u64>,
    ) -> Footprint {
        Footprint {
            line_size,
            refs,
            distinct_lines,
            all: Tails::new(&[&reuse, &first, &last]),
            reuse: Tails::new(&[&reuse]),
            listed,
        }
    }

    /// `fp(w)`: exact where the [module documentation](super) says, the midpoint of
    /// [`Footprint::fp_bounds`] elsewhere. `fp(0) = 0`, and `fp(w) = m` for `w ≥ n`.
    pub fn fp(&self, w: u64) -> f64 {
        let (low, high) = self.fp_bounds(w);
        0.5 * (low + high)
    }

    /// Bounds on `fp(w)`, equal where it is exact.
    pub fn fp_bounds(&self, w: u64) -> (f64, f64) {
        let (n, m) = (self.refs, self.distinct_lines as f64);
        if w == 0 {
            return (0.0, 0.0);
        }
        if w >= n {
            return (m, m);
        }
        let e = self.all.excess(w);
        let windows = (n - w + 1) as f64;
        // More excess, fewer lines.
        (
            (m - e.high / windows).max(0.0),
            (m - e.low / windows).max(0.0),
        )
    }

    /// True when [`Footprint::fp`] is exact at `w`.
    pub fn is_exact(&self, w: u64) -> bool {
        let (low, high) = self.fp_bounds(w);
        low == high
    }

    /// `fp` on the logarithmic grid: windows `2^k·(1 + i/per_octave)` from 1 to `n` (HOTL
    /// §4.1; with `per_octave` = 256 every window below 512, then steps of 1/256), and `n`
    /// itself. Exact at every point. Errors unless `per_octave` is a power of two from 1 to
    /// 256; empty for an empty trace.
    pub fn points(&self, per_octave: u64) -> Result<Vec<FootprintPoint>> {
        if self.refs == 0 {
            sizes_log_range(1, 1, per_octave)?;
            return Ok(Vec::new());
        }
        Ok(sizes_log_range(1, self.refs, per_octave)?
            .into_iter()
            .map(|window| FootprintPoint {
                window,
                footprint: self.fp(window),
            })
            .collect())
    }

    /// `fp` at the windows listed to [`FootprintAnalysis::new`](super::FootprintAnalysis::new) (sorted, each once), exact.
    pub fn listed(&self) -> Vec<FootprintPoint> {
        self.listed
            .iter()
            .map(|&window| FootprintPoint {
                window,
                footprint: self.fp(window),
            })
            .collect()
    }

    /// Reuses with reuse time `≥ t` (exact when `t` starts a bin of the layout: every `t`
    /// below the exact limit and every window of the 256-per-octave grid; interpolated
    /// inside a bin otherwise).
    pub fn reuses_at_least(&self, t: u64) -> f64 {
        self.reuse.count_at_least(t)
    }
}
