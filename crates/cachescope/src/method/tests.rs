//! Each method through [`mrc`] equals the analysis it names run by hand, and the policy
//! checks refuse what the command line refuses.

use super::*;
use crate::access::LineSize;
use crate::pass::Analyses;
use crate::sampling::Sampler;
use crate::workloads::{self, Params, Workload};

const SIZES: [u64; 5] = [1024, 4096, 16384, 65536, 262144];

fn trace() -> Trace {
    let p = Params {
        refs: Some(60_000),
        ..Params::default()
    };
    let w = workloads::generator(Workload::Zipf, &p).unwrap();
    Trace::from_reader(Box::new(w), crate::Source::Workload("zipf".into()))
}

fn opts(method: Method, policy: Option<CurvePolicy>) -> MrcOptions {
    MrcOptions {
        method,
        policy,
        sizes: SIZES.to_vec(),
        rate: 0.05,
        ..MrcOptions::default()
    }
}

fn curve(o: &MrcOptions, threads: usize) -> MrcRun {
    mrc(&mut trace(), o, &mut Pass::new(threads)).unwrap()
}

#[test]
fn exact_lru_is_the_stack_distance_curve_on_any_thread_count() {
    let mut sd = crate::reuse::StackDistanceAnalysis::new(Options::default());
    Pass::new(1)
        .run(&mut trace(), Analyses(&mut [&mut sd]))
        .unwrap();
    let want = sd.finish().mrc(&SIZES);
    for threads in [1, 2] {
        let got = curve(&opts(Method::Exact, None), threads).mrc;
        assert_eq!(got.points, want.points);
        assert_eq!((got.method.as_str(), got.policy.as_str()), ("exact", "lru"));
    }
}

#[test]
fn sampled_methods_model_the_samplers_profile() {
    let o = opts(Method::Statstack, None);
    let mut sampler = Sampler::new(o.sampler()).unwrap();
    Pass::new(1)
        .run(&mut trace(), Analyses(&mut [&mut sampler]))
        .unwrap();
    let profile = sampler.finish();
    for method in [Method::Statstack, Method::Statcache] {
        let o = opts(method, None);
        let got = curve(&o, 2);
        assert_eq!(got.profile.as_ref().unwrap().samples(), profile.samples());
        let want = mrc_of_profile(profile.clone(), &o).unwrap().mrc;
        assert_eq!(got.mrc.points, want.points, "{method:?}");
    }
    assert_eq!(
        curve(&opts(Method::Statcache, None), 1).mrc.policy,
        "random"
    );
}

#[test]
fn opt_is_never_above_lru_and_mini_at_rate_one_is_exact_simulation() {
    let lru = curve(&opts(Method::Exact, None), 1).mrc;
    let opt = curve(&opts(Method::Exact, Some(CurvePolicy::Opt)), 1).mrc;
    for (o, l) in opt.points.iter().zip(&lru.points) {
        assert!(o.miss_ratio_warm <= l.miss_ratio_warm + 1e-12);
    }
    let mut exact = opts(Method::Exact, Some(CurvePolicy::Fifo));
    exact.ways = Some(4);
    let mut mini = exact.clone();
    mini.method = Method::Mini;
    mini.mini_rate = 1.0;
    let (e, m) = (curve(&exact, 1).mrc, curve(&mini, 1).mrc);
    assert_eq!(e.points, m.points);
    assert_eq!((e.method.as_str(), m.method.as_str()), ("exact", "mini"));
}

#[test]
fn models_refuse_other_policies_and_profiles_other_methods() {
    let e = opts(Method::Statcache, Some(CurvePolicy::Lru))
        .policy()
        .unwrap_err()
        .to_string();
    assert!(e.contains("models random replacement only"), "{e}");
    let mut o = opts(Method::Exact, Some(CurvePolicy::Opt));
    o.ways = Some(8);
    assert!(o.policy().is_err());
    let run = curve(&opts(Method::Statstack, None), 1);
    let e = mrc_of_profile(run.profile.unwrap(), &opts(Method::Hotl, None)).unwrap_err();
    assert!(e.to_string().contains("is a sampling profile"), "{e}");
    let mut o = opts(Method::Statstack, None);
    o.options.line_size = LineSize::new(32).unwrap();
    let p = curve(&opts(Method::Statstack, None), 1).profile.unwrap();
    assert!(mrc_of_profile(p, &o).is_err());
}

#[test]
fn each_method_names_its_measurement_and_refuses_another() {
    let measure = |method, policy, ways| {
        let mut o = opts(method, policy);
        o.ways = ways;
        o.measure()
    };
    assert_eq!(
        measure(Method::Exact, None, Some(4)).unwrap(),
        Measure::StackDistances
    );
    assert_eq!(
        measure(Method::Exact, Some(CurvePolicy::Random), Some(4)).unwrap(),
        Measure::Simulation(crate::sim::Policy::Random { seed: 1 })
    );
    assert_eq!(
        measure(Method::Hotl, None, None).unwrap(),
        Measure::LocalFootprint
    );
    let mut paper = opts(Method::Hotl, None);
    paper.hotl_variant = hotl::HotlVariant::Paper;
    assert_eq!(paper.measure().unwrap(), Measure::Footprint);
    assert!(Measure::Footprint.is_distributed() && !Measure::LocalFootprint.is_distributed());
    let e = measure(Method::Mini, Some(CurvePolicy::Opt), None).unwrap_err();
    assert!(e.to_string().contains("OPT's exact curve"), "{e}");

    let mut sd = crate::reuse::StackDistanceAnalysis::new(Options::default());
    Pass::new(1)
        .run(&mut trace(), Analyses(&mut [&mut sd]))
        .unwrap();
    let d = sd.finish();
    let e = curve_from(Measured::StackDistances(&d), &opts(Method::HotlRt, None)).unwrap_err();
    assert!(e.to_string().contains("needs ReuseTimes measured"), "{e}");
    // Smith's formula applies to a measurement as it does inside `mrc`.
    let mut smith = opts(Method::Exact, None);
    smith.ways = Some(4);
    let got = curve_from(Measured::StackDistances(&d), &smith).unwrap();
    assert_eq!(got.points, curve(&smith, 1).mrc.points);
    assert_ne!(got.points, d.mrc(&SIZES).points);
}

#[test]
fn both_hotl_readings_equal_their_analyses_run_by_hand() {
    let mut local = hotl::LocalFootprintAnalysis::new(Options::default());
    let mut fp = hotl::FootprintAnalysis::new(Options::default(), &[]).unwrap();
    Pass::new(1)
        .run(&mut trace(), Analyses(&mut [&mut local, &mut fp]))
        .unwrap();
    let local = local.finish().curve().mrc(&SIZES);
    let paper = hotl::Filmer::new(&fp.finish()).mrc(&SIZES);
    assert_eq!(curve(&opts(Method::Hotl, None), 2).mrc, local);
    let mut o = opts(Method::Hotl, None);
    o.hotl_variant = hotl::HotlVariant::Paper;
    assert_eq!(curve(&o, 2).mrc, paper);
}

/// Every measurement reports the references its curve counts: the trace's data references, so
/// the CLI can tell a curve of none (ratios 0 by convention) from one of no misses.
#[test]
fn every_method_counts_the_references_of_its_curve() {
    let mut sd = crate::reuse::StackDistanceAnalysis::new(Options::default());
    Pass::new(1)
        .run(&mut trace(), Analyses(&mut [&mut sd]))
        .unwrap();
    let want = sd.finish().refs;
    assert!(want > 0);
    let mut fifo = opts(Method::Mini, Some(CurvePolicy::Fifo));
    fifo.ways = Some(4);
    let mut paper = opts(Method::Hotl, None);
    paper.hotl_variant = crate::models::hotl::HotlVariant::Paper;
    let all = [
        opts(Method::Exact, None),
        opts(Method::Exact, Some(CurvePolicy::Opt)),
        opts(Method::Exact, Some(CurvePolicy::Random)),
        fifo,
        opts(Method::Statstack, None),
        opts(Method::Statcache, None),
        opts(Method::Hotl, None),
        paper,
        opts(Method::HotlRt, None),
    ];
    for o in &all {
        assert_eq!(curve(o, 2).refs, want, "{:?} {:?}", o.method, o.policy);
    }
}
