//! Miss-ratio methods: one function from a trace (or a sampling profile), the sizes and the
//! options to a curve, whichever method computes it. The command-line tool's `mrc`, the
//! Python package and any library user call [`mrc`]; which passes a method needs is decided
//! here, and they run through the caller's [`Pass`] (its threads and hooks: the command-line
//! tool's add the progress bar and MPI ranks).
//!
//! ```
//! use cachescope::method::{self, Method, MrcOptions};
//! use cachescope::pass::Pass;
//! use cachescope::workloads::{self, Workload};
//! # fn main() -> cachescope::Result<()> {
//! let w = workloads::generator(Workload::Loop, &workloads::Params::default())?;
//! let source = cachescope::Source::Workload("loop".into());
//! let mut trace = cachescope::trace::Trace::from_reader(Box::new(w), source);
//! let opts = MrcOptions { method: Method::Statstack, sizes: vec![4096, 65536], ..MrcOptions::default() };
//! let run = method::mrc(&mut trace, &opts, &mut Pass::new(2))?;
//! assert_eq!(run.mrc.points.len(), 2);
//! # Ok(()) }
//! ```

mod measured;
mod names;
mod per_thread;
mod sampled;

pub use measured::{Measure, Measured, curve_from};
pub use per_thread::{ThreadCurve, ThreadCurves, ThreadRun, mrc_per_thread};
pub(crate) use sampled::OptSample;
pub use sampled::{Spans, ThreadSpans, mrc_sampled};

use crate::error::{Error, Result};
use crate::models::hotl;
use crate::parallel::{FootprintPlan, ReuseTimePlan, StackDistancePlan};
use crate::pass::{Analyses, Hooks, Pass, Plan, Sampling};
use crate::reuse::{Mrc, Options, RandomReplacementAnalysis};
use crate::sampling::{Cold, Profile, SamplerOptions};
use crate::stages::Stage;
use crate::trace::Trace;

/// How a miss-ratio curve is obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Method {
    /// Exact: LRU stack distances (every size at once) or random-replacement simulation.
    #[default]
    Exact,
    /// StatCache (random replacement) from sampled reuse distances, or from a profile.
    Statcache,
    /// StatStack (LRU) from sampled reuse distances, or from a profile.
    Statstack,
    /// HOTL (LRU) from the average footprint (Xiang formula, one linear pass).
    Hotl,
    /// HOTL's reuse-time conversion (§2.7, augmented Denning-Schwartz).
    HotlRt,
    /// Miniature simulation (Waldspurger et al. 2017): any policy `simulate` knows, in caches
    /// scaled down by --mini-rate and fed the lines sampled at that rate.
    Mini,
}

/// The replacement policy a curve models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum CurvePolicy {
    /// Least recently used.
    Lru,
    /// Random replacement (seeded).
    Random,
    /// Belady's optimal replacement (MIN), the bound no policy beats: `mrc --method exact`.
    Opt,
    /// First in, first out (exact per size, or mini).
    Fifo,
    /// Tree pseudo-LRU (needs --ways).
    Plru,
    /// Static RRIP, Jaleel et al. 2010 (needs --ways).
    Srrip,
    /// Bimodal RRIP (needs --ways).
    Brrip,
    /// Dynamic RRIP, set dueling (needs --ways).
    Drrip,
}

/// [`MrcOptions::mini_min_sets`]'s default: 64 sets, DRRIP's leader sets, and the floor that
/// took the mean error on real programs from 2.2 pp to docs/accuracy/mini.md's figures.
pub const DEFAULT_MINI_MIN_SETS: u64 = 64;

/// Everything a curve depends on besides its input. The defaults are the command line's.
#[derive(Clone, Debug)]
pub struct MrcOptions {
    /// The method.
    pub method: Method,
    /// The policy; `None` is the method's own (LRU, or random for StatCache).
    pub policy: Option<CurvePolicy>,
    /// Cache sizes in bytes (each holds `size / line_size` lines).
    pub sizes: Vec<u64>,
    /// Line size and whether instruction fetches count.
    pub options: Options,
    /// Seed of random replacement, of BRRIP's draws and of the sampler.
    pub seed: u64,
    /// Sampling rate of StatCache and StatStack.
    pub rate: f64,
    /// The sampler's time slot in counted references (the models solve each slot alone).
    pub slot: u64,
    /// Set-associative caches of this many ways (Smith's formula for exact LRU and HOTL; a
    /// simulated geometry for the other policies).
    pub ways: Option<u32>,
    /// Whether the models estimate cold misses too.
    pub cold: Cold,
    /// Miniature simulation's sampling rate in (0, 1].
    pub mini_rate: f64,
    /// Sets every set-associative miniature keeps at least (exact below that many): the
    /// sampled sets of a small cache are too few for its miss ratio.
    pub mini_min_sets: u64,
    /// Miniature simulation's plain estimate, misses over the references kept, instead of
    /// over those the rate should keep (SHARDS's adjustment, the default: see `mini`).
    pub mini_unadjusted: bool,
    /// Threads for the models' own work (StatCache solves sizes side by side).
    pub threads: usize,
    /// HOTL's reading: time-local (the default) or the paper's whole-trace conversion.
    pub hotl_variant: hotl::HotlVariant,
}

impl Default for MrcOptions {
    fn default() -> Self {
        MrcOptions {
            method: Method::Exact,
            policy: None,
            sizes: crate::sampling::working_set_sizes(),
            options: Options::default(),
            seed: 1,
            rate: crate::sampling::DEFAULT_RATE,
            slot: crate::sampling::DEFAULT_SLOT_REFS,
            ways: None,
            cold: Cold::Exclude,
            mini_rate: 0.01,
            mini_min_sets: DEFAULT_MINI_MIN_SETS,
            mini_unadjusted: false,
            threads: 1,
            hotl_variant: hotl::HotlVariant::default(),
        }
    }
}

impl MrcOptions {
    /// The sampler settings of a sampled method.
    pub fn sampler(&self) -> SamplerOptions {
        SamplerOptions {
            rate: self.rate,
            seed: self.seed,
            slot_refs: self.slot,
            line_size: self.options.line_size,
            include_instructions: self.options.include_instructions,
        }
    }

    /// The policy the curve models: the method's own unless asked; an error when a model is
    /// asked for another policy, or `ways` for a curve that cannot have them.
    pub fn policy(&self) -> Result<CurvePolicy> {
        let modelled = match self.method {
            Method::Exact | Method::Mini => None,
            Method::Statcache => Some(CurvePolicy::Random),
            Method::Statstack | Method::Hotl | Method::HotlRt => Some(CurvePolicy::Lru),
        };
        let policy = match (modelled, self.policy) {
            (Some(m), Some(p)) if p != m => {
                return Err(invalid(format!(
                    "--method {} models {} replacement only; use --method exact for {}",
                    self.method.name(),
                    m.long_name(),
                    p.long_name()
                )));
            }
            (Some(m), _) => m,
            (None, p) => p.unwrap_or(CurvePolicy::Lru),
        };
        if self.ways.is_some() && policy == CurvePolicy::Opt {
            return Err(invalid(
                "--ways (Smith's formula) needs an LRU stack-distance distribution: \
                 --method exact or hotl",
            ));
        }
        Ok(policy)
    }
}

/// A curve and, for the sampled methods, the profile it was modelled from.
#[derive(Debug)]
pub struct MrcRun {
    /// The curve.
    pub mrc: Mrc,
    /// The samples behind a StatCache or StatStack curve.
    pub profile: Option<Profile>,
    /// The references the curve counts (data references, and instruction fetches when
    /// included). 0 when the trace has none: every ratio of the curve is then 0 by
    /// convention, not a measurement (the CLI says so).
    pub refs: u64,
}

/// The curve of `trace` by `opts.method`, its passes run by `pass`: the pass measures what
/// [`MrcOptions::measure`] names, [`curve_from`] makes the curve.
pub fn mrc<H: Hooks>(
    trace: &mut Trace,
    opts: &MrcOptions,
    pass: &mut Pass<H>,
) -> Result<MrcRun, H::Error> {
    let options = opts.options;
    let sizes = opts.sizes.as_slice();
    let (mrc, refs) = match opts.measure()? {
        Measure::StackDistances => {
            let d = pass.run(trace, Plan(&StackDistancePlan { options }))?;
            (curve_from(Measured::StackDistances(&d), opts)?, d.refs)
        }
        Measure::Profile => {
            let profile = pass.run(trace, Sampling(opts.sampler()))?;
            let profile = profile.with_source(trace.source().to_string());
            return Ok(mrc_of_profile(profile, opts)?);
        }
        Measure::LocalFootprint => {
            // One sequential pass: the stretches' histograms follow the trace's order.
            let mut local = hotl::LocalFootprintAnalysis::new(options);
            pass.run(trace, Analyses(&mut [&mut local]))?;
            let local = local.finish();
            (
                curve_from(Measured::LocalFootprint(&local), opts)?,
                local.refs,
            )
        }
        Measure::Footprint => {
            let fp = pass.run(trace, Plan(&FootprintPlan::new(options, &[])?))?;
            (curve_from(Measured::Footprint(&fp), opts)?, fp.refs)
        }
        Measure::ReuseTimes => {
            let rt = pass.run(trace, Plan(&ReuseTimePlan { options }))?;
            (curve_from(Measured::ReuseTimes(&rt), opts)?, rt.refs)
        }
        Measure::Opt => {
            let mut opt = crate::opt::OptAnalysis::new(options)?;
            pass.run(trace, Analyses(&mut [&mut opt]))?;
            let refs = opt.refs();
            let (next_uses, stack) = (Stage::new("OPT's next uses"), Stage::new("OPT's stack"));
            let stages = vec![next_uses.clone(), stack.clone()];
            let curve = pass.hooks().after_pass(stages, || {
                opt.finish_staged(sizes, Some((&next_uses, &stack)))
            })?;
            (curve_from(Measured::Simulated(curve), opts)?, refs)
        }
        Measure::RandomReplacement => {
            check_random_sizes(sizes)?;
            let mut rr = RandomReplacementAnalysis::new(options, sizes, opts.seed);
            pass.run(trace, Analyses(&mut [&mut rr]))?;
            (
                curve_from(Measured::Simulated(rr.finish()), opts)?,
                rr.refs(),
            )
        }
        Measure::Simulation(sim) => {
            let mut mini = simulation(opts, sim)?;
            pass.run(trace, Analyses(&mut [&mut mini]))?;
            (
                curve_from(Measured::Simulated(mini.finish()), opts)?,
                mini.all_refs(),
            )
        }
    };
    Ok(MrcRun {
        mrc,
        profile: None,
        refs,
    })
}

/// Refuses more sizes than exact random replacement simulates (one cache each).
fn check_random_sizes(sizes: &[u64]) -> Result<()> {
    if sizes.len() > 4096 {
        return Err(invalid(format!(
            "exact random replacement simulates one cache per size; {} sizes is too many \
             (at most 4096)",
            sizes.len()
        )));
    }
    Ok(())
}

/// The caches of a simulated curve of `policy`: whole for `exact`, miniatures for `mini`.
fn simulation(opts: &MrcOptions, policy: crate::sim::Policy) -> Result<crate::mini::MiniSim> {
    let (rate, min_sets) = match opts.method {
        Method::Mini => (opts.mini_rate, opts.mini_min_sets),
        _ => (1.0, 1),
    };
    let mini = crate::mini::MiniSim::with_min_sets(
        opts.options,
        policy,
        opts.ways,
        &opts.sizes,
        rate,
        min_sets,
    )?;
    Ok(if opts.mini_unadjusted {
        mini.unadjusted()
    } else {
        mini
    })
}

/// The curve a sampled method (StatCache or StatStack) models from `profile`, which must have
/// been sampled with `opts`' line size.
pub fn mrc_of_profile(profile: Profile, opts: &MrcOptions) -> Result<MrcRun> {
    if !opts.method.is_sampled() {
        opts.policy()?;
        return Err(invalid(format!(
            "{} is a sampling profile: model it with --method statcache or --method statstack \
             (the other methods need the trace; --method {} does)",
            profile.source(),
            opts.method.name()
        )));
    }
    let mrc = curve_from(Measured::Profile(&profile), opts)?;
    Ok(MrcRun {
        mrc,
        refs: profile.refs(),
        profile: Some(profile),
    })
}

#[cfg(test)]
mod tests;

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidParameter {
        name: "method",
        message: message.into(),
    }
}
