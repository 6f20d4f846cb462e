//! The threads figure: each thread's exact LRU curve over its own references.

use cachescope::report::Report;
use cachescope::reuse::Mrc;
use cachescope::units::thousands;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::curves::{Style, draw_curves};

/// One curve per thread, in thread order (as many colours as the palette has, then again).
pub(super) fn draw_threads<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(curves) = r.threads.as_ref().and_then(|t| t.curves.as_ref()) else {
        return Ok(());
    };
    let mrcs: Vec<Mrc> = curves
        .threads
        .iter()
        .map(|t| Mrc {
            method: format!("thread {} ({} references)", t.thread, thousands(t.refs)),
            policy: curves.policy.clone(),
            line_size: curves.line_size,
            points: t.points.clone(),
        })
        .collect();
    draw_curves(root, &mrcs, |m| (m.method.clone(), Style::Dashed))
}
