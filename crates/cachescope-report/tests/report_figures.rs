//! The figures themselves: every PNG decodes and is not blank, every SVG parses and carries its
//! text, and the heatmap puts each percentage in its cell with its colour.

use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Params, Workload};
use cachescope_report::collect::{CollectOptions, collect};
use cachescope_report::figures::{self, HEIGHT, WIDTH, heat_colour};
use cachescope_report::model::Matrix;

/// RGB pixels of a PNG.
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn report_of(w: Workload, params: Params, interval: u64) -> cachescope_report::Report {
    let generator = workloads::generator(w, &params).unwrap();
    let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
    let options = CollectOptions {
        phase_interval: interval,
        ..CollectOptions::default()
    };
    collect(&mut trace, options, 2).unwrap()
}

#[test]
fn every_figure_renders_non_blank_png_and_parsable_svg_with_text() {
    let report = report_of(
        Workload::Phases,
        Params {
            lines: 256,
            ..Params::default()
        },
        4096,
    );
    let figs = figures::render_all(&report).unwrap();
    let ids: Vec<&str> = figs.iter().map(|f| f.info.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "mrc",
            "policies",
            "working-set",
            "fill-time",
            "reuse-time",
            "stack-distance",
            "three-c",
            "l2",
            "l2-reuse",
            "phases",
            "pages"
        ]
    );
    for f in &figs {
        let (w, h, px) = decode(&f.png);
        assert_eq!((w, h), (WIDTH, HEIGHT), "{}", f.info.id);
        let ink = px.chunks(3).filter(|p| p != &[255, 255, 255]).count();
        let share = ink as f64 / (w * h) as f64;
        assert!(
            share > 0.03,
            "{}: only {:.1}% of the PNG is drawn",
            f.info.id,
            100.0 * share
        );

        let doc =
            roxmltree::Document::parse(&f.svg).unwrap_or_else(|e| panic!("{}: {e}", f.info.id));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let text: String = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("|");
        let shapes = doc
            .descendants()
            .filter(|n| {
                ["polyline", "path", "rect", "circle", "line"].contains(&n.tag_name().name())
            })
            .count();
        assert!(shapes > 10, "{}: {shapes} shapes", f.info.id);
        let expected = match f.info.id.as_str() {
            "mrc" => "exact LRU",
            "policies" => "OPT, fully associative",
            "working-set" => "window length",
            "fill-time" => "inter-miss time",
            "reuse-time" => "cold",
            "stack-distance" => "stack distance",
            "three-c" => "conflict",
            "l2" => "simulated (two-level LRU)",
            "l2-reuse" => "L2 reuse distance",
            "phases" => "L2 hit rate",
            "pages" => "TLB entries",
            other => panic!("unexpected figure {other}"),
        };
        assert!(
            text.contains(expected),
            "{}: no {expected:?} in {text}",
            f.info.id
        );
        assert!(!f.info.caption.is_empty());
    }
}

#[test]
fn heatmap_puts_each_percentage_in_its_cell() {
    let m = Matrix {
        rows: vec!["grid".into(), "index".into()],
        cols: vec!["grid".into(), "index".into()],
        values: vec![vec![100.0, 75.0], vec![50.0, 25.0]],
    };
    let fig = figures::heatmap(&m).unwrap();
    let (w, _, px) = decode(&fig.png);
    // Centroid of the pixels of one exact colour.
    let centroid = |pct: f64| {
        let c = heat_colour(pct);
        let (mut n, mut sx, mut sy) = (0u64, 0u64, 0u64);
        for (i, p) in px.chunks(3).enumerate() {
            if p == [c.0, c.1, c.2] {
                n += 1;
                sx += i as u64 % u64::from(w);
                sy += i as u64 / u64::from(w);
            }
        }
        (
            n,
            sx.checked_div(n).unwrap_or(0),
            sy.checked_div(n).unwrap_or(0),
        )
    };
    let (n100, x100, y100) = centroid(100.0);
    let (n75, x75, y75) = centroid(75.0);
    let (n50, x50, y50) = centroid(50.0);
    let (n25, x25, y25) = centroid(25.0);
    for n in [n100, n75, n50, n25] {
        assert!(n > 10_000, "a cell of {n} pixels");
    }
    // No cell has 60 %: at most a few anti-aliased text pixels share its colour.
    assert!(centroid(60.0).0 < 100);
    // Row 0 on top, column 0 on the left.
    assert!(x100 < x75 && x50 < x25, "columns: {x100} {x75} {x50} {x25}");
    assert!(y100 < y50 && y75 < y25, "rows: {y100} {y50} {y75} {y25}");
    let doc = roxmltree::Document::parse(&fig.svg).unwrap();
    let text: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    for label in ["100%", "75%", "50%", "25%", "grid", "index"] {
        assert!(
            text.iter().any(|t| t.trim() == label),
            "{label} missing from {text:?}"
        );
    }
}

/// The policies figure's curves: OPT is at or below LRU's fully associative curve at every
/// size, and the set-associative LRU curve equals the 3C section's simulations.
#[test]
fn policy_curves_are_bounded_by_opt_and_lru_matches_the_3c_caches() {
    let report = report_of(
        Workload::Zipf,
        Params {
            lines: 4096,
            ..Params::default()
        },
        4096,
    );
    let names: Vec<(&str, &str)> = report
        .policies
        .iter()
        .map(|m| (m.method.as_str(), m.policy.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("exact", "lru"),
            ("mini", "fifo"),
            ("mini", "srrip"),
            ("mini", "drrip"),
            ("exact", "opt")
        ]
    );
    let lru_fa = &report.mrc[0];
    let opt = &report.policies[4];
    for (o, l) in opt.points.iter().zip(&lru_fa.points) {
        assert_eq!(o.size_bytes, l.size_bytes);
        assert!(o.miss_ratio.unwrap() <= l.miss_ratio.unwrap() + 1e-12);
    }
    for (p, c) in report.policies[0].points.iter().zip(&report.three_c.points) {
        assert_eq!(p.size_bytes, c.size_bytes);
        assert_eq!(p.miss_ratio.unwrap(), c.misses as f64 / c.refs as f64);
    }
}
