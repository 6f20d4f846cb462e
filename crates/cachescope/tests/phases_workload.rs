//! Phase classification end to end: the planted phases of the `phases` workload are found,
//! the ground truth is the exact simulation, the representative-interval pass simulates what
//! it says, and the JSON report has its contracted shape.

use cachescope::analysis::Analysis;
use cachescope::pass::{Analyses, Pass};
use cachescope::phases::{
    IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions, PhaseReport, Unit, metrics,
};
use cachescope::sim::{Cache, Geometry, Policy};
use cachescope::trace::Trace;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{AccessKind, Source};

mod common;

/// The planted workload: segments of 262 144 references (lines = 4096, natural length).
const SEGMENT: u64 = 64 * 4096;

fn params(instructions: bool) -> Params {
    Params {
        instructions,
        ..Params::default()
    }
}

fn trace(p: &Params) -> Trace {
    let g = generator(Workload::Phases, p).expect("valid parameters");
    Trace::from_reader(Box::new(g), Source::Workload("phases".into()))
}

/// A 64 KiB, 8-way L2 (1024 lines): the loop phase (256 lines) fits, the random phase (4096
/// lines) hits about a quarter of the time, the stream 7 in 8.
fn options(interval: u64, k: KChoice) -> PhaseOptions {
    PhaseOptions {
        interval,
        k,
        l2: Geometry::parse("64K,8,64").unwrap(),
        ..PhaseOptions::default()
    }
}

fn analyse(p: &Params, o: PhaseOptions, threads: usize) -> PhaseReport {
    let mut a = PhaseAnalysis::new(o).unwrap();
    Pass::new(threads)
        .run(&mut trace(p), Analyses(&mut [&mut a]))
        .unwrap();
    a.finish().unwrap()
}

/// The planted phase of data-reference interval `i` of length `len`: segments loop, stream,
/// random, loop, stream, random (workloads/phases.rs), numbered in order of first appearance.
fn planted(i: u64, len: u64) -> usize {
    ((i * len / SEGMENT) % 3) as usize
}

#[test]
fn planted_phases_are_found() {
    // Intervals of 8192 references: 32 per segment, 192 in all, none straddling a segment.
    let len = 8192;
    let r = analyse(&params(false), options(len, KChoice::Fixed(3)), 1);
    assert_eq!(r.settings.unit, Unit::DataRefs);
    assert_eq!(r.intervals.len(), 192);
    let truth: Vec<usize> = (0..192).map(|i| planted(i, len)).collect();
    // Setvectors and reuse distances see the three behaviours: the loop touches 256 lines per
    // interval (2 per set), the stream 1024 (8 per set), the random phase about 3540 (27.7);
    // the loop reuses at distance 255, the stream at 0, the random phase at every distance.
    for m in [
        Method::Setvector,
        Method::SetvectorVector,
        Method::ReuseDistance,
    ] {
        let mr = r.method(m).unwrap();
        assert_eq!(r.labels(m).unwrap(), truth, "{m}");
        assert_eq!((mr.k, mr.poec), (3, Some(1.0)), "{m}");
    }
    // The hit-rate classes are the planted phases too, so PoEC is agreement with them.
    let hit = r.hit_rates();
    for m in &r.methods {
        let labels = r.labels(Method::from_name(m.name).unwrap()).unwrap();
        let (a, _) = metrics::agreement(&labels, &truth);
        let poec = m.poec.unwrap_or(0.0);
        let k = m.k.max(3) as f64;
        assert!(
            (poec - ((a - 1.0 / k) / (1.0 - 1.0 / k)).max(0.0)).abs() < 1e-12,
            "{}",
            m.name
        );
        assert!(m.sigma_weighted <= metrics::mean_std(hit.iter().copied()).1 + 1e-12);
    }
    // Per-phase summaries: shares of a third, hit rates ≈ 1, 7/8 and 1/4.
    let sv = r.method(Method::Setvector).unwrap();
    let means: Vec<f64> = sv.phases.iter().map(|p| p.mean_l2_hit_rate).collect();
    assert!(means[0] > 0.99 && (means[1] - 0.875).abs() < 1e-9 && (means[2] - 0.25).abs() < 0.03);
    for p in &sv.phases {
        assert_eq!((p.intervals, p.data_refs), (64, 64 * len));
        assert!((p.share - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(planted(p.representative, len), p.id);
    }
}

#[test]
fn a_sweep_finds_three_phases() {
    let o = PhaseOptions {
        methods: vec![Method::Setvector, Method::ReuseDistance],
        ..options(8192, KChoice::Sweep { min: 1, max: 8 })
    };
    let r = analyse(&params(false), o, 1);
    let sv = r.method(Method::Setvector).unwrap();
    assert_eq!((sv.k, sv.poec), (3, Some(1.0)), "{:?}", sv.k_scores);
    assert_eq!(sv.k_scores.len(), 8);
    // Reuse histograms also tell apart the intervals that start cold (the first loop interval,
    // the first random ones), which BIC rightly keeps apart: a refinement of the planted
    // phases, every cluster inside one of them.
    let rd = r.method(Method::ReuseDistance).unwrap();
    assert!((3..=8).contains(&rd.k), "{:?}", rd.k_scores);
    let labels = r.labels(Method::ReuseDistance).unwrap();
    for c in 0..rd.k {
        let planted_of: std::collections::BTreeSet<usize> = (0..192)
            .filter(|&i| labels[i as usize] == c)
            .map(|i| planted(i, 8192))
            .collect();
        assert_eq!(
            planted_of.len(),
            1,
            "cluster {c} mixes phases {planted_of:?}"
        );
    }
}

#[test]
fn ground_truth_is_the_exact_warm_simulation() {
    let p = Params {
        refs: Some(300_000),
        ..params(false)
    };
    for l1 in [None, Some(Geometry::parse("4K,2,64").unwrap())] {
        let o = PhaseOptions {
            l1,
            methods: vec![Method::Activity],
            ..options(20_000, KChoice::Fixed(2))
        };
        let r = analyse(&p, o.clone(), 1);
        // Brute force: two caches, reference by reference.
        let mut l2 = Cache::new(o.l2, Policy::Lru).unwrap();
        let mut l1c = l1.map(|g| Cache::new(g, Policy::Lru).unwrap());
        let mut per = vec![(0u64, 0u64, 0u64); 15];
        let mut i = 0;
        for b in common::workload_batches(Workload::Phases, &p) {
            for a in b.iter() {
                let iv = (i / 20_000) as usize;
                i += 1;
                per[iv].0 += 1;
                if l1c.as_mut().is_some_and(|c| c.access(a.addr >> 6)) {
                    continue;
                }
                per[iv].1 += 1;
                per[iv].2 += u64::from(l2.access(a.addr >> 6));
            }
        }
        assert_eq!(r.intervals.len(), 15);
        for (iv, &(d, acc, hits)) in r.intervals.iter().zip(&per) {
            assert_eq!((iv.data_refs, iv.l2_accesses, iv.l2_hits), (d, acc, hits));
            assert_eq!(iv.l2_hit_rate, hits as f64 / acc as f64);
        }
        assert!(l1.is_none() || per.iter().any(|p| p.1 < p.0));
    }
}

#[test]
fn instruction_intervals_count_fetches() {
    let p = Params {
        refs: Some(100_000),
        ..params(true)
    };
    let o = PhaseOptions {
        methods: vec![Method::WaveletDc],
        ..options(50_000, KChoice::Fixed(2))
    };
    let r = analyse(&p, o.clone(), 1);
    assert_eq!(r.settings.unit, Unit::Instructions);
    let (fetches, data) =
        common::workload_batches(Workload::Phases, &p)
            .iter()
            .fold((0, 0), |(f, d), b| {
                let i = b.kinds.iter().filter(|&&k| k == AccessKind::Instr).count() as u64;
                (f + i, d + b.len() as u64 - i)
            });
    assert_eq!((r.instructions, r.data_refs), (fetches, data));
    let n = r.intervals.len() as u64;
    assert_eq!(n, fetches.div_ceil(50_000));
    for iv in &r.intervals[..n as usize - 1] {
        assert_eq!(iv.instructions, 50_000);
    }
    // The same trace counted in data references instead.
    let r = analyse(
        &p,
        PhaseOptions {
            unit: IntervalUnit::DataRefs,
            ..o
        },
        1,
    );
    assert_eq!(r.intervals.len(), 2);
    assert!(r.intervals.iter().all(|i| i.data_refs == 50_000));
}

#[test]
fn representatives_are_simulated_with_their_warm_up() {
    let p = Params {
        refs: Some(400_000),
        ..params(false)
    };
    let run = |warmup: u64| {
        let o = PhaseOptions {
            warmup_intervals: warmup,
            methods: vec![Method::Setvector, Method::ReuseDistance],
            ..options(16_384, KChoice::Fixed(3))
        };
        let mut r = analyse(&p, o, 1);
        let mut sim = r.representative_simulation().unwrap();
        Pass::new(1)
            .run(&mut trace(&p), Analyses(&mut [&mut sim]))
            .unwrap();
        let runs = sim.finish();
        r.apply_representatives(&runs).unwrap();
        (r, runs)
    };
    // Warm-up from the first interval: every representative sees exactly the warm simulation.
    let (r, runs) = run(1000);
    assert!(!runs.counts.is_empty());
    for (&i, c) in &runs.counts {
        let iv = &r.intervals[i as usize];
        assert_eq!(
            (c.accesses, c.hits),
            (iv.l2_accesses, iv.l2_hits),
            "interval {i}"
        );
    }
    // No warm-up: each representative from empty caches, as a fresh cache over its lines.
    let (r, runs) = run(0);
    let all: Vec<u64> = common::workload_batches(Workload::Phases, &p)
        .iter()
        .flat_map(|b| b.addrs.clone())
        .collect();
    for (&i, c) in &runs.counts {
        let mut cache = Cache::new(r.settings.l2, Policy::Lru).unwrap();
        let lines = &all[i as usize * 16_384..((i + 1) as usize * 16_384).min(all.len())];
        let hits = lines.iter().filter(|&&a| cache.access(a >> 6)).count() as u64;
        assert_eq!(
            (c.accesses, c.hits),
            (lines.len() as u64, hits),
            "interval {i}"
        );
    }
    // Three phases, three representatives each: the estimate is close and the speed-up is
    // intervals over intervals simulated.
    let n = r.intervals.len() as f64;
    for m in &r.methods {
        let e = m.simpoint.as_ref().unwrap();
        assert_eq!(e.intervals_simulated, 3);
        assert_eq!(e.speedup, n / 3.0);
        assert!(e.error.abs() < 0.02, "{}: {e:?}", m.name);
        assert_eq!(e.actual_miss_ratio, r.l2_miss_ratio);
    }
    // A different trace in the second pass is refused.
    let mut other = r.representative_simulation().unwrap();
    let short = Params {
        refs: Some(100_000),
        ..p
    };
    Pass::new(1)
        .run(&mut trace(&short), Analyses(&mut [&mut other]))
        .unwrap();
    let mut r2 = r.clone();
    let e = r2.apply_representatives(&other.finish()).unwrap_err();
    assert!(e.to_string().contains("same trace"), "{e}");
}

#[test]
fn two_threads_give_the_same_phases() {
    let p = Params {
        refs: Some(500_000),
        ..params(true)
    };
    let o = options(40_000, KChoice::Fixed(3));
    let (a, b) = (analyse(&p, o.clone(), 1), analyse(&p, o, 2));
    assert_eq!(a.intervals, b.intervals);
    for (x, y) in a.methods.iter().zip(&b.methods) {
        assert_eq!((x.poec, x.cov, &x.phases), (y.poec, y.cov, &y.phases));
    }
}

#[test]
fn errors_are_typed() {
    // No reference at all.
    let a = PhaseAnalysis::new(PhaseOptions::default()).unwrap();
    assert!(a.finish().unwrap_err().to_string().contains("no reference"));
    // Instruction intervals on a trace without fetches.
    let mut a = PhaseAnalysis::new(PhaseOptions {
        unit: IntervalUnit::Instructions,
        ..PhaseOptions::default()
    })
    .unwrap();
    a.observe(&[cachescope::Access::load(0, 8)].into_iter().collect());
    let e = a.finish().unwrap_err().to_string();
    assert!(e.contains("no instruction fetches"), "{e}");
    // Bad options never panic.
    let e = PhaseAnalysis::new(PhaseOptions {
        interval: 3,
        ..PhaseOptions::default()
    })
    .unwrap_err();
    assert!(matches!(
        e,
        cachescope::Error::InvalidParameter {
            name: "interval",
            ..
        }
    ));
}

#[test]
fn json_has_the_contracted_fields() {
    let p = Params {
        refs: Some(50_000),
        ..params(false)
    };
    let r = analyse(&p, options(10_000, KChoice::Fixed(2)), 1);
    let j = serde_json::to_value(&r).unwrap();
    let m = &j["methods"][0];
    assert_eq!(m["name"], "setvector");
    for f in ["poec", "cov", "sigma_weighted", "k", "phases", "simpoint"] {
        assert!(m.get(f).is_some(), "{f}");
    }
    let names: Vec<&str> = j["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "setvector",
            "setvector-vector",
            "activity",
            "activity-magnitude",
            "reuse-distance",
            "wavelet",
            "wavelet-dc",
            "wavelet-svd"
        ]
    );
    let iv = &j["intervals"][4];
    assert_eq!(iv["index"], 4);
    assert!(iv["l2_hit_rate"].is_f64());
    assert_eq!(iv["phases"].as_object().unwrap().len(), 8);
    assert!(iv["phases"]["wavelet-svd"].is_u64());
    let ph = &m["phases"][0];
    for f in [
        "id",
        "intervals",
        "share",
        "mean_l2_hit_rate",
        "representative",
    ] {
        assert!(ph.get(f).is_some(), "{f}");
    }
    assert_eq!(j["settings"]["unit"], "data-refs");
    assert_eq!(j["settings"]["l2"]["sets"], 128);
}
