//! The pages figure: each thread's TLB miss ratio for every entry count (a fully associative
//! LRU TLB of 4 KiB pages), with Skylake's DTLB and STLB sizes marked.

use cachescope::report::Report;
use cachescope::units::thousands;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Drawn;
use super::axes::{Axis, GREY, PALETTE, legend, line_chart, line_key, power_label};

/// The entry counts marked: Skylake's first-level DTLB and STLB for 4 KiB pages.
const MARKS: [(u64, &str); 2] = [(64, "DTLB 64"), (1536, "STLB 1536")];

pub(super) fn draw_pages<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(pages) = &r.pages else {
        return Ok(());
    };
    let value = |p: &cachescope::tlb::PagePoint| p.miss_ratio.unwrap_or(p.miss_ratio_warm);
    let all = pages.threads.iter().flat_map(|t| t.points.iter());
    let hi = all
        .clone()
        .map(|p| (p.entries.max(1) as f64).log2())
        .fold(1f64, f64::max);
    let ymax = all.map(value).fold(0f64, f64::max).clamp(0.01, 1.0) * 1.05;
    let label = |v: f64| power_label(v.exp2().round() as u64);
    let mut chart = line_chart(
        root,
        0f64..hi,
        0f64..ymax,
        Axis::log("TLB entries (log2)", (hi as usize + 1).min(24), &label),
        Axis::plain("miss ratio"),
    )?;
    for (entries, name) in MARKS {
        let x = (entries as f64).log2();
        if x <= hi {
            let style = GREY.stroke_width(1);
            chart.draw_series(DashedLineSeries::new([(x, 0.0), (x, ymax)], 3, 3, style))?;
            chart.draw_series([Text::new(
                name,
                (x, ymax * 0.97),
                ("sans-serif", 12).into_font().color(&GREY),
            )])?;
        }
    }
    let mut colour = PALETTE.iter().cycle();
    for t in &pages.threads {
        let c = *colour.next().expect("cycle");
        let points: Vec<(f64, f64)> = t
            .points
            .iter()
            .map(|p| ((p.entries.max(1) as f64).log2(), value(p)))
            .collect();
        let name = format!(
            "thread {} ({} references, {} pages)",
            t.thread,
            thousands(t.refs),
            thousands(t.pages)
        );
        for (p, q) in t.points.iter().zip(&points) {
            super::hover::point(
                chart.backend_coord(q),
                format!("{name}: {} entries → {:.2} %", p.entries, 100.0 * q.1),
            );
        }
        chart
            .draw_series(LineSeries::new(points, c.stroke_width(2)))?
            .label(name)
            .legend(line_key(c.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}
