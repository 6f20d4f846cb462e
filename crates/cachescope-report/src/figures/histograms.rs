//! The reuse-time and stack-distance histograms: bars per power of two, then the cold ones.

use cachescope::report::model::Histogram;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{FONT_SIZE, GREY, PALETTE, chart_on, power_label, segments};

/// Bars with category labels under them, heights in percent; a bar labelled `cold` is grey.
fn bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[String],
    values: &[f64],
    x_desc: &str,
    y_desc: &str,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let n = labels.len().max(1);
    let ymax = values.iter().copied().fold(1f64, f64::max) * 1.1;
    let mut chart = chart_on(root, segments(n), 0f64..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", FONT_SIZE - 2))
        .draw()?;
    chart.draw_series(values.iter().enumerate().map(|(i, &v)| {
        let colour = if labels[i] == "cold" {
            GREY
        } else {
            PALETTE[4]
        };
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), v),
            ],
            colour.filled(),
        );
        bar.set_margin(0, 0, 3, 3);
        bar
    }))?;
    Ok(())
}

pub(super) fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    h: &Histogram,
    x_desc: &str,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let total = h.total.max(1) as f64;
    let mut labels: Vec<String> = h.bins.iter().map(|b| power_label(b.lo)).collect();
    let mut values: Vec<f64> = h
        .bins
        .iter()
        .map(|b| 100.0 * b.count as f64 / total)
        .collect();
    labels.push("cold".into());
    values.push(100.0 * h.cold as f64 / total);
    bars(
        root,
        &labels,
        &values,
        &format!("{x_desc}, bins from each power of two"),
        "% of references",
    )
}
