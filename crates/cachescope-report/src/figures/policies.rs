//! The policies figure: LRU, FIFO, SRRIP and DRRIP in the 3C caches, and OPT, the bound.

use cachescope::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::curves::{Style, draw_curves};

/// LRU, the policies real caches use, and the optimal bound.
pub(super) fn draw_policies<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let ways = r.three_c.ways;
    draw_curves(root, &r.policies, |m| match m.policy.as_str() {
        "lru" => (format!("LRU, {ways}-way (exact)"), Style::Reference),
        "opt" => ("OPT, fully associative (exact)".into(), Style::Dots),
        p => (
            format!("{}, {ways}-way (miniature)", p.to_uppercase()),
            Style::Dashed,
        ),
    })
}
