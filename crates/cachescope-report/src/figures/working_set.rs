//! The working-set graph and the fill-time figure, both from HOTL's footprint, on log axes.

use cachescope::report::Report;
use cachescope::units::axis_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{Axis, PALETTE, bounds, human_count, legend, line_chart, line_key, power_label};

pub(super) fn draw_working_set<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let points: Vec<(f64, f64)> = r
        .working_set
        .iter()
        .filter(|p| p.window > 0 && p.bytes > 0.0)
        .map(|p| ((p.window as f64).log2(), p.bytes.log2()))
        .collect();
    let (xlo, xhi, ylo, yhi) = bounds(&points);
    let mut chart = line_chart(
        root,
        xlo..xhi,
        ylo..yhi,
        Axis::log(
            "window length w (references, log2)",
            ((xhi - xlo) as usize + 1).min(16),
            &|v| power_label(v.exp2() as u64),
        ),
        Axis::log(
            "working set fp(w) (bytes, log2)",
            ((yhi - ylo) as usize + 1).min(12),
            &|v| axis_bytes(v.exp2()),
        ),
    )?;
    chart
        .draw_series(LineSeries::new(points, PALETTE[4].stroke_width(3)))?
        .label("average footprint")
        .legend(line_key(PALETTE[4].stroke_width(3)));
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}

pub(super) fn draw_fill_time<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let fill: Vec<(f64, f64)> = r
        .fill_time
        .iter()
        .filter(|p| p.fill_time > 0.0)
        .map(|p| ((p.size_bytes as f64).log2(), p.fill_time.log10()))
        .collect();
    let inter: Vec<(f64, f64)> = r
        .fill_time
        .iter()
        .filter(|p| p.inter_miss_time > 0.0)
        .map(|p| ((p.size_bytes as f64).log2(), p.inter_miss_time.log10()))
        .collect();
    let both: Vec<(f64, f64)> = fill.iter().chain(&inter).copied().collect();
    let (xlo, xhi, ylo, yhi) = bounds(&both);
    let mut chart = line_chart(
        root,
        xlo..xhi,
        ylo..yhi,
        Axis::log(
            "cache size (log2)",
            ((xhi - xlo) as usize + 1).min(20),
            &|v| axis_bytes(v.exp2()),
        ),
        Axis::log(
            "references (log10)",
            ((yhi - ylo) as usize + 1).min(12),
            &|v| human_count(10f64.powf(v)),
        ),
    )?;
    chart
        .draw_series(LineSeries::new(fill, PALETTE[4].stroke_width(3)))?
        .label("fill time")
        .legend(line_key(PALETTE[4].stroke_width(3)));
    chart
        .draw_series(LineSeries::new(inter, PALETTE[5].stroke_width(3)))?
        .label("inter-miss time")
        .legend(line_key(PALETTE[5].stroke_width(3)));
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}
