//! What a reader of the page sees besides the pixels: a value on hover for every point and
//! cell (an SVG `<title>`, no script), structure names cut to fit with the full name on
//! hover, the phase legend beside the plot rather than over it, and the summary naming the
//! recorded program and one L1 size.

use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Params, Workload};
use cachescope_report::collect::{CollectOptions, collect};
use cachescope_report::figures::{self, WIDTH};
use cachescope_report::model::Matrix;

fn report() -> cachescope_report::Report {
    let params = Params {
        lines: 256,
        ..Params::default()
    };
    let generator = workloads::generator(Workload::Phases, &params).unwrap();
    let mut trace = Trace::from_reader(Box::new(generator), Source::Workload("phases".into()));
    let options = CollectOptions {
        phase_interval: 4096,
        ..CollectOptions::default()
    };
    collect(&mut trace, options, 1).unwrap()
}

/// The `<title>` texts of an SVG document.
fn titles(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text().map(str::to_owned))
        .collect()
}

#[test]
fn heatmap_cuts_long_names_and_gives_every_cell_and_name_on_hover() {
    let long = "make_block(prog.c:7)-main(prog.c:18)#2".to_string();
    // Six structures: a column is then narrower than the long name.
    let mut names = vec![long.clone()];
    names.extend((1..6).map(|i| format!("grid{i}")));
    let values: Vec<Vec<f64>> = (0..6)
        .map(|r| (0..6).map(|c| if r == c { 90.0 } else { 2.0 }).collect())
        .collect();
    let m = Matrix {
        rows: names.clone(),
        cols: names,
        values,
    };
    let fig = figures::heatmap(&m).unwrap();
    let doc = roxmltree::Document::parse(&fig.svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    assert!(!texts.contains(&long.as_str()), "{texts:?}");
    let cut: Vec<&&str> = texts.iter().filter(|t| t.ends_with('…')).collect();
    assert_eq!(cut.len(), 2, "row and column label cut: {texts:?}");
    assert!(
        cut.iter()
            .all(|t| long.starts_with(t.trim_end_matches('…')))
    );
    let titles = titles(&fig.svg);
    let cells = titles
        .iter()
        .filter(|t| t.contains("% of its evictions by"))
        .count();
    assert_eq!(cells, 36, "{titles:?}");
    assert!(titles.contains(&"grid3: 90.0 % of its evictions by grid3".to_string()));
    assert_eq!(
        titles.iter().filter(|t| **t == long).count(),
        2,
        "{titles:?}"
    );
}

#[test]
fn curves_and_phases_have_a_title_per_point_and_the_legend_beside_the_plot() {
    let r = report();
    let figs = figures::render_all(&r).unwrap();
    let svg = |id: &str| &figs.iter().find(|f| f.info.id == id).unwrap().svg;
    let points: usize = r.mrc.iter().map(|m| m.points.len()).sum();
    let mrc = titles(svg("mrc"));
    assert_eq!(mrc.len(), points);
    assert!(
        mrc.iter()
            .any(|t| t.starts_with("exact LRU: ") && t.ends_with(" %")),
        "{mrc:?}"
    );

    let phases = r.phases.as_ref().unwrap();
    let timeline = titles(svg("phases"));
    assert_eq!(timeline.len(), phases.intervals.len());
    assert!(
        timeline[0].starts_with("interval 0: L2 hit rate "),
        "{timeline:?}"
    );
    // Every legend entry sits right of the plot, in the legend column.
    let doc = roxmltree::Document::parse(svg("phases")).unwrap();
    let legend: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| {
            n.text()
                .is_some_and(|t| t.contains("phase ") || t.contains("hit rate ("))
        })
        .map(|n| n.attribute("x").unwrap().parse().unwrap())
        .collect();
    assert_eq!(legend.len(), phases.k + 1, "{legend:?}");
    assert!(
        legend.iter().all(|&x| x >= f64::from(WIDTH - 200)),
        "{legend:?}"
    );
}

#[test]
fn the_page_names_the_program_and_one_l1_size() {
    let mut r = report();
    r.program = Some("prog --fast input.txt".into());
    let dir = tempfile::tempdir().unwrap();
    cachescope_report::write::write(&r, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<td>program</td><td>prog --fast input.txt</td>"));
    assert!(html.contains("<title>cachescope report: prog --fast input.txt</title>"));
    assert!(html.contains("behind a 32 KiB fully associative LRU L1;"));
    assert!(!html.contains("-line fully associative"));
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(json.contains("\"program\": \"prog --fast input.txt\""));
}
