//! [`Machine`]: the caches a library caller's advice and what-ifs simulate (the report's "What
//! to change" section, Python's `advise()` and `whatif()`), run with the library's simulators
//! exactly as `simulate` runs them: independent caches side by side, a hierarchy, or the
//! multi-core model over the threads interleaved in modelled time, by the code `simulate
//! --cores` runs ([`crate::cores::Simulation`] with its default [`Schedule`]).

use crate::analysis::Analysis;
use crate::cores::{Schedule, Simulation};
use crate::error::Result;
use crate::interleave::QuantumUnit;
use crate::layout::{Misses, geometry_label};
use crate::pass::{Hooks, Independent, Pass};
use crate::sim::{
    Geometry, HierarchyConfig, LevelSpec, MultiCoreConfig, MultiCoreReport, Policy, PrefetchPolicy,
    SimAnalysis, SimOptions, SimReport,
};
use crate::trace::Trace;

/// What is simulated.
#[derive(Clone, Debug)]
pub enum Machine {
    /// Independent caches fed the data references (`simulate --cache …`).
    Caches(Vec<Geometry>),
    /// L1I and L1D over L2 (`simulate --I1 --D1 --L2`), LRU, non-inclusive.
    Hierarchy(HierarchyConfig),
    /// `cores` cores each with a private L1 over a shared last level (`simulate --cores N
    /// --L1 L1 --LL LL --shared LL`), the threads interleaved in modelled time (its default).
    MultiCore {
        /// Cores.
        cores: u32,
        /// Each core's L1.
        l1: Geometry,
        /// The shared last level.
        ll: Geometry,
    },
}

/// A simulation's reports, as `simulate --json` prints them.
#[derive(Clone, Debug)]
pub enum Simulated {
    /// Single-core caches and hierarchies.
    Caches(Vec<SimReport>),
    /// The multi-core model, and what its quantum counted (cycles: modelled time).
    MultiCore(Box<MultiCoreReport>, QuantumUnit),
}

impl Simulated {
    /// The misses per level.
    pub fn misses(&self) -> Misses {
        match self {
            Simulated::Caches(r) => Misses::of_sims(r),
            Simulated::MultiCore(r, _) => Misses::of_multicore(r),
        }
    }

    /// `simulate --json`'s document.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Simulated::Caches(r) => {
                serde_json::json!({ "simulations": r.iter().map(SimReport::to_json).collect::<Vec<_>>() })
            }
            Simulated::MultiCore(r, unit) => {
                let schedule = Schedule::default();
                let mut v = serde_json::json!({
                    "interleave": schedule.interleave,
                    "quantum": schedule.quantum,
                    "quantum_unit": unit,
                });
                if let (Some(o), Ok(serde_json::Value::Object(rest))) =
                    (v.as_object_mut(), serde_json::to_value(r))
                {
                    o.extend(rest);
                }
                v
            }
        }
    }
}

fn g(s: &str) -> Geometry {
    Geometry::parse(s).expect("a valid default geometry")
}

impl Machine {
    /// `advise`'s default: 32 KiB 8-way L1I and L1D over a 1 MiB 16-way L2.
    pub fn default_single() -> Machine {
        Machine::Hierarchy(HierarchyConfig::new(
            g("32K,8,64"),
            g("32K,8,64"),
            g("1M,16,64"),
        ))
    }

    /// `advise --cores N`'s default: a 32 KiB 8-way L1 per core over a shared 8 MiB 16-way
    /// last level.
    pub fn default_cores(cores: u32) -> Machine {
        Machine::MultiCore {
            cores,
            l1: g("32K,8,64"),
            ll: g("8M,16,64"),
        }
    }

    /// The first data level, the next one, and the last.
    pub fn levels(&self) -> (Geometry, Option<Geometry>, Geometry) {
        match self {
            Machine::Caches(c) => (c[0], c.get(1).copied(), *c.last().expect("one cache")),
            Machine::Hierarchy(h) => (h.l1d, Some(h.l2), h.l3.unwrap_or(h.l2)),
            Machine::MultiCore { l1, ll, .. } => (*l1, Some(*ll), *ll),
        }
    }

    /// The cores, for a multi-core machine.
    pub fn cores(&self) -> Option<u32> {
        match self {
            Machine::MultiCore { cores, .. } => Some(*cores),
            _ => None,
        }
    }

    /// The flags `simulate` and `whatif` take for it, as `advise` writes them.
    pub fn flags(&self) -> String {
        let l = geometry_label;
        match self {
            Machine::Caches(c) => c.iter().map(|g| format!(" --cache {}", l(g))).collect(),
            Machine::Hierarchy(h) => {
                let l3 = h.l3.map(|g| format!(" --L3 {}", l(&g))).unwrap_or_default();
                format!(
                    " --I1 {} --D1 {} --L2 {}{l3}",
                    l(&h.l1i),
                    l(&h.l1d),
                    l(&h.l2)
                )
            }
            Machine::MultiCore { cores, l1, ll } => {
                format!(" --cores {cores} --L1 {} --LL {} --shared LL", l(l1), l(ll))
            }
        }
    }

    /// Simulates `trace` with `pass`; `prefetch`: a stride prefetcher this many strides ahead
    /// at the first data level (with cores, each core's L1 its own).
    pub fn run<H: Hooks>(
        &self,
        trace: &mut Trace,
        pass: &mut Pass<H>,
        prefetch: Option<u32>,
    ) -> Result<Simulated, H::Error> {
        let stride = match prefetch {
            Some(d) => PrefetchPolicy::from_name("stride", 1, d)?,
            None => PrefetchPolicy::None,
        };
        let mut sims: Vec<SimAnalysis> = match self {
            Machine::Caches(caches) => caches
                .iter()
                .map(|&c| {
                    let opts = SimOptions {
                        prefetch: stride,
                        ..SimOptions::default()
                    };
                    SimAnalysis::cache(c, Policy::Lru, opts)
                })
                .collect::<Result<_>>()?,
            Machine::Hierarchy(h) => {
                let mut h = h.clone();
                h.prefetch[1] = stride;
                vec![SimAnalysis::hierarchy(&h, SimOptions::default())?]
            }
            Machine::MultiCore { cores, l1, ll } => {
                let mut config = MultiCoreConfig::new(
                    *cores,
                    vec![LevelSpec::private("L1", *l1), LevelSpec::shared("L2", *ll)],
                );
                config.prefetch = vec![stride];
                let run = Simulation::run(trace, pass, &config, Schedule::default())?;
                let unit = run.unit.unwrap_or(QuantumUnit::Cycles);
                return Ok(Simulated::MultiCore(Box::new(run.report), unit));
            }
        };
        let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
            .iter_mut()
            .map(|s| s as &mut (dyn Analysis + Send))
            .collect();
        pass.run(trace, Independent(&mut analyses))?;
        Ok(Simulated::Caches(
            sims.iter().map(SimAnalysis::finish).collect(),
        ))
    }
}
