//! Phase classification on real programs' lackey traces.
//!
//! `real_program_is_classified` records `ls -la /usr/bin` under
//! `valgrind --tool=lackey --trace-mem=yes` when Valgrind is on PATH (otherwise skips,
//! saying so) and checks the analysis against independent
//! counts: intervals of 100 000 instructions, every interval's fetches, every score in range,
//! and the representative pass with a warm-up from the first interval reproducing the warm
//! ground truth.
//!
//! `print_poec_tables` (ignored: it needs traces) prints every method's PoEC on the lackey traces
//! listed in `CACHESCOPE_PHASE_TRACES` (comma separated), with the default 1 MiB L2 and with a
//! 64 KiB one, as Markdown tables:
//! `CACHESCOPE_PHASE_TRACES=a.lk,b.lk cargo test --release --test phases_real -- --ignored --nocapture`.

use std::path::Path;

use cachescope::pass::{Analyses, Pass};
use cachescope::phases::{PhaseAnalysis, PhaseOptions, PhaseReport, Unit, poec_table};
use cachescope::sim::Geometry;
use cachescope::trace::{OpenOptions, open};

mod common;

fn analyse(path: &Path, options: PhaseOptions) -> PhaseReport {
    let mut a = PhaseAnalysis::new(options).unwrap();
    let mut t = open(path, &OpenOptions::default()).unwrap();
    Pass::new(2).run(&mut t, Analyses(&mut [&mut a])).unwrap();
    let mut r = a.finish().unwrap();
    let mut sim = r.representative_simulation().unwrap();
    let mut t = open(path, &OpenOptions::default()).unwrap();
    Pass::new(2).run(&mut t, Analyses(&mut [&mut sim])).unwrap();
    r.apply_representatives(&sim.finish()).unwrap();
    r
}

#[test]
fn real_program_is_classified() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ls.lk");
    if !common::record_lackey(&log, &["ls", "-la", "/usr/bin"], None) {
        return;
    }
    // Independent counts: `I` lines are fetches; ` L`, ` S`, ` M` lines are data references.
    let text = std::fs::read_to_string(&log).unwrap();
    let (mut fetches, mut data) = (0u64, 0u64);
    for line in text.lines() {
        if line.starts_with("I ") {
            fetches += 1;
        } else if [" L ", " S ", " M "].iter().any(|p| line.starts_with(p)) {
            data += 1;
        }
    }
    let interval = 100_000;
    let options = PhaseOptions {
        interval,
        k: cachescope::phases::KChoice::Fixed(3),
        warmup_intervals: u64::MAX,
        ..PhaseOptions::default()
    };
    let r = analyse(&log, options);
    assert_eq!(r.settings.unit, Unit::Instructions);
    assert_eq!((r.instructions, r.data_refs), (fetches, data));
    let n = r.intervals.len();
    assert_eq!(n as u64, fetches.div_ceil(interval));
    assert!(n >= 10, "ls made only {fetches} instructions");
    for iv in &r.intervals[..n - 1] {
        assert_eq!(iv.instructions, interval);
    }
    for m in &r.methods {
        assert!(
            m.poec.is_none_or(|p| (0.0..=1.0).contains(&p)),
            "{}",
            m.name
        );
        assert!(m.cov >= 0.0 && m.sigma_weighted >= 0.0);
        assert_eq!(m.phases.iter().map(|p| p.intervals).sum::<u64>(), n as u64);
        // Warm-up from the first interval: the estimate uses the warm ground truth's counts.
        let e = m.simpoint.as_ref().unwrap();
        let (mut misses, mut accesses) = (0.0, 0.0);
        for p in &m.phases {
            let iv = &r.intervals[p.representative as usize];
            let scale = p.data_refs as f64 / iv.data_refs.max(1) as f64;
            misses += scale * (iv.l2_accesses - iv.l2_hits) as f64;
            accesses += scale * iv.l2_accesses as f64;
        }
        assert!(
            (e.miss_ratio - misses / accesses).abs() < 1e-12,
            "{}",
            m.name
        );
    }
}

#[test]
#[ignore = "needs lackey traces named in CACHESCOPE_PHASE_TRACES"]
fn print_poec_tables() {
    let list = std::env::var("CACHESCOPE_PHASE_TRACES").expect("set CACHESCOPE_PHASE_TRACES");
    for l2 in ["1M,16,64", "64K,8,64"] {
        let reports: Vec<(String, PhaseReport)> = list
            .split(',')
            .map(|p| {
                let path = Path::new(p);
                let name = path.file_name().unwrap().to_string_lossy();
                let name = name.split('.').next().unwrap().to_string();
                let options = PhaseOptions {
                    l2: Geometry::parse(l2).unwrap(),
                    ..PhaseOptions::default()
                };
                (name, analyse(path, options))
            })
            .collect();
        let rows: Vec<(&str, &PhaseReport)> =
            reports.iter().map(|(n, r)| (n.as_str(), r)).collect();
        println!("L2 {l2}, intervals of 1 M instructions, k = 2\n");
        println!("{}", poec_table(&rows));
        for (name, r) in &reports {
            let sv = r.methods.iter().find(|m| m.name == "setvector").unwrap();
            let e = sv.simpoint.as_ref().unwrap();
            println!(
                "{name}: {} intervals, L2 miss ratio {:.5}; setvector representatives: \
                 estimate {:.5} (error {:+.5}), speed-up {:.1}",
                r.intervals.len(),
                r.l2_miss_ratio,
                e.miss_ratio,
                e.error,
                e.speedup
            );
            assert_eq!(r.methods.len(), 8);
        }
        println!();
    }
}
