//! The threads figure: each thread's exact LRU curve over its own references, on log axes
//! both ways: miss ratios of threads that fit their caches differ by orders of magnitude, and
//! on a linear axis they all lie on zero.

use cachescope::report::Report;
use cachescope::units::{axis_bytes, thousands};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{Axis, PALETTE, legend, line_chart, line_key};

/// The smallest miss ratio drawn: a curve at 0 (or below this) sits on the axis's floor.
const FLOOR: f64 = 1e-5;

/// One curve per thread, in thread order (as many colours as the palette has, then again).
pub(super) fn draw_threads<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(curves) = r.threads.as_ref().and_then(|t| t.curves.as_ref()) else {
        return Ok(());
    };
    let value = |p: &cachescope::reuse::MrcPoint| {
        p.miss_ratio.unwrap_or(p.miss_ratio_warm).max(FLOOR).log10()
    };
    let all = curves.threads.iter().flat_map(|t| t.points.iter());
    let (lo, hi) = all.clone().fold((f64::MAX, 0f64), |(lo, hi), p| {
        let x = (p.size_bytes as f64).log2();
        (lo.min(x), hi.max(x))
    });
    let (lo, hi) = if lo < hi { (lo, hi) } else { (10.0, 20.0) };
    // Whole decades from the lowest ratio drawn up to 1.
    let bottom = all.map(value).fold(0f64, f64::min).floor().min(-1.0);
    // A decade's label in percent: 100%, 10%, 1%, 0.1%, 0.01%, …
    let ratio = |v: f64| {
        let e = v.round() as i64 + 2;
        if e >= 0 {
            format!("{}%", 10u64.pow(e as u32))
        } else {
            format!("0.{}1%", "0".repeat((-e - 1) as usize))
        }
    };
    let mut chart = line_chart(
        root,
        lo..hi,
        bottom..0.05,
        Axis::log(
            "cache size (log2)",
            ((hi - lo) as usize + 1).min(24),
            &|v| axis_bytes(v.exp2()),
        ),
        Axis::log(
            "miss ratio (log10; 0 drawn at 0.001%)",
            (-bottom) as usize + 1,
            &ratio,
        ),
    )?;
    let mut colour = PALETTE.iter().cycle();
    for t in &curves.threads {
        let label = format!("thread {} ({} references)", t.thread, thousands(t.refs));
        let points: Vec<(f64, f64)> = t
            .points
            .iter()
            .map(|p| ((p.size_bytes as f64).log2(), value(p)))
            .collect();
        for (p, q) in t.points.iter().zip(&points) {
            super::hover::point(
                chart.backend_coord(q),
                format!(
                    "{label}: {} → {:.4} %",
                    axis_bytes(p.size_bytes as f64),
                    100.0 * p.miss_ratio.unwrap_or(p.miss_ratio_warm)
                ),
            );
        }
        let c = *colour.next().expect("cycle");
        chart
            .draw_series(DashedLineSeries::new(points, 6, 4, c.stroke_width(2)))?
            .label(label)
            .legend(line_key(c.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::LowerLeft)
}
