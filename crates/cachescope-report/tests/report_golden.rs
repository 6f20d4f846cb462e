//! Golden tests of report.json on fixed, seeded workloads: the whole data model, to the last
//! digit, with the one timing field zeroed. `UPDATE_GOLDEN=1 cargo test -p cachescope-report
//! --test report_golden` rewrites the files after an intended change (review the diff).

use std::path::PathBuf;

use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Params, Workload};
use cachescope_report::collect::{CollectOptions, collect};

fn check(name: &str, w: Workload, params: Params, interval: u64) {
    let generator = workloads::generator(w, &params).unwrap();
    let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
    let options = CollectOptions {
        phase_interval: interval,
        ..CollectOptions::default()
    };
    let mut report = collect(&mut trace, options.clone(), 2).unwrap();
    report.elapsed_seconds = 0.0;
    let text = serde_json::to_string_pretty(&report).unwrap() + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert!(
        text == golden,
        "{name}: report.json differs from {}",
        path.display()
    );

    // The JSON reads back into a report that writes the same JSON, and one thread gives the
    // same report as two.
    let back: cachescope_report::Report = serde_json::from_str(&golden).unwrap();
    assert!(serde_json::to_string_pretty(&back).unwrap() + "\n" == golden);
    let generator = workloads::generator(w, &params).unwrap();
    let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
    let mut single = collect(&mut trace, options, 1).unwrap();
    single.elapsed_seconds = 0.0;
    assert!(single == report, "{name}: one thread and two differ");
}

#[test]
fn loop_over_64_lines() {
    let params = Params {
        lines: 64,
        refs: Some(20_000),
        ..Params::default()
    };
    check("loop", Workload::Loop, params, 1000);
}

#[test]
fn phases_over_256_lines() {
    let params = Params {
        lines: 256,
        ..Params::default()
    };
    check("phases", Workload::Phases, params, 4096);
}

#[test]
fn zipf_over_1024_lines() {
    let params = Params {
        lines: 1024,
        refs: Some(100_000),
        ..Params::default()
    };
    check("zipf", Workload::Zipf, params, 10_000);
}
