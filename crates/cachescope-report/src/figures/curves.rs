//! The miss-ratio curves figure: every method against the exact curves, on a log2 size axis;
//! [`draw_curves`] also draws the policies figure.

use cachescope::report::Report;
use cachescope::reuse::{Mrc, MrcPoint};
use cachescope::units::axis_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{Axis, GREY, PALETTE, legend, line_chart, line_key};

pub(super) fn draw_mrc<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    draw_curves(root, &r.mrc, |m| {
        let label = format!("{} {}", m.method, m.policy.to_uppercase());
        let style = match (m.method.as_str(), m.policy.as_str()) {
            ("exact", "lru") => Style::Reference,
            ("exact", _) => Style::Dots,
            _ => Style::Dashed,
        };
        (label, style)
    })
}

/// How a curve is drawn: the reference (bold black), grey dots, or a dashed colour.
pub(super) enum Style {
    Reference,
    Dots,
    Dashed,
}

/// Miss-ratio curves on a log2 size axis, each labelled and styled by `style`.
pub(super) fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    curves: &[Mrc],
    style: impl Fn(&Mrc) -> (String, Style),
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let value = |p: &MrcPoint| p.miss_ratio.unwrap_or(p.miss_ratio_warm);
    let all = curves.iter().flat_map(|m| m.points.iter());
    let (lo, hi) = all.clone().fold((f64::MAX, 0f64), |(lo, hi), p| {
        let x = (p.size_bytes as f64).log2();
        (lo.min(x), hi.max(x))
    });
    let ymax = all.map(value).fold(0f64, f64::max).clamp(0.01, 1.0) * 1.05;
    let (lo, hi) = if lo < hi { (lo, hi) } else { (10.0, 20.0) };
    let mut chart = line_chart(
        root,
        lo..hi,
        0f64..ymax,
        Axis::log(
            "cache size (log2)",
            ((hi - lo) as usize + 1).min(24),
            &|v| axis_bytes(v.exp2()),
        ),
        Axis::plain("miss ratio"),
    )?;
    let mut colour = PALETTE.iter().cycle();
    for m in curves {
        let points: Vec<(f64, f64)> = m
            .points
            .iter()
            .map(|p| ((p.size_bytes as f64).log2(), value(p)))
            .collect();
        let (label, style) = style(m);
        for (p, q) in m.points.iter().zip(&points) {
            super::hover::point(
                chart.backend_coord(q),
                format!(
                    "{label}: {} → {:.2} %",
                    axis_bytes(p.size_bytes as f64),
                    100.0 * q.1
                ),
            );
        }
        match style {
            Style::Reference => {
                chart
                    .draw_series(LineSeries::new(points, BLACK.stroke_width(3)))?
                    .label(label)
                    .legend(line_key(BLACK.stroke_width(3)));
            }
            Style::Dots => {
                chart.draw_series(LineSeries::new(points.clone(), GREY.stroke_width(1)))?;
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 4, GREY.filled())))?
                    .label(label)
                    .legend(|(x, y)| Circle::new((x + 10, y), 4, GREY.filled()));
            }
            Style::Dashed => {
                let c = *colour.next().expect("cycle");
                chart
                    .draw_series(DashedLineSeries::new(points, 6, 4, c.stroke_width(2)))?
                    .label(label)
                    .legend(line_key(c.stroke_width(2)));
            }
        }
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}
