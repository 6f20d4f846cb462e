//! The 3C figure: misses of the simulated set-associative caches stacked by class, with
//! Smith's estimate over them.

use cachescope::report::Report;
use cachescope::report::model::ThreeCPoint;
use cachescope::units::axis_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{FONT_SIZE, GREY, PALETTE, chart_on, legend, line_key, segments};

/// A miss class of the 3C figure: its name, colour and count.
type MissClass = (&'static str, RGBColor, fn(&ThreeCPoint) -> u64);

pub(super) fn draw_three_c<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let pts = &r.three_c.points;
    let n = pts.len().max(1);
    let ratio = |count: u64, refs: u64| count as f64 / refs.max(1) as f64;
    let ymax = pts
        .iter()
        .map(|p| ratio(p.misses, p.refs).max(p.smith_miss_ratio))
        .fold(0.01f64, f64::max)
        * 1.1;
    let mut chart = chart_on(root, segments(n), 0f64..ymax)?;
    let labels: Vec<String> = pts
        .iter()
        .map(|p| axis_bytes(p.size_bytes as f64))
        .collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(format!("cache size ({}-way LRU)", r.three_c.ways))
        .y_desc("misses per reference")
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    let classes: [MissClass; 3] = [
        ("cold", GREY, |p| p.cold),
        ("capacity", PALETTE[4], |p| p.capacity),
        ("conflict", PALETTE[5], |p| p.conflict),
    ];
    for (c, &(name, colour, count)) in classes.iter().enumerate() {
        chart
            .draw_series(pts.iter().enumerate().map(|(i, p)| {
                let below: u64 = classes[..c].iter().map(|(_, _, f)| f(p)).sum();
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), ratio(below, p.refs)),
                        (SegmentValue::Exact(i + 1), ratio(below + count(p), p.refs)),
                    ],
                    colour.filled(),
                );
                bar.set_margin(0, 0, 6, 6);
                bar
            }))?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
    }
    let smith: Vec<(SegmentValue<usize>, f64)> = pts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.smith_miss_ratio.is_finite())
        .map(|(i, p)| (SegmentValue::CenterOf(i), p.smith_miss_ratio))
        .collect();
    chart
        .draw_series(LineSeries::new(smith.clone(), BLACK.stroke_width(2)))?
        .label("Smith's estimate")
        .legend(line_key(BLACK.stroke_width(2)));
    chart.draw_series(smith.into_iter().map(|p| Circle::new(p, 4, BLACK.filled())))?;
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}
