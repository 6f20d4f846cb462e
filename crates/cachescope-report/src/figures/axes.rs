//! What every figure shares: font size, colours, the chart frame with its label areas, axes
//! whose ticks fall on powers (a logarithmic axis is a linear axis over `log2` or `log10` of
//! the value), legends, and the short labels of counts and powers of two. Byte sizes are
//! labelled by `cachescope::units::axis_bytes`, one definition with the command line.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, SegmentedCoord};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Drawn, Plotted};

pub(super) const FONT_SIZE: u32 = 15;

/// Series colours (Okabe–Ito, distinguishable with colour blindness), after black for exact.
pub(super) const PALETTE: [RGBColor; 6] = [
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
];
pub(super) const GREY: RGBColor = RGBColor(120, 120, 120);

/// `1e6` → `1M`: counts on axes.
pub(super) fn human_count(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.0}G", n / 1e9),
        n if n >= 1e6 => format!("{:.0}M", n / 1e6),
        n if n >= 1e3 => format!("{:.0}K", n / 1e3),
        n => format!("{n:.0}"),
    }
}

pub(super) fn is_integer(v: f64) -> bool {
    (v - v.round()).abs() < 1e-6
}

/// Label areas and a white background for the legend.
pub(super) fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    pos: SeriesLabelPosition,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", FONT_SIZE - 2))
        .draw()?;
    Ok(())
}

/// A chart over two axes of plotters' coordinate types.
pub(super) type Chart<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// A chart with the margins and label areas of every figure but the heatmap.
pub(super) fn chart_on<'a, DB: DrawingBackend, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<DB, Shift>,
    x: X,
    y: Y,
) -> Plotted<Chart<'a, DB, X::CoordDescType, Y::CoordDescType>>
where
    DB::ErrorType: 'static,
{
    Ok(ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)?)
}

/// One axis of a line chart.
pub(super) struct Axis<'f> {
    desc: &'f str,
    /// How many ticks, and the label of a tick at a whole number (the powers of a log axis;
    /// ticks in between stay blank). `None` keeps plotters' default ticks and numbers.
    ticks: Option<(usize, &'f dyn Fn(f64) -> String)>,
}

impl<'f> Axis<'f> {
    pub(super) fn plain(desc: &'f str) -> Self {
        Axis { desc, ticks: None }
    }

    pub(super) fn log(desc: &'f str, ticks: usize, label: &'f dyn Fn(f64) -> String) -> Self {
        Axis {
            desc,
            ticks: Some((ticks, label)),
        }
    }
}

/// The set-up of a line chart: its area over `xs` × `ys` and its mesh with both axes labelled.
pub(super) fn line_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    xs: std::ops::Range<f64>,
    ys: std::ops::Range<f64>,
    x: Axis,
    y: Axis,
) -> Plotted<Chart<'a, DB, RangedCoordf64, RangedCoordf64>>
where
    DB::ErrorType: 'static,
{
    let mut chart = chart_on(root, xs, ys)?;
    let whole = |label: &dyn Fn(f64) -> String, v: f64| {
        if is_integer(v) {
            label(v)
        } else {
            String::new()
        }
    };
    let x_label = |v: &f64| x.ticks.map_or_else(String::new, |(_, f)| whole(f, *v));
    let y_label = |v: &f64| y.ticks.map_or_else(String::new, |(_, f)| whole(f, *v));
    let mut mesh = chart.configure_mesh();
    if let Some((n, _)) = x.ticks {
        mesh.x_labels(n).x_label_formatter(&x_label);
    }
    if let Some((n, _)) = y.ticks {
        mesh.y_labels(n).y_label_formatter(&y_label);
    }
    mesh.x_desc(x.desc)
        .y_desc(y.desc)
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    Ok(chart)
}

/// The legend key of a line series.
pub(super) fn line_key(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style)
}

/// Whole-number bounds around `points`, never empty.
pub(super) fn bounds(points: &[(f64, f64)]) -> (f64, f64, f64, f64) {
    let (mut xlo, mut xhi, mut ylo, mut yhi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        xlo = xlo.min(x);
        xhi = xhi.max(x);
        ylo = ylo.min(y);
        yhi = yhi.max(y);
    }
    if points.is_empty() {
        return (0.0, 1.0, 0.0, 1.0);
    }
    let (xlo, mut xhi) = (xlo.floor(), xhi.ceil());
    let (ylo, mut yhi) = (ylo.floor(), yhi.ceil());
    if xhi <= xlo {
        xhi = xlo + 1.0;
    }
    if yhi <= ylo {
        yhi = ylo + 1.0;
    }
    (xlo, xhi, ylo, yhi)
}

/// `n` categories `0..n` on an axis (plotters' segmented ranges include their end).
pub(super) fn segments(n: usize) -> SegmentedCoord<plotters::coord::types::RangedCoordusize> {
    (0..n.max(1) - 1).into_segmented()
}

/// Powers of two as short labels: `2^10` for large ones.
pub(super) fn power_label(lo: u64) -> String {
    if lo < 1024 {
        lo.to_string()
    } else {
        format!("2^{}", lo.ilog2())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels() {
        assert_eq!(human_count(2_000_000.0), "2M");
        assert_eq!(human_count(1500.0), "2K");
        assert_eq!(human_count(999.0), "999");
        assert_eq!(power_label(512), "512");
        assert_eq!(power_label(4096), "2^12");
    }
}
