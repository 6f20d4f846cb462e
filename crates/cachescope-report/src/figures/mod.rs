//! The figures, drawn with plotters into SVG and PNG from the [`Report`] alone: one file per
//! figure family, the backends and font in `backend`, the shared frame, axes and colours
//! in `axes`. Which figures a report has, and their titles and captions, is the data model's
//! ([`cachescope::report::catalog`]).

mod advice;
mod axes;
mod backend;
mod callgraph;
mod curves;
mod heatmap;
mod histograms;
mod hover;
mod l2;
mod pages;
mod phases;
mod policies;
mod threads;
mod three_c;
mod working_set;

use plotters::coord::Shift;
use plotters::prelude::*;

use cachescope::report::model::{FigureInfo, Matrix, Report};
use cachescope::report::{FigureKind, catalog};

use crate::error::{Error, Result};

pub use cachescope::report::catalog::list;
pub use heatmap::heat_colour;

/// Pixel size of every figure.
pub const WIDTH: u32 = 880;
/// Pixel height of every figure.
pub const HEIGHT: u32 = 440;

/// A rendered figure.
#[derive(Clone, Debug)]
pub struct Figure {
    /// What it is.
    pub info: FigureInfo,
    /// The SVG document.
    pub svg: String,
    /// The PNG file.
    pub png: Vec<u8>,
}

/// Renders every figure of `r` as SVG and PNG.
pub fn render_all(r: &Report) -> Result<Vec<Figure>> {
    catalog::kinds(r)
        .into_iter()
        .map(|kind| {
            // The report's own caption where it has one (a sampled report's names its method
            // and rate), the catalog's otherwise.
            let info = kind.info();
            let info = r
                .figures
                .iter()
                .find(|f| f.id == info.id)
                .cloned()
                .unwrap_or(info);
            let svg =
                backend::svg(|root| draw(kind, root, r)).map_err(|e| plot_error(&info.id, e))?;
            let png =
                backend::png(|root| draw(kind, root, r)).map_err(|e| plot_error(&info.id, e))?;
            Ok(Figure { info, svg, png })
        })
        .collect()
}

/// The evicted-by heatmap of a matrix of percentages, as SVG and PNG (used by the report when
/// attribution is available; public so it can be tried on any matrix).
pub fn heatmap(m: &Matrix) -> Result<Figure> {
    let info = FigureKind::EvictedBy.info();
    let svg =
        backend::svg(|root| heatmap::draw_heatmap(root, m)).map_err(|e| plot_error(&info.id, e))?;
    let png =
        backend::png(|root| heatmap::draw_heatmap(root, m)).map_err(|e| plot_error(&info.id, e))?;
    Ok(Figure { info, svg, png })
}

/// What drawing gives back: plotters' errors differ by backend, so they are boxed.
type Plotted<T> = std::result::Result<T, Box<dyn std::error::Error>>;
type Drawn = Plotted<()>;

fn plot_error(id: &str, e: Box<dyn std::error::Error>) -> Error {
    Error::Plot {
        figure: id.into(),
        message: e.to_string(),
    }
}

fn draw<DB: DrawingBackend>(kind: FigureKind, root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    match kind {
        FigureKind::Mrc => curves::draw_mrc(root, r),
        FigureKind::Policies => policies::draw_policies(root, r),
        FigureKind::WorkingSet => working_set::draw_working_set(root, r),
        FigureKind::FillTime => working_set::draw_fill_time(root, r),
        FigureKind::ReuseTime => {
            histograms::draw_histogram(root, &r.reuse_time, "reuse time (references)")
        }
        FigureKind::StackDistance => {
            histograms::draw_histogram(root, &r.stack_distance, "stack distance (lines)")
        }
        FigureKind::ThreeC => three_c::draw_three_c(root, r),
        FigureKind::L2Mrc => match &r.l2 {
            Some(l2) => l2::draw_l2_mrc(root, l2),
            None => Ok(()),
        },
        FigureKind::L2Reuse => match &r.l2 {
            Some(l2) => l2::draw_l2_reuse(root, l2),
            None => Ok(()),
        },
        FigureKind::Phases => phases::draw_phases(root, r),
        FigureKind::EvictedBy => match &r.attribution {
            Some(a) => heatmap::draw_heatmap(root, &a.evicted_by),
            None => Ok(()),
        },
        FigureKind::Threads => threads::draw_threads(root, r),
        FigureKind::WhatToChange => advice::draw_what_to_change(root, r),
        FigureKind::Pages => pages::draw_pages(root, r),
        FigureKind::CallGraph => callgraph::draw_callgraph(root, r),
    }
}
