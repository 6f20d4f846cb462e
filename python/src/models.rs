//! `simulate`, `l2` and `phases` for Python: the command line's passes and JSON documents
//! (`cachescope simulate --cache … --json`, `l2 --json`, `phases --json`).

use cachescope::analysis::Analysis;
use cachescope::models::l2::{L1Histogram, TwoLevelAnalysis, Variant, l2_mrc};
use cachescope::parallel::StackDistancePlan;
use cachescope::pass::{Analyses, Independent, Pass, Plan};
use cachescope::phases::{IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sim::{
    Geometry, LineMapping, Policy, PrefetchPolicy, SimAnalysis, SimOptions, SimReport, Writes,
};
use cachescope::tlb::{PageMap, PageRule, TlbConfig, TlbPreset, TlbSim, TlbSpec};
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

/// `simulate`'s TLB flags (docs/tlb.md): `--dtlb`, `--itlb`, `--stlb` arrays, the `--tlb`
/// preset, `--tlb-policy`, `--pages` rules and whether the walks reach the caches
/// (`--no-walks` is `walks: false`).
pub struct TlbRequest {
    pub dtlb: Vec<String>,
    pub itlb: Vec<String>,
    pub stlb: Vec<String>,
    pub preset: Option<String>,
    pub policy: String,
    pub pages: Vec<String>,
    pub walks: bool,
}

impl TlbRequest {
    /// The TLBs and page sizes asked for, `None` when no TLB is.
    fn parts(&self, seed: u64) -> Result<Option<(TlbConfig, PageMap)>> {
        let specs = |v: &[String]| {
            v.iter()
                .map(|s| TlbSpec::parse(s))
                .collect::<Result<Vec<_>>>()
        };
        let preset = self
            .preset
            .as_deref()
            .map(TlbPreset::from_name)
            .transpose()?;
        let policy = Policy::from_name(&self.policy, seed)?;
        let config = TlbConfig::from_parts(
            preset,
            &specs(&self.dtlb)?,
            &specs(&self.itlb)?,
            &specs(&self.stlb)?,
            policy,
        )?;
        let rules = self
            .pages
            .iter()
            .map(|p| PageRule::parse(p))
            .collect::<Result<Vec<_>>>()?;
        match config {
            None if !rules.is_empty() => Err(invalid(
                "pages",
                "page sizes apply to TLBs: give dtlb, itlb, stlb or tlb".into(),
            )),
            None => Ok(None),
            Some(c) => Ok(Some((c, PageMap::from_rules(&rules)?))),
        }
    }
}

/// `cachescope simulate --cache SPEC… --policy P --json`: independent caches side by side.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    spec: &Spec,
    caches: &[String],
    hardware: &Hardware,
    tlb: &TlbRequest,
    cores: Option<&crate::cores::CoresRequest>,
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
    let tlbs = tlb.parts(seed)?;
    if caches.is_empty() && tlbs.is_none() {
        return Err(invalid(
            "caches",
            "nothing to simulate: give caches like \"32K,8,64\" or TLBs".into(),
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
    if let Some(request) = cores {
        let cache = match caches {
            [one] if tlbs.is_none() => Geometry::parse(one)?,
            [_] => {
                // The CLI deals each thread's page walks into its stream in a pass of its own
                // (cmd/simulate/tlb.rs), which this package does not have.
                return Err(invalid(
                    "cores",
                    "with cores, TLBs are not simulated from Python: their page walks join \
                     each thread's stream in a pass only the command line has (use \
                     `cachescope simulate --cores N --dtlb …`)"
                        .into(),
                ));
            }
            _ => {
                return Err(invalid(
                    "caches",
                    "with cores, give one cache (each core's private cache): caches here are \
                     independent, and a machine's levels are the command line's flags \
                     (`simulate --cores N --L1 … --L2 …`)"
                        .into(),
                ));
            }
        };
        return crate::cores::simulate(
            spec, cache, request, policy, &opts, line_size, threads, progress,
        );
    }
    let mut sims = caches
        .iter()
        .map(|c| SimAnalysis::cache(Geometry::parse(c)?, policy, opts))
        .collect::<Result<Vec<_>>>()?;
    let mut trace = spec.open(line_size)?;
    let mut pass = Pass::new(threads).with_progress(progress);
    if let Some((config, pages)) = tlbs {
        // The CLI's document: the caches' reports, then the TLBs' keys.
        let tlb_sim = TlbSim::new(&config, pages, false)?;
        let (reports, t) =
            cachescope::tlb::simulate(&mut trace, &mut pass, sims, tlb_sim, tlb.walks)?;
        let reports: Vec<_> = reports.iter().map(SimReport::to_json).collect();
        let mut doc = json!({ "simulations": reports });
        if let (Some(o), Ok(serde_json::Value::Object(keys))) =
            (doc.as_object_mut(), serde_json::to_value(&t))
        {
            o.extend(keys);
        }
        return Ok(pretty(&doc));
    }
    let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
        .iter_mut()
        .map(|s| s as &mut (dyn Analysis + Send))
        .collect();
    pass.run(&mut trace, Independent(&mut analyses))?;
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
