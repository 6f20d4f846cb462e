//! The figures, drawn with plotters into SVG (vector, inlined in the page) and PNG (for
//! slides and issues), from the [`Report`] alone.
//!
//! Text is laid out with DejaVu Sans, embedded in the binary and registered with plotters'
//! `ab_glyph` backend: no system font is needed to render. Logarithmic axes are drawn as linear
//! axes over `log2` (sizes, windows) or `log10` (times) of the value, so ticks fall on powers.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, SegmentedCoord};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::model::{FigureInfo, Matrix, Report};

/// Pixel size of every figure.
pub const WIDTH: u32 = 880;
/// Pixel height of every figure.
pub const HEIGHT: u32 = 440;

/// DejaVu Sans (Bitstream Vera licence, assets/DejaVuSans-LICENSE).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

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

/// The figures, each drawn into both backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Mrc,
    Policies,
    WorkingSet,
    FillTime,
    ReuseTime,
    StackDistance,
    ThreeC,
    L2Mrc,
    L2Reuse,
    Phases,
    EvictedBy,
}

impl Kind {
    fn info(self) -> FigureInfo {
        let (id, title, caption) = match self {
            Kind::Mrc => (
                "mrc",
                "Miss-ratio curves: every method against the exact ones",
                "Misses per data reference (cold misses included) of a fully associative cache of each size, \
                 log2 axis; solid black is exact LRU, grey dots exact random replacement, dashed lines the models: \
                 the closer a model follows the exact curve of its policy, the better it predicts.",
            ),
            Kind::Policies => (
                "policies",
                "Replacement policies against the optimal bound",
                "Misses per data reference (cold misses included) by cache size, log2 axis: LRU in the \
                 3C section's set-associative caches (exact simulation), FIFO, SRRIP and DRRIP (Jaleel et \
                 al. 2010) in the same caches (miniature simulations of at least 256 sets, exact below), \
                 and Belady's OPT for a fully associative cache (exact), which no policy beats: the gap \
                 between a policy and OPT is what a better replacement policy could still win.",
            ),
            Kind::WorkingSet => (
                "working-set",
                "Working-set graph",
                "Average bytes touched by a window of w consecutive data references (HOTL footprint fp(w)), \
                 both axes logarithmic: it levels off at the program's whole footprint, and its slope at w is \
                 the miss ratio of the cache that fills in w references.",
            ),
            Kind::FillTime => (
                "fill-time",
                "Fill time and inter-miss time",
                "For each cache size, references until the cache is full (fill time) and references between \
                 two misses once it is (inter-miss time, one over the miss ratio); a long inter-miss time \
                 means the program fits.",
            ),
            Kind::ReuseTime => (
                "reuse-time",
                "Reuse-time histogram",
                "Share of data references per power-of-two range of reuse time (references since the last \
                 access to the same line); 'cold' are first references. Bars to the right need bigger caches.",
            ),
            Kind::StackDistance => (
                "stack-distance",
                "Stack-distance histogram",
                "Share of data references per power-of-two range of LRU stack distance (other lines touched \
                 since the last access to the same line): a fully associative LRU cache of C lines hits \
                 exactly the bars left of C.",
            ),
            Kind::ThreeC => (
                "three-c",
                "Miss classes of set-associative caches",
                "Misses per data reference of simulated set-associative LRU caches, stacked as cold, capacity \
                 and conflict misses; the line is Smith's estimate from the stack distances. Conflict misses \
                 are what full associativity would remove.",
            ),
            Kind::L2Mrc => (
                "l2",
                "L2 misses predicted from the L1 stack distances",
                "Local L2 miss ratio (L2 misses per L1 miss, cold included) behind a 32 KiB fully associative \
                 LRU L1, per L2 size (log2 axis): black is the exact two-level simulation, dashed lines Ji, \
                 Ling & Liu's model from the L1 stack-distance histogram alone (the paper's equations and the \
                 corrected reading); where they meet, one pass of L1 distances predicts every L2.",
            ),
            Kind::L2Reuse => (
                "l2-reuse",
                "L2 reuse-distance histogram: simulated and predicted",
                "Share of L2 references (L1 misses) per power-of-two range of L2 reuse distance (L2 \
                 references since the last one to the same line): bars are the simulation, lines the model's \
                 Eq. 2 prediction; an L2 of C lines with random replacement mostly hits the bars well left \
                 of C.",
            ),
            Kind::Phases => (
                "phases",
                "Phase timeline",
                "L2 hit rate per interval (line) over the phase setvectors put it in (background colour): \
                 good phase detection changes colour where the hit rate changes level.",
            ),
            Kind::EvictedBy => (
                "evicted-by",
                "Evicted-by heatmap",
                "Share of each structure's evicted lines (row) evicted by misses of each structure (column), \
                 in percent: dark cells off the diagonal are structures that fight over the cache.",
            ),
        };
        FigureInfo {
            id: id.into(),
            title: title.into(),
            caption: caption.into(),
        }
    }
}

/// The figures a report has, in page order: optional sections only when they have data.
fn kinds(r: &Report) -> Vec<Kind> {
    let mut k = vec![Kind::Mrc];
    if r.policies.iter().any(|m| !m.points.is_empty()) {
        k.push(Kind::Policies);
    }
    k.extend([
        Kind::WorkingSet,
        Kind::FillTime,
        Kind::ReuseTime,
        Kind::StackDistance,
        Kind::ThreeC,
    ]);
    if r.l2.as_ref().is_some_and(|l| l.l2_refs > 0) {
        k.push(Kind::L2Mrc);
        k.push(Kind::L2Reuse);
    }
    if r.phases.as_ref().is_some_and(|p| !p.intervals.is_empty()) {
        k.push(Kind::Phases);
    }
    if r.attribution
        .as_ref()
        .is_some_and(|a| !a.evicted_by.rows.is_empty())
    {
        k.push(Kind::EvictedBy);
    }
    k
}

/// The figures `r` has.
pub fn list(r: &Report) -> Vec<FigureInfo> {
    kinds(r).into_iter().map(Kind::info).collect()
}

/// Renders every figure of `r` as SVG and PNG.
pub fn render_all(r: &Report) -> Result<Vec<Figure>> {
    kinds(r)
        .into_iter()
        .map(|kind| {
            let info = kind.info();
            let svg = svg(|root| draw(kind, root, r)).map_err(|e| plot_error(&info.id, e))?;
            let png = png(|root| draw(kind, root, r)).map_err(|e| plot_error(&info.id, e))?;
            Ok(Figure { info, svg, png })
        })
        .collect()
}

/// The evicted-by heatmap of a matrix of percentages, as SVG and PNG (used by the report when
/// attribution is available; public so it can be tried on any matrix).
pub fn heatmap(m: &Matrix) -> Result<Figure> {
    let info = Kind::EvictedBy.info();
    let svg = svg(|root| draw_heatmap(root, m)).map_err(|e| plot_error(&info.id, e))?;
    let png = png(|root| draw_heatmap(root, m)).map_err(|e| plot_error(&info.id, e))?;
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

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a fixed, known-good file: failure to parse it is a build defect.
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans does not parse"));
    });
}

fn svg(
    f: impl Fn(&DrawingArea<SVGBackend, Shift>) -> Drawn,
) -> std::result::Result<String, Box<dyn std::error::Error>> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        f(&root)?;
        root.present()?;
    }
    Ok(out)
}

fn png(
    f: impl Fn(&DrawingArea<BitMapBackend, Shift>) -> Drawn,
) -> std::result::Result<Vec<u8>, Box<dyn std::error::Error>> {
    register_font();
    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        f(&root)?;
        root.present()?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}

fn draw<DB: DrawingBackend>(kind: Kind, root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    match kind {
        Kind::Mrc => draw_mrc(root, r),
        Kind::Policies => draw_policies(root, r),
        Kind::WorkingSet => draw_working_set(root, r),
        Kind::FillTime => draw_fill_time(root, r),
        Kind::ReuseTime => draw_histogram(root, &r.reuse_time, "reuse time (references)"),
        Kind::StackDistance => draw_histogram(root, &r.stack_distance, "stack distance (lines)"),
        Kind::ThreeC => draw_three_c(root, r),
        Kind::L2Mrc => match &r.l2 {
            Some(l2) => draw_l2_mrc(root, l2),
            None => Ok(()),
        },
        Kind::L2Reuse => match &r.l2 {
            Some(l2) => draw_l2_reuse(root, l2),
            None => Ok(()),
        },
        Kind::Phases => draw_phases(root, r),
        Kind::EvictedBy => match &r.attribution {
            Some(a) => draw_heatmap(root, &a.evicted_by),
            None => Ok(()),
        },
    }
}

const FONT_SIZE: u32 = 15;

/// Series colours (Okabe–Ito, distinguishable with colour blindness), after black for exact.
const PALETTE: [RGBColor; 6] = [
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
];
const GREY: RGBColor = RGBColor(120, 120, 120);

/// `32768` → `32K`: byte sizes on axes (one definition with the CLI's, in the library).
pub use cachescope::units::axis_bytes as human_bytes;

/// `1e6` → `1M`: counts on axes.
pub fn human_count(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.0}G", n / 1e9),
        n if n >= 1e6 => format!("{:.0}M", n / 1e6),
        n if n >= 1e3 => format!("{:.0}K", n / 1e3),
        n => format!("{n:.0}"),
    }
}

fn is_integer(v: f64) -> bool {
    (v - v.round()).abs() < 1e-6
}

/// Label areas and a white background for the legend.
fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    pos: SeriesLabelPosition,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", FONT_SIZE - 2))
        .draw()?;
    Ok(())
}

/// A chart over two axes of plotters' coordinate types.
type Chart<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// A chart with the margins and label areas of every figure but the heatmap.
fn chart_on<'a, DB: DrawingBackend, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<DB, Shift>,
    x: X,
    y: Y,
) -> Plotted<Chart<'a, DB, X::CoordDescType, Y::CoordDescType>>
where
    DB::ErrorType: 'static,
{
    Ok(ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)?)
}

/// One axis of a line chart.
struct Axis<'f> {
    desc: &'f str,
    /// How many ticks, and the label of a tick at a whole number (the powers of a log axis;
    /// ticks in between stay blank). `None` keeps plotters' default ticks and numbers.
    ticks: Option<(usize, &'f dyn Fn(f64) -> String)>,
}

impl<'f> Axis<'f> {
    fn plain(desc: &'f str) -> Self {
        Axis { desc, ticks: None }
    }

    fn log(desc: &'f str, ticks: usize, label: &'f dyn Fn(f64) -> String) -> Self {
        Axis {
            desc,
            ticks: Some((ticks, label)),
        }
    }
}

/// The set-up of a line chart: its area over `xs` × `ys` and its mesh with both axes labelled.
fn line_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    xs: std::ops::Range<f64>,
    ys: std::ops::Range<f64>,
    x: Axis,
    y: Axis,
) -> Plotted<Chart<'a, DB, RangedCoordf64, RangedCoordf64>>
where
    DB::ErrorType: 'static,
{
    let mut chart = chart_on(root, xs, ys)?;
    let whole = |label: &dyn Fn(f64) -> String, v: f64| {
        if is_integer(v) {
            label(v)
        } else {
            String::new()
        }
    };
    let x_label = |v: &f64| x.ticks.map_or_else(String::new, |(_, f)| whole(f, *v));
    let y_label = |v: &f64| y.ticks.map_or_else(String::new, |(_, f)| whole(f, *v));
    let mut mesh = chart.configure_mesh();
    if let Some((n, _)) = x.ticks {
        mesh.x_labels(n).x_label_formatter(&x_label);
    }
    if let Some((n, _)) = y.ticks {
        mesh.y_labels(n).y_label_formatter(&y_label);
    }
    mesh.x_desc(x.desc)
        .y_desc(y.desc)
        .label_style(("sans-serif", FONT_SIZE))
        .draw()?;
    Ok(chart)
}

/// The legend key of a line series.
fn line_key(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style)
}

fn draw_mrc<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    draw_curves(root, &r.mrc, |m| {
        let label = format!("{} {}", m.method, m.policy.to_uppercase());
        let style = match (m.method.as_str(), m.policy.as_str()) {
            ("exact", "lru") => Style::Reference,
            ("exact", _) => Style::Dots,
            _ => Style::Dashed,
        };
        (label, style)
    })
}

/// LRU, the policies real caches use, and the optimal bound.
fn draw_policies<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
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

/// How a curve is drawn: the reference (bold black), grey dots, or a dashed colour.
enum Style {
    Reference,
    Dots,
    Dashed,
}

/// Miss-ratio curves on a log2 size axis, each labelled and styled by `style`.
fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    curves: &[cachescope::reuse::Mrc],
    style: impl Fn(&cachescope::reuse::Mrc) -> (String, Style),
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let value = |p: &cachescope::reuse::MrcPoint| p.miss_ratio.unwrap_or(p.miss_ratio_warm);
    let all = curves.iter().flat_map(|m| m.points.iter());
    let (lo, hi) = all.clone().fold((f64::MAX, 0f64), |(lo, hi), p| {
        let x = (p.size_bytes as f64).log2();
        (lo.min(x), hi.max(x))
    });
    let ymax = all.map(value).fold(0f64, f64::max).clamp(0.01, 1.0) * 1.05;
    let (lo, hi) = if lo < hi { (lo, hi) } else { (10.0, 20.0) };
    let mut chart = line_chart(
        root,
        lo..hi,
        0f64..ymax,
        Axis::log(
            "cache size (log2)",
            ((hi - lo) as usize + 1).min(24),
            &|v| human_bytes(v.exp2()),
        ),
        Axis::plain("miss ratio"),
    )?;
    let mut colour = PALETTE.iter().cycle();
    for m in curves {
        let points: Vec<(f64, f64)> = m
            .points
            .iter()
            .map(|p| ((p.size_bytes as f64).log2(), value(p)))
            .collect();
        let (label, style) = style(m);
        match style {
            Style::Reference => {
                chart
                    .draw_series(LineSeries::new(points, BLACK.stroke_width(3)))?
                    .label(label)
                    .legend(line_key(BLACK.stroke_width(3)));
            }
            Style::Dots => {
                chart.draw_series(LineSeries::new(points.clone(), GREY.stroke_width(1)))?;
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 4, GREY.filled())))?
                    .label(label)
                    .legend(|(x, y)| Circle::new((x + 10, y), 4, GREY.filled()));
            }
            Style::Dashed => {
                let c = *colour.next().expect("cycle");
                chart
                    .draw_series(DashedLineSeries::new(points, 6, 4, c.stroke_width(2)))?
                    .label(label)
                    .legend(line_key(c.stroke_width(2)));
            }
        }
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn draw_working_set<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let points: Vec<(f64, f64)> = r
        .working_set
        .iter()
        .filter(|p| p.window > 0 && p.bytes > 0.0)
        .map(|p| ((p.window as f64).log2(), p.bytes.log2()))
        .collect();
    let (xlo, xhi, ylo, yhi) = bounds(&points);
    let mut chart = line_chart(
        root,
        xlo..xhi,
        ylo..yhi,
        Axis::log(
            "window length w (references, log2)",
            ((xhi - xlo) as usize + 1).min(16),
            &|v| power_label(v.exp2() as u64),
        ),
        Axis::log(
            "working set fp(w) (bytes, log2)",
            ((yhi - ylo) as usize + 1).min(12),
            &|v| human_bytes(v.exp2()),
        ),
    )?;
    chart
        .draw_series(LineSeries::new(points, PALETTE[4].stroke_width(3)))?
        .label("average footprint")
        .legend(line_key(PALETTE[4].stroke_width(3)));
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}

fn draw_fill_time<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let fill: Vec<(f64, f64)> = r
        .fill_time
        .iter()
        .filter(|p| p.fill_time > 0.0)
        .map(|p| ((p.size_bytes as f64).log2(), p.fill_time.log10()))
        .collect();
    let inter: Vec<(f64, f64)> = r
        .fill_time
        .iter()
        .filter(|p| p.inter_miss_time > 0.0)
        .map(|p| ((p.size_bytes as f64).log2(), p.inter_miss_time.log10()))
        .collect();
    let both: Vec<(f64, f64)> = fill.iter().chain(&inter).copied().collect();
    let (xlo, xhi, ylo, yhi) = bounds(&both);
    let mut chart = line_chart(
        root,
        xlo..xhi,
        ylo..yhi,
        Axis::log(
            "cache size (log2)",
            ((xhi - xlo) as usize + 1).min(20),
            &|v| human_bytes(v.exp2()),
        ),
        Axis::log(
            "references (log10)",
            ((yhi - ylo) as usize + 1).min(12),
            &|v| human_count(10f64.powf(v)),
        ),
    )?;
    chart
        .draw_series(LineSeries::new(fill, PALETTE[4].stroke_width(3)))?
        .label("fill time")
        .legend(line_key(PALETTE[4].stroke_width(3)));
    chart
        .draw_series(LineSeries::new(inter, PALETTE[5].stroke_width(3)))?
        .label("inter-miss time")
        .legend(line_key(PALETTE[5].stroke_width(3)));
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// Whole-number bounds around `points`, never empty.
fn bounds(points: &[(f64, f64)]) -> (f64, f64, f64, f64) {
    let (mut xlo, mut xhi, mut ylo, mut yhi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        xlo = xlo.min(x);
        xhi = xhi.max(x);
        ylo = ylo.min(y);
        yhi = yhi.max(y);
    }
    if points.is_empty() {
        return (0.0, 1.0, 0.0, 1.0);
    }
    let (xlo, mut xhi) = (xlo.floor(), xhi.ceil());
    let (ylo, mut yhi) = (ylo.floor(), yhi.ceil());
    if xhi <= xlo {
        xhi = xlo + 1.0;
    }
    if yhi <= ylo {
        yhi = ylo + 1.0;
    }
    (xlo, xhi, ylo, yhi)
}

/// Bars with category labels under them, heights in percent; `extra` is one more coloured bar.
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

/// `n` categories `0..n` on an axis (plotters' segmented ranges include their end).
fn segments(n: usize) -> SegmentedCoord<plotters::coord::types::RangedCoordusize> {
    (0..n.max(1) - 1).into_segmented()
}

/// Powers of two as short labels: `2^10` for large ones.
fn power_label(lo: u64) -> String {
    if lo < 1024 {
        lo.to_string()
    } else {
        format!("2^{}", lo.ilog2())
    }
}

fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    h: &crate::model::Histogram,
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

fn draw_l2_mrc<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l2: &crate::model::L2Report,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let value = |p: &cachescope::reuse::MrcPoint| p.miss_ratio.unwrap_or(p.miss_ratio_warm);
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
            human_bytes(v.round().exp2())
        }),
        Axis::plain("local L2 miss ratio"),
    )?;
    let points = |m: &cachescope::reuse::Mrc| -> Vec<(f64, f64)> {
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

fn draw_l2_reuse<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l2: &crate::model::L2Report,
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

/// A miss class of the 3C figure: its name, colour and count.
type MissClass = (
    &'static str,
    RGBColor,
    fn(&crate::model::ThreeCPoint) -> u64,
);

fn draw_three_c<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
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
        .map(|p| human_bytes(p.size_bytes as f64))
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

/// Light phase colours for the timeline's background.
const PHASE_COLOURS: [RGBColor; 6] = [
    RGBColor(204, 229, 255),
    RGBColor(255, 221, 170),
    RGBColor(204, 238, 204),
    RGBColor(255, 204, 221),
    RGBColor(221, 221, 255),
    RGBColor(238, 238, 187),
];

fn draw_phases<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report) -> Drawn
where
    DB::ErrorType: 'static,
{
    let Some(p) = &r.phases else { return Ok(()) };
    let n = p.intervals.len().max(1) as f64;
    let x_desc = format!(
        "interval ({} {} each)",
        human_count(p.interval as f64),
        p.unit
    );
    let mut chart = line_chart(
        root,
        0f64..n,
        0f64..1.05,
        Axis::plain(&x_desc),
        Axis::plain("L2 hit rate"),
    )?;
    chart.draw_series(p.intervals.iter().enumerate().map(|(i, iv)| {
        Rectangle::new(
            [(i as f64, 0.0), (i as f64 + 1.0, 1.05)],
            PHASE_COLOURS[iv.phase % PHASE_COLOURS.len()].filled(),
        )
    }))?;
    for phase in 0..p.k {
        let colour = PHASE_COLOURS[phase % PHASE_COLOURS.len()];
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())?
            .label(format!("{} phase {phase}", p.timeline_method))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            p.intervals
                .iter()
                .enumerate()
                .map(|(i, iv)| (i as f64 + 0.5, iv.l2_hit_rate)),
            BLACK.stroke_width(2),
        ))?
        .label(format!("L2 hit rate ({})", p.l2))
        .legend(line_key(BLACK.stroke_width(2)));
    legend(&mut chart, SeriesLabelPosition::LowerRight)
}

/// White (0 %) to dark red (100 %).
pub fn heat_colour(percent: f64) -> RGBColor {
    let t = (percent / 100.0).clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(mix(255.0, 165.0), mix(255.0, 0.0), mix(255.0, 38.0))
}

fn draw_heatmap<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, m: &Matrix) -> Drawn
where
    DB::ErrorType: 'static,
{
    let (rows, cols) = (m.rows.len().max(1), m.cols.len().max(1));
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(140)
        .build_cartesian_2d(segments(cols), segments(rows))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(cols)
        .y_labels(rows)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => m.cols.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        // Row 0 at the top, as in a table.
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => m.rows.get(rows - 1 - *i).cloned().unwrap_or_default(),
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
    fn human_units() {
        assert_eq!(human_bytes(32768.0), "32K");
        assert_eq!(human_bytes(1536.0), "1.5K");
        assert_eq!(human_bytes(64.0), "64B");
        assert_eq!(human_bytes(1073741824.0), "1G");
        assert_eq!(human_count(2_000_000.0), "2M");
        assert_eq!(power_label(512), "512");
        assert_eq!(power_label(4096), "2^12");
    }

    #[test]
    fn heat_runs_from_white_to_dark_red() {
        assert_eq!(heat_colour(0.0), RGBColor(255, 255, 255));
        assert_eq!(heat_colour(100.0), RGBColor(165, 0, 38));
        assert_eq!(heat_colour(250.0), heat_colour(100.0));
    }
}
