//! The phase timeline: the L2 hit rate per interval over the colour of its phase.

use cachescope::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{Axis, human_count, legend, line_chart, line_key};

/// Light phase colours for the timeline's background.
const PHASE_COLOURS: [RGBColor; 6] = [
    RGBColor(204, 229, 255),
    RGBColor(255, 221, 170),
    RGBColor(204, 238, 204),
    RGBColor(255, 204, 221),
    RGBColor(221, 221, 255),
    RGBColor(238, 238, 187),
];

pub(super) fn draw_phases<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(p) = &r.phases else { return Ok(()) };
    let n = p.intervals.len().max(1) as f64;
    let x_desc = format!(
        "interval ({} {} each)",
        human_count(p.interval as f64),
        p.unit
    );
    let mut chart = line_chart(
        root,
        0f64..n,
        0f64..1.05,
        Axis::plain(&x_desc),
        Axis::plain("L2 hit rate"),
    )?;
    chart.draw_series(p.intervals.iter().enumerate().map(|(i, iv)| {
        Rectangle::new(
            [(i as f64, 0.0), (i as f64 + 1.0, 1.05)],
            PHASE_COLOURS[iv.phase % PHASE_COLOURS.len()].filled(),
        )
    }))?;
    for phase in 0..p.k {
        let colour = PHASE_COLOURS[phase % PHASE_COLOURS.len()];
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())?
            .label(format!("{} phase {phase}", p.timeline_method))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            p.intervals
                .iter()
                .enumerate()
                .map(|(i, iv)| (i as f64 + 0.5, iv.l2_hit_rate)),
            BLACK.stroke_width(2),
        ))?
        .label(format!("L2 hit rate ({})", p.l2))
        .legend(line_key(BLACK.stroke_width(2)));
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}
