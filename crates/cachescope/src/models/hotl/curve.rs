//! [`FootprintCurve`]: a footprint as points, linear in between: what the conversions, the
//! co-run model and saved profiles work on, whatever produced it (a whole-trace
//! [`Footprint`], averaged samples, or the integral of a reuse-distance distribution).

use super::footprint::Footprint;
use crate::error::{Error, Result};

/// One point of a [`FootprintCurve`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    /// Window length in references (fractional where the curve was integrated).
    pub window: f64,
    /// Average distinct lines in a window of that length.
    pub footprint: f64,
}

/// A footprint curve `fp(w)`, linear between its points; `fp(0) = 0` is implied. Field names
/// are a public contract (saved co-run profiles).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FootprintCurve {
    /// Line size in bytes.
    pub line_size: u64,
    /// References the curve describes: the trace length `n` for a whole trace, the sampled
    /// references for a sampled curve.
    pub refs: u64,
    /// For a whole trace, its distinct lines `m` (its cold misses, so the conversions put
    /// the miss ratio of a cache that holds everything at `m/n`); `None` for a sampled curve,
    /// which cannot know them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_lines: Option<u64>,
    /// Points by increasing window.
    pub points: Vec<CurvePoint>,
}

impl FootprintCurve {
    /// The curve of a whole trace: `fp` at every window of [`Footprint::points`] (the grid
    /// with `per_octave` windows per power of two, up to `n`).
    pub fn from_footprint(fp: &Footprint, per_octave: u64) -> Result<FootprintCurve> {
        let windows: Vec<u64> = fp.points(per_octave)?.iter().map(|p| p.window).collect();
        Ok(FootprintCurve::at_windows(fp, &windows))
    }

    /// The curve of a whole trace at `windows` (increasing, positive).
    pub(crate) fn at_windows(fp: &Footprint, windows: &[u64]) -> FootprintCurve {
        let points = windows
            .iter()
            .map(|&w| CurvePoint {
                window: w as f64,
                footprint: fp.fp(w),
            })
            .collect();
        FootprintCurve {
            line_size: fp.line_size,
            refs: fp.refs,
            distinct_lines: Some(fp.distinct_lines),
            points,
        }
    }

    /// Checks what the conversions rely on: a valid line size, at least one point, windows
    /// positive, finite and strictly increasing, footprints finite and non-negative,
    /// `0 < m ≤ n`.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Error::InvalidParameter {
            name: "footprint curve",
            message,
        };
        crate::access::LineSize::new(self.line_size)?;
        if self.points.is_empty() {
            return Err(bad("no points".into()));
        }
        let mut prev = 0.0;
        for p in &self.points {
            if !(p.window.is_finite() && p.window > prev) {
                return Err(bad(format!(
                    "window {} does not follow {prev}: windows must be positive and increase",
                    p.window
                )));
            }
            if !(p.footprint.is_finite() && p.footprint >= 0.0) {
                return Err(bad(format!(
                    "footprint {} at window {} is not a non-negative number",
                    p.footprint, p.window
                )));
            }
            prev = p.window;
        }
        if let Some(m) = self.distinct_lines
            && (m > self.refs || m == 0)
        {
            return Err(bad(format!(
                "{m} distinct lines in {} references",
                self.refs
            )));
        }
        Ok(())
    }

    /// `fp(w)`, linear between points, constant past the last one.
    pub fn fp(&self, w: f64) -> f64 {
        interpolate(&self.points, w)
    }
}

/// The value at `w` of the polyline through (0, 0) and `points`, constant past the last.
pub(crate) fn interpolate(points: &[CurvePoint], w: f64) -> f64 {
    let i = points.partition_point(|p| p.window <= w);
    let (x0, y0) = match i {
        0 => (0.0, 0.0),
        _ => (points[i - 1].window, points[i - 1].footprint),
    };
    match points.get(i) {
        Some(p) if w > x0 => y0 + (p.footprint - y0) * (w - x0) / (p.window - x0),
        _ => y0,
    }
}
