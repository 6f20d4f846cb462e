//! The L2 figures: the model's local L2 miss ratios against the two-level simulation, and
//! the L2 reuse-distance histogram, simulated (bars) and predicted (lines).

use cachescope::report::model::L2Report;
use cachescope::reuse::{Mrc, MrcPoint};
use cachescope::units::axis_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{
    Axis, FONT_SIZE, GREY, PALETTE, chart_on, is_integer, legend, line_chart, line_key, power_label,
};

pub(super) fn draw_l2_mrc<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, l2: &L2Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let value = |p: &MrcPoint| p.miss_ratio.unwrap_or(p.miss_ratio_warm);
    let curves = || std::iter::once(&l2.simulated).chain(&l2.predicted);
    let (lo, hi) = curves()
        .flat_map(|m| m.points.iter())
        .fold((f64::MAX, 0f64), |(lo, hi), p| {
            let x = (p.size_bytes as f64).log2();
            (lo.min(x), hi.max(x))
        });
    let (lo, hi) = if lo < hi {
        (lo - 0.3, hi + 0.3)
    } else {
        (16.0, 22.0)
    };
    let ymax = curves()
        .flat_map(|m| m.points.iter())
        .map(value)
        .fold(0f64, f64::max)
        .clamp(0.01, 1.0)
        * 1.1;
    let mut chart = line_chart(
        root,
        lo..hi,
        0f64..ymax,
        Axis::log("L2 size (log2)", ((hi - lo) as usize + 2).min(24), &|v| {
            axis_bytes(v.round().exp2())
        }),
        Axis::plain("local L2 miss ratio"),
    )?;
    let points = |m: &Mrc| -> Vec<(f64, f64)> {
        m.points
            .iter()
            .map(|p| ((p.size_bytes as f64).log2(), value(p)))
            .collect()
    };
    let sim = points(&l2.simulated);
    chart.draw_series(LineSeries::new(sim.clone(), BLACK.stroke_width(3)))?;
    chart
        .draw_series(sim.iter().map(|&p| Circle::new(p, 5, BLACK.filled())))?
        .label("simulated (two-level LRU)")
        .legend(|(x, y)| Circle::new((x + 10, y), 5, BLACK.filled()));
    for (m, &c) in l2.predicted.iter().zip(PALETTE.iter()) {
        let pts = points(m);
        chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, c.stroke_width(2)))?;
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))?
            .label(format!("{} (model)", m.method))
            .legend(line_key(c.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

pub(super) fn draw_l2_reuse<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l2: &L2Report,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let sim = &l2.reuse_simulated;
    // One column per power of two that any histogram reaches, then `cold`.
    let mut los: Vec<u64> = sim.bins.iter().map(|b| b.lo).collect();
    for p in &l2.reuse_predicted {
        los.extend(p.bins.iter().map(|b| b.lo));
    }
    los.sort_unstable();
    los.dedup();
    let total = sim.total.max(1) as f64;
    let col = |lo: u64| los.iter().position(|&l| l == lo).unwrap_or(0) as f64;
    let n = los.len() + 1;
    let mut values: Vec<(f64, f64)> = sim
        .bins
        .iter()
        .map(|b| (col(b.lo), 100.0 * b.count as f64 / total))
        .collect();
    values.push(((n - 1) as f64, 100.0 * sim.cold as f64 / total));
    let predicted: Vec<Vec<(f64, f64)>> = l2
        .reuse_predicted
        .iter()
        .map(|p| {
            p.bins
                .iter()
                .map(|b| (col(b.lo), 100.0 * b.weight / total))
                .collect()
        })
        .collect();
    let ymax = values
        .iter()
        .chain(predicted.iter().flatten())
        .map(|p| p.1)
        .fold(1f64, f64::max)
        * 1.1;
    let mut labels: Vec<String> = los.iter().map(|&l| power_label(l)).collect();
    labels.push("cold".into());
    // Column i is centred on x = i, so the integer ticks carry its label.
    let mut chart = chart_on(root, -0.5f64..n as f64 - 0.5, 0f64..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| {
            if is_integer(*v) && *v >= 0.0 {
                labels.get(v.round() as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("L2 reuse distance (L2 references), bins from each power of two")
        .y_desc("% of L2 references")
        .label_style(("sans-serif", FONT_SIZE - 2))
        .draw()?;
    let last = (n - 1) as f64;
    chart
        .draw_series(values.iter().map(|&(x, v)| {
            let colour = if x == last { GREY } else { PALETTE[4] };
            Rectangle::new([(x - 0.4, 0.0), (x + 0.4, v)], colour.filled())
        }))?
        .label("simulated")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], PALETTE[4].filled()));
    for ((p, pts), &c) in l2
        .reuse_predicted
        .iter()
        .zip(predicted)
        .zip([PALETTE[5], PALETTE[2]].iter())
    {
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?;
        chart
            .draw_series(pts.iter().map(|&q| Circle::new(q, 4, c.filled())))?
            .label(format!("{} (model)", p.method))
            .legend(line_key(c.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}
