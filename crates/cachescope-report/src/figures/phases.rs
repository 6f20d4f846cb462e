//! The phase timeline: the L2 hit rate per interval over the colour of its phase, its legend
//! beside the plot (inside, it covered the line), each interval's values on hover.

use cachescope::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axes::{Axis, FONT_SIZE, human_count, line_chart};
use super::{Drawn, WIDTH, hover};

/// Width of the legend column right of the plot.
const LEGEND: u32 = 200;

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
    let (plot, side) = root.split_horizontally(WIDTH - LEGEND);
    let mut chart = line_chart(
        &plot,
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
    chart.draw_series(LineSeries::new(
        p.intervals
            .iter()
            .enumerate()
            .map(|(i, iv)| (i as f64 + 0.5, iv.l2_hit_rate)),
        BLACK.stroke_width(2),
    ))?;
    for (i, iv) in p.intervals.iter().enumerate() {
        let (x0, y0) = chart.backend_coord(&(i as f64, 1.05));
        let (x1, y1) = chart.backend_coord(&(i as f64 + 1.0, 0.0));
        hover::rect(
            (x0, y0),
            (x1, y1),
            format!(
                "interval {}: L2 hit rate {:.2} %, {} phase {}",
                iv.index,
                100.0 * iv.l2_hit_rate,
                p.timeline_method,
                iv.phase
            ),
        );
    }
    // The legend in its own column: the line's key, then one swatch per phase.
    let font = ("sans-serif", FONT_SIZE - 2).into_font();
    let row = |i: i32| 24 + 22 * i;
    side.draw(&PathElement::new(
        [(8, row(0)), (28, row(0))],
        BLACK.stroke_width(2),
    ))?;
    side.draw(&Text::new(
        format!("L2 hit rate ({})", p.l2),
        (34, row(0) - 8),
        font.clone(),
    ))?;
    for phase in 0..p.k {
        let colour = PHASE_COLOURS[phase % PHASE_COLOURS.len()];
        let y = row(phase as i32 + 1);
        side.draw(&Rectangle::new([(8, y - 6), (28, y + 6)], colour.filled()))?;
        side.draw(&Text::new(
            format!("{} phase {phase}", p.timeline_method),
            (34, y - 8),
            font.clone(),
        ))?;
    }
    Ok(())
}
