//! The "What to change" figure: each finding's data-level misses as the trace is and after
//! its change, side by side, most saved first (`report --advise`).

use cachescope::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{FONT_SIZE, GREY, PALETTE, chart_on, human_count, legend, segments};

pub(super) fn draw_what_to_change<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Report,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let rows = r
        .what_to_change
        .as_ref()
        .map_or(&[][..], |w| w.findings.as_slice());
    // Misses of the data levels, and coherence misses, summed.
    let total = |after: bool, row: &cachescope::report::advice::ChangeRow| {
        let levels: u64 = row
            .levels
            .iter()
            .map(|l| if after { l.misses_after } else { l.misses })
            .sum();
        levels + row.coherence.map_or(0, |(b, a)| if after { a } else { b })
    };
    let n = rows.len().max(1);
    let ymax = rows
        .iter()
        .map(|row| total(false, row).max(total(true, row)))
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.15;
    // Two segments per finding: as it is, then after; the finding named under the first.
    let mut chart = chart_on(root, segments(2 * n), 0f64..ymax)?;
    let labels: Vec<String> = rows
        .iter()
        .map(|row| format!("{} {}", row.kind, row.structure))
        .collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if i % 2 == 0 => {
                labels.get(i / 2).cloned().unwrap_or_default()
            }
            _ => String::new(),
        })
        .y_label_formatter(&|v| human_count(*v))
        .x_desc("finding")
        .y_desc("misses (data levels + coherence)")
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    let after = PALETTE[0];
    let pale = RGBColor(after.0 / 2 + 128, after.1 / 2 + 128, after.2 / 2 + 128);
    let bar = |i: usize, left: bool, value: u64, colour: RGBColor| {
        let k = 2 * i + usize::from(!left);
        let mut r = Rectangle::new(
            [
                (SegmentValue::Exact(k), 0.0),
                (SegmentValue::Exact(k + 1), value as f64),
            ],
            colour.filled(),
        );
        if left {
            r.set_margin(0, 0, 8, 1);
        } else {
            r.set_margin(0, 0, 1, 8);
        }
        r
    };
    chart
        .draw_series(
            rows.iter()
                .enumerate()
                .map(|(i, row)| bar(i, true, total(false, row), GREY)),
        )?
        .label("as it is")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], GREY.filled()));
    chart
        .draw_series(rows.iter().enumerate().map(|(i, row)| {
            let colour = if row.estimate { pale } else { after };
            bar(i, false, total(true, row), colour)
        }))?
        .label("after the change")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], after.filled()));
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}
