//! From what a pass measured to a method's curve: [`MrcOptions::measure`] says what a method
//! needs measured, [`curve_from`] turns that measurement into the curve. [`super::mrc`] runs
//! its own pass in between; the report runs one pass for all its analyses and calls
//! [`curve_from`] once per curve, so both show the same curve with the same defaults.

use super::{CurvePolicy, Method, MrcOptions, invalid};
use crate::error::Result;
use crate::models::hotl::{self, Filmer, Footprint, LocalFootprint};
use crate::models::{smith, statcache, statstack};
use crate::reuse::{Mrc, ReuseTimes, StackDistances};
use crate::sampling::Profile;
use crate::sim::Policy;

/// What a pass must measure for a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Exact LRU stack distances ([`crate::parallel::StackDistancePlan`]).
    StackDistances,
    /// A sampling profile (StatCache, StatStack).
    Profile,
    /// The whole trace's average footprint ([`crate::parallel::FootprintPlan`]): HOTL's
    /// paper reading.
    Footprint,
    /// The stretches' footprints ([`hotl::LocalFootprintAnalysis`], one ordered pass): HOTL's
    /// time-local reading.
    LocalFootprint,
    /// Reuse times ([`crate::parallel::ReuseTimePlan`]): HOTL's reuse-time conversion.
    ReuseTimes,
    /// OPT's exact curve ([`crate::opt::OptAnalysis`]).
    Opt,
    /// Fully associative random replacement, one cache per size
    /// ([`crate::reuse::RandomReplacementAnalysis`]).
    RandomReplacement,
    /// Simulated caches of this policy, one per size ([`crate::mini::MiniSim`]: whole caches
    /// for `exact`, miniatures for `mini`).
    Simulation(Policy),
}

impl Measure {
    /// Whether the measurement is a plan the pass can split over threads, parts and MPI
    /// ranks; the others are fed the trace in order, on one process.
    pub fn is_distributed(self) -> bool {
        matches!(
            self,
            Measure::StackDistances | Measure::Profile | Measure::Footprint | Measure::ReuseTimes
        )
    }
}

/// A pass's measurement, from which [`curve_from`] computes a curve.
#[derive(Debug)]
pub enum Measured<'a> {
    /// For [`Measure::StackDistances`].
    StackDistances(&'a StackDistances),
    /// For [`Measure::Profile`]; sampled with the options' line size.
    Profile(&'a Profile),
    /// For [`Measure::Footprint`].
    Footprint(&'a Footprint),
    /// For [`Measure::LocalFootprint`].
    LocalFootprint(&'a LocalFootprint),
    /// For [`Measure::ReuseTimes`].
    ReuseTimes(&'a ReuseTimes),
    /// For [`Measure::Opt`], [`Measure::RandomReplacement`] and [`Measure::Simulation`]: the
    /// simulated curve at the options' sizes (a simulation is its own curve).
    Simulated(Mrc),
}

impl Measured<'_> {
    /// Whether this is the kind of measurement `m` asks for.
    fn answers(&self, m: Measure) -> bool {
        matches!(
            (self, m),
            (Measured::StackDistances(_), Measure::StackDistances)
                | (Measured::Profile(_), Measure::Profile)
                | (Measured::Footprint(_), Measure::Footprint)
                | (Measured::LocalFootprint(_), Measure::LocalFootprint)
                | (Measured::ReuseTimes(_), Measure::ReuseTimes)
                | (
                    Measured::Simulated(_),
                    Measure::Opt | Measure::RandomReplacement | Measure::Simulation(_)
                )
        )
    }

    fn kind(&self) -> &'static str {
        match self {
            Measured::StackDistances(_) => "stack distances",
            Measured::Profile(_) => "a sampling profile",
            Measured::Footprint(_) => "a footprint",
            Measured::LocalFootprint(_) => "a time-local footprint",
            Measured::ReuseTimes(_) => "reuse times",
            Measured::Simulated(_) => "a simulated curve",
        }
    }
}

impl MrcOptions {
    /// What a pass must measure for this curve; an error for a combination no method computes
    /// (the errors of [`MrcOptions::policy`], and OPT's miniature).
    pub fn measure(&self) -> Result<Measure> {
        let policy = self.policy()?;
        Ok(match (self.method, policy) {
            (Method::Exact, CurvePolicy::Lru) => Measure::StackDistances,
            (Method::Exact, CurvePolicy::Opt) => Measure::Opt,
            (Method::Exact, CurvePolicy::Random) if self.ways.is_none() => {
                Measure::RandomReplacement
            }
            (Method::Statcache | Method::Statstack, _) => Measure::Profile,
            (Method::Hotl, _) => match self.hotl_variant {
                hotl::HotlVariant::Local => Measure::LocalFootprint,
                hotl::HotlVariant::Paper => Measure::Footprint,
            },
            (Method::HotlRt, _) => Measure::ReuseTimes,
            // Every other policy, set-associative curves, and miniatures: one cache per size.
            (Method::Exact | Method::Mini, p) => match p.simulated(self.seed) {
                Some(sim) => Measure::Simulation(sim),
                None => {
                    return Err(invalid(
                        "--method mini simulates caches: OPT's exact curve is --method exact \
                         --policy opt",
                    ));
                }
            },
        })
    }
}

/// The curve `opts` asks for, from `measured`, which must be what [`MrcOptions::measure`]
/// names: every method's model and defaults (Smith's formula for `ways`, HOTL's reading,
/// the models' cold misses) are applied here and nowhere else.
pub fn curve_from(measured: Measured<'_>, opts: &MrcOptions) -> Result<Mrc> {
    let need = opts.measure()?;
    if !measured.answers(need) {
        return Err(invalid(format!(
            "--method {} needs {need:?} measured, not {}",
            opts.method.name(),
            measured.kind()
        )));
    }
    let sizes = opts.sizes.as_slice();
    let set_associative = |d: &smith::Distances, ways| smith::set_associative_mrc(d, ways, sizes);
    Ok(match measured {
        Measured::StackDistances(d) => match opts.ways {
            Some(w) => set_associative(&smith::Distances::from_stack_distances(d), w)?,
            None => d.mrc(sizes),
        },
        Measured::Profile(profile) => {
            profile.expect_line_size(opts.options.line_size)?;
            match opts.method {
                Method::Statcache => statcache::mrc_on(profile, sizes, opts.cold, opts.threads)?,
                _ => statstack::mrc(profile, sizes, opts.cold)?,
            }
        }
        Measured::LocalFootprint(local) => {
            let model = local.curve();
            match opts.ways {
                Some(w) => set_associative(&model.stack_distances(), w)?,
                None => model.mrc(sizes),
            }
        }
        Measured::Footprint(fp) => {
            let filmer = Filmer::new(fp);
            match opts.ways {
                Some(w) => set_associative(&filmer.stack_distances(), w)?,
                None => filmer.mrc(sizes),
            }
        }
        Measured::ReuseTimes(rt) => hotl::reuse_time_mrc(rt, sizes),
        Measured::Simulated(mut mrc) => {
            // A miniature simulated whole is the exact curve.
            if opts.method == Method::Exact {
                mrc.method = "exact".into();
            }
            mrc
        }
    })
}
