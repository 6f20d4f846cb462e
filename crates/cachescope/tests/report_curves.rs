//! The report's miss-ratio curves are the method layer's: each curve of `report.json` equals
//! what `cachescope::method::mrc` (= `mrc --method M`) gives on the same trace, with the
//! report's sampling rate, seed and estimated cold misses, at the report's sizes.

use cachescope::Source;
use cachescope::method::{self, CurvePolicy, Method, MrcOptions};
use cachescope::models::hotl::HotlVariant;
use cachescope::pass::Pass;
use cachescope::report::{self, CollectOptions};
use cachescope::reuse::Mrc;
use cachescope::sampling::Cold;
use cachescope::trace::Trace;
use cachescope::workloads::{self, Params, Workload};

fn trace(w: Workload) -> Trace {
    let params = Params {
        lines: 1024,
        refs: Some(60_000),
        ..Params::default()
    };
    let generator = workloads::generator(w, &params).unwrap();
    Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()))
}

/// `method::mrc`'s curve at the sizes of `shown`, the report's curve of the same method.
fn by_method(w: Workload, options: &CollectOptions, shown: &Mrc) -> Mrc {
    let method: Method = shown.method.parse().unwrap();
    let opts = MrcOptions {
        method,
        policy: Some(shown.policy.parse::<CurvePolicy>().unwrap()),
        sizes: shown.points.iter().map(|p| p.size_bytes).collect(),
        seed: options.seed,
        rate: options.sample_rate,
        cold: Cold::Estimate,
        threads: 2,
        ..MrcOptions::default()
    };
    method::mrc(&mut trace(w), &opts, &mut Pass::new(2))
        .unwrap()
        .mrc
}

#[test]
fn every_report_curve_is_the_method_layers() {
    for w in [Workload::Zipf, Workload::Phases] {
        let options = CollectOptions {
            sample_rate: 0.01,
            phase_interval: 5_000,
            ..CollectOptions::default()
        };
        let report = report::collect(&mut trace(w), options.clone(), 2).unwrap();
        let names: Vec<(&str, &str)> = report
            .mrc
            .iter()
            .map(|c| (c.method.as_str(), c.policy.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("exact", "lru"),
                ("exact", "random"),
                ("statcache", "random"),
                ("statstack", "lru"),
                ("hotl", "lru"),
                ("hotl-rt", "lru"),
            ],
            "{w:?}: {:?}",
            report.notes
        );
        for shown in &report.mrc {
            assert!(shown.points.len() > 4, "{w:?} {}", shown.method);
            assert_eq!(&by_method(w, &options, shown), shown, "{w:?}");
        }
    }
}

#[test]
fn the_reports_hotl_is_the_time_local_reading() {
    assert_eq!(MrcOptions::default().hotl_variant, HotlVariant::Local);
    let options = CollectOptions {
        phase_interval: 5_000,
        ..CollectOptions::default()
    };
    let report = report::collect(&mut trace(Workload::Phases), options, 1).unwrap();
    let hotl = report.mrc.iter().find(|c| c.method == "hotl").unwrap();
    let paper = MrcOptions {
        method: Method::Hotl,
        sizes: hotl.points.iter().map(|p| p.size_bytes).collect(),
        hotl_variant: HotlVariant::Paper,
        ..MrcOptions::default()
    };
    let paper = method::mrc(&mut trace(Workload::Phases), &paper, &mut Pass::new(1))
        .unwrap()
        .mrc;
    // The two readings differ on a program in phases; the report shows the local one.
    assert_ne!(paper.points, hotl.points);
}

#[test]
fn every_stage_after_the_pass_counts_each_reference_and_ends() {
    use cachescope::analysis::Analysis;
    use cachescope::pass::Analyses;
    use cachescope::report::Collector;
    use cachescope::stages::StageState;
    for threads in [1, 2] {
        let mut t = trace(Workload::Zipf);
        let mut collector = Collector::new(CollectOptions::default())
            .unwrap()
            .with_threads(threads);
        let mut analyses: Vec<&mut dyn Analysis> = collector.analyses();
        Pass::new(1).run(&mut t, Analyses(&mut analyses)).unwrap();
        drop(analyses);
        let stages = collector.stages();
        assert!(stages.iter().all(|s| s.state() == StageState::Waiting));
        collector.finish(&t).unwrap();
        for s in &stages {
            assert_eq!(s.state(), StageState::Done, "{}", s.name());
        }
        // Every stage over the spilled references passes each of the 60,000 once.
        let counted: Vec<(&str, u64, u64)> = stages
            .iter()
            .filter(|s| s.name() != "models")
            .map(|s| (s.name(), s.done(), s.total()))
            .collect();
        for (name, done, total) in counted {
            assert_eq!(
                (done, total),
                (60_000, 60_000),
                "{name} with {threads} thread(s)"
            );
        }
    }
}
