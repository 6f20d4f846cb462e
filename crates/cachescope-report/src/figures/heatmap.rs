//! The evicted-by heatmap: a matrix of percentages, white to dark red, values in the cells.
//! Structure names are cut to fit their label area (rows) or column, with an ellipsis; the
//! full names and each cell's value show on hover.

use cachescope::report::model::Matrix;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axes::{FONT_SIZE, segments};
use super::{Drawn, WIDTH, hover};

/// Width of the row labels' area, and the characters that fit in it.
const ROW_LABELS: u32 = 210;
const ROW_CHARS: usize = 26;
/// Pixels per character of the label font, roughly (DejaVu Sans at [`FONT_SIZE`]).
const CHAR_PX: usize = 8;

/// White (0 %) to dark red (100 %).
pub fn heat_colour(percent: f64) -> RGBColor {
    let t = (percent / 100.0).clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(mix(255.0, 165.0), mix(255.0, 0.0), mix(255.0, 38.0))
}

pub(super) fn draw_heatmap<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, m: &Matrix) -> Drawn
where
    DB::ErrorType: 'static,
{
    let (rows, cols) = (m.rows.len().max(1), m.cols.len().max(1));
    let col_chars = ((WIDTH - ROW_LABELS - 24) as usize / cols / CHAR_PX).max(3);
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(ROW_LABELS)
        .build_cartesian_2d(segments(cols), segments(rows))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(cols)
        .y_labels(rows)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => m
                .cols
                .get(*i)
                .map(|n| hover::shorten(n, col_chars))
                .unwrap_or_default(),
            _ => String::new(),
        })
        // Row 0 at the top, as in a table.
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => m
                .rows
                .get(rows - 1 - *i)
                .map(|n| hover::shorten(n, ROW_CHARS))
                .unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc("evicted by (structure whose miss evicted the line)")
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    let cells = m
        .values
        .iter()
        .enumerate()
        .flat_map(|(r, row)| row.iter().enumerate().map(move |(c, &v)| (r, c, v)));
    chart.draw_series(cells.clone().map(|(r, c, v)| {
        let y = rows - 1 - r;
        Rectangle::new(
            [
                (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
            ],
            heat_colour(v).filled(),
        )
    }))?;
    let corner =
        |c: usize, y: usize| chart.backend_coord(&(SegmentValue::Exact(c), SegmentValue::Exact(y)));
    for (r, c, v) in cells.clone() {
        let y = rows - 1 - r;
        let (victim, evictor) = (&m.rows[r], &m.cols[c]);
        hover::rect(
            corner(c, y),
            corner(c + 1, y + 1),
            format!("{victim}: {v:.1} % of its evictions by {evictor}"),
        );
    }
    // The label areas: a row's full name left of it, a column's below it.
    let (left, bottom) = corner(0, 0);
    for (r, name) in m.rows.iter().enumerate() {
        let (_, top) = corner(0, rows - r);
        let (_, low) = corner(0, rows - 1 - r);
        hover::rect((left - ROW_LABELS as i32, top), (left, low), name.clone());
    }
    for (c, name) in m.cols.iter().enumerate() {
        let (x0, _) = corner(c, 0);
        let (x1, _) = corner(c + 1, 0);
        hover::rect((x0, bottom), (x1, bottom + 40), name.clone());
    }
    chart.draw_series(cells.map(|(r, c, v)| {
        let y = rows - 1 - r;
        let colour = if v > 55.0 { WHITE } else { BLACK };
        Text::new(
            format!("{v:.0}%"),
            (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y)),
            ("sans-serif", FONT_SIZE).into_font().color(&colour).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ),
            ),
        )
    }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_runs_from_white_to_dark_red() {
        assert_eq!(heat_colour(0.0), RGBColor(255, 255, 255));
        assert_eq!(heat_colour(100.0), RGBColor(165, 0, 38));
        assert_eq!(heat_colour(250.0), heat_colour(100.0));
    }
}
