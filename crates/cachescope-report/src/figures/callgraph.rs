//! The call graph's flame graph: one box per calling context (a path of functions from a
//! thread's bottom frame, each function once), as wide as the D1 misses made in it and below
//! it, its callees stacked on it; a box's label is its function when it fits, and every box
//! shows its function and misses on hover.

use cachescope::report::model::{CallGraphContext, Report};
use cachescope::units::thousands;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axes::{FONT_SIZE, PALETTE};
use super::{Drawn, hover};

/// Pixels per character of the label font, roughly.
const CHAR_PX: f64 = 7.5;

/// Each context's left edge (in misses) and depth: children side by side from their
/// parent's left edge, in the order listed (most misses first).
fn layout(contexts: &[CallGraphContext]) -> Vec<(u64, usize)> {
    let mut at = vec![(0u64, 0usize); contexts.len()];
    // The next free left edge inside each context, and at the bottom.
    let mut next = vec![0u64; contexts.len()];
    let mut bottom = 0u64;
    for (i, c) in contexts.iter().enumerate() {
        at[i] = match c.parent {
            Some(p) => {
                let x = next[p].max(at[p].0);
                next[p] = x + c.d1_misses;
                (x, at[p].1 + 1)
            }
            None => {
                let x = bottom;
                bottom += c.d1_misses;
                (x, 0)
            }
        };
        next[i] = at[i].0;
    }
    at
}

pub(super) fn draw_callgraph<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(g) = &r.callgraph else {
        return Ok(());
    };
    let boxes = layout(&g.contexts);
    let width = boxes
        .iter()
        .zip(&g.contexts)
        .map(|(&(x, _), c)| x + c.d1_misses)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let depth = boxes.iter().map(|b| b.1 + 1).max().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(40)
        .build_cartesian_2d(0f64..width, 0f64..depth.max(4.0))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(6)
        .y_labels(depth.max(4.0) as usize)
        .x_label_formatter(&|v| format!("{:.0}%", 100.0 * v / width))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_desc(format!(
            "share of the D1 misses ({} in all)",
            thousands(g.d1_misses)
        ))
        .y_desc("call depth")
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    for (i, (c, &(x, d))) in g.contexts.iter().zip(&boxes).enumerate() {
        let (x0, x1, y0, y1) = (
            x as f64,
            (x + c.d1_misses) as f64,
            d as f64,
            d as f64 + 0.92,
        );
        let colour = PALETTE[i % PALETTE.len()].mix(0.55);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, y0), (x1, y1)],
            colour.filled(),
        )))?;
        let a = chart.backend_coord(&(x0, y1));
        let b = chart.backend_coord(&(x1, y0));
        let share = 100.0 * c.d1_misses as f64 / g.d1_misses.max(1) as f64;
        hover::rect(
            a,
            b,
            format!(
                "{}: {} D1 misses ({share:.1} %) in it and below",
                c.function,
                thousands(c.d1_misses)
            ),
        );
        let fits = ((b.0 - a.0) as f64 / CHAR_PX) as usize;
        if fits >= 4 {
            let label = hover::shorten(&c.function, fits);
            chart.draw_series(std::iter::once(Text::new(
                label,
                (x0, y0 + 0.46),
                ("sans-serif", FONT_SIZE - 3).into_font().color(&BLACK).pos(
                    plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    ),
                ),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(parent: Option<usize>, d1_misses: u64) -> CallGraphContext {
        CallGraphContext {
            parent,
            function: String::new(),
            d1_misses,
        }
    }

    #[test]
    fn children_stack_on_their_parent_side_by_side() {
        // main (100) over f (60) and g (30); f over h (50); another root (10).
        let c = [
            ctx(None, 100),
            ctx(Some(0), 60),
            ctx(Some(1), 50),
            ctx(Some(0), 30),
            ctx(None, 10),
        ];
        assert_eq!(layout(&c), [(0, 0), (0, 1), (0, 2), (60, 1), (100, 0)]);
    }
}
