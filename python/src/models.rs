//! `simulate`, `l2` and `phases` for Python: the command line's passes and JSON documents
//! (`cachescope simulate --cache … --json`, `l2 --json`, `phases --json`).

use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::parallel::StackDistancePlan;
use cachescope::pass::{Analyses, Independent, Pass, Plan};
use cachescope::phases::{IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sim::{
    Geometry, LineMapping, Policy, PrefetchPolicy, SimAnalysis, SimOptions, Writes,
};
use cachescope::{Error, LineSize, Result};
use serde_json::json;

use crate::passes::{Progress, pretty};
use crate::source::Spec;

fn invalid(name: &'static str, message: String) -> Error {
    Error::InvalidParameter { name, message }
}

/// `simulate`'s write-back and prefetcher flags (`--writebacks`, `--write-allocate`,
/// `--prefetch`, `--prefetch-degree`, `--prefetch-distance`) and `--utilization`.
pub struct Hardware {
    pub writebacks: bool,
    pub write_allocate: bool,
    pub prefetch: String,
    pub prefetch_degree: u32,
    pub prefetch_distance: u32,
    pub utilization: bool,
}

/// `cachescope simulate --cache SPEC… --policy P --json`: independent caches side by side.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    spec: &Spec,
    caches: &[String],
    hardware: &Hardware,
    policy: &str,
    seed: u64,
    line_size: LineSize,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let policy = Policy::from_name(policy, seed)?;
    if policy == Policy::Opt {
        return Err(invalid(
            "policy",
            "OPT needs the future: use mrc(method=\"exact\", policy=\"opt\")".into(),
        ));
    }
    if caches.is_empty() {
        return Err(invalid(
            "caches",
            "nothing to simulate: give caches like \"32K,8,64\"".into(),
        ));
    }
    let opts = SimOptions {
        mapping: LineMapping::FirstByte,
        three_c: false,
        writes: (hardware.writebacks || !hardware.write_allocate).then_some(Writes {
            allocate: hardware.write_allocate,
        }),
        prefetch: PrefetchPolicy::from_name(
            &hardware.prefetch,
            hardware.prefetch_degree,
            hardware.prefetch_distance,
        )?,
        utilization: hardware.utilization,
    };
    let mut sims = caches
        .iter()
        .map(|c| SimAnalysis::cache(Geometry::parse(c)?, policy, opts))
        .collect::<Result<Vec<_>>>()?;
    let mut trace = spec.open(line_size)?;
    let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
        .iter_mut()
        .map(|s| s as &mut (dyn Analysis + Send))
        .collect();
    Pass::new(threads)
        .with_progress(progress)
        .run(&mut trace, Independent(&mut analyses))?;
    let reports: Vec<_> = sims.iter().map(|s| s.finish().to_json()).collect();
    Ok(pretty(&json!({ "simulations": reports })))
}

/// `cachescope l2 --json`: L2 miss ratios from the L1 stack distances, with the exact
/// two-level simulation of the same pass when `simulate`.
#[allow(clippy::too_many_arguments)]
pub fn l2(
    spec: &Spec,
    l1: u64,
    l2: &[u64],
    policy: &str,
    variant: &str,
    simulate: bool,
    seed: u64,
    line_size: LineSize,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let l1_lines = l1 / line_size.bytes();
    if l1_lines == 0 {
        return Err(invalid(
            "l1",
            format!("{l1}: smaller than one {}-byte line", line_size.bytes()),
        ));
    }
    let policy = match policy {
        "lru" => Policy::Lru,
        "random" => Policy::Random { seed },
        p => {
            return Err(invalid(
                "policy",
                format!("{p:?}: the L2 model covers lru and random"),
            ));
        }
    };
    let variant = match variant {
        "fills" => Variant::Fills,
        "resident" => Variant::FootprintResident,
        "footprint" => Variant::Footprint,
        "paper" => Variant::Paper,
        v => {
            return Err(invalid(
                "variant",
                format!("{v:?}: one of fills, resident, footprint, paper"),
            ));
        }
    };
    let options = Options {
        line_size,
        ..Options::default()
    };
    let mut trace = spec.open(line_size)?;
    let (distances, simulated) = if simulate {
        let mut sim = TwoLevelAnalysis::new(line_size.bytes(), l1_lines, l2, policy)?;
        let mut sd = StackDistanceAnalysis::new(options);
        Pass::new(threads)
            .with_progress(progress)
            .run(&mut trace, Independent(&mut [&mut sd, &mut sim]))?;
        (sd.finish(), Some(sim.finish().mrc()))
    } else {
        let d = Pass::new(threads)
            .with_progress(progress)
            .run(&mut trace, Plan(&StackDistancePlan { options }))?;
        (d, None)
    };
    let hist = L1Histogram::from_stack_distances(&distances);
    let model = l2_mrc(&hist, l1_lines, l2, policy, variant)?;
    let mut v = serde_json::to_value(&model).expect("serializable");
    v["l1_lines"] = l1_lines.into();
    if let Some(s) = simulated {
        v["simulated"] = serde_json::to_value(s).expect("serializable");
    }
    Ok(pretty(&v))
}

/// `cachescope phases --json`: phases per interval and every method's scores; the
/// representative intervals simulated in a second pass unless `no_simpoint`.
#[allow(clippy::too_many_arguments)]
pub fn phases(
    spec: &Spec,
    interval: u64,
    unit: &str,
    k: &str,
    methods: &str,
    l2: &str,
    l1: Option<&str>,
    bits: u32,
    seed: u64,
    no_simpoint: bool,
    threads: usize,
) -> Result<String> {
    let options = PhaseOptions {
        interval,
        unit: match unit {
            "instructions" => IntervalUnit::Instructions,
            "data-refs" => IntervalUnit::DataRefs,
            "auto" => IntervalUnit::Auto,
            u => {
                return Err(invalid(
                    "unit",
                    format!("{u:?}: one of auto, instructions, data-refs"),
                ));
            }
        },
        k: KChoice::parse(k)?,
        methods: Method::parse_list(methods)?,
        l2: Geometry::parse(l2)?,
        l1: l1.map(Geometry::parse).transpose()?,
        setvector_bits: bits,
        seed,
        ..PhaseOptions::default()
    };
    let line_size = options.l2.line_size();
    let mut analysis = PhaseAnalysis::new(options)?;
    let mut pass = Pass::new(threads);
    pass.run(&mut spec.open(line_size)?, Analyses(&mut [&mut analysis]))?;
    let mut report = analysis.finish()?;
    if !no_simpoint {
        let mut reps = report.representative_simulation()?;
        pass.run(&mut spec.open(line_size)?, Analyses(&mut [&mut reps]))?;
        report.apply_representatives(&reps.finish())?;
    }
    Ok(pretty(&report))
}
