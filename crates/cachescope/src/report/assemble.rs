//! The second half of a report: the models run on what the pass measured (StatCache,
//! StatStack, HOTL, Smith, Ji et al.'s L2 model, OPT's curve), assembled into a [`Report`].
//! The miss-ratio curves come from [`method::curve_from`], so each is the curve
//! `mrc --method M` prints by default. A section whose model cannot run is left out with a
//! note saying why.

use crate::method::{self, CurvePolicy, Measured, Method, MrcOptions};
use crate::models::hotl;
use crate::models::smith;
use crate::reuse::{Mrc, StackDistances};
use crate::sampling::Cold;
use crate::sim::SimReport;
use crate::trace::Trace;
use crate::{Error, Result};

use super::catalog;
use super::collector::Collector;
use super::histogram::octave_histogram;
use super::hotl_points;
use super::l2::l2_report;
use super::model::*;
use super::options::{CollectOptions, MIN_INTERVALS};
use super::summaries::{attribution_summary, phases_summary};

impl Collector {
    /// The models and the report; `opt` gives OPT's curve (called once, last, so that it can
    /// be computed on another thread meanwhile).
    pub(super) fn models(
        self,
        trace: &Trace,
        stats: TraceSummary,
        max_bytes: u64,
        sizes: &[u64],
        opt: impl FnOnce() -> Result<Mrc>,
    ) -> Result<Report> {
        let mut notes = Vec::new();
        let line = self.options.line_size.bytes();

        let distances = self.sweep.three_c.distances();
        let curve = |measured, method, policy, sizes: &[u64]| {
            method::curve_from(
                measured,
                &curve_options(&self.options, method, policy, sizes),
            )
        };
        let mut mrc = vec![curve(
            Measured::StackDistances(&distances),
            Method::Exact,
            None,
            sizes,
        )?];
        let mut random = self.random.finish();
        random.points.retain(|p| p.size_bytes <= max_bytes);
        let random_sizes: Vec<u64> = random.points.iter().map(|p| p.size_bytes).collect();
        mrc.push(curve(
            Measured::Simulated(random),
            Method::Exact,
            Some(CurvePolicy::Random),
            &random_sizes,
        )?);
        let profile = self.sampler.finish();
        for method in [Method::Statcache, Method::Statstack] {
            match curve(Measured::Profile(&profile), method, None, sizes) {
                Ok(c) => mrc.push(c),
                Err(e) => notes.push(format!("{} left out: {e}", method.name())),
            }
        }
        let local = self.local.finish();
        mrc.push(curve(
            Measured::LocalFootprint(&local),
            Method::Hotl,
            None,
            sizes,
        )?);
        let (footprint, reuse_times) = self.fp.finish_with_reuse_times();
        mrc.push(curve(
            Measured::ReuseTimes(&reuse_times),
            Method::HotlRt,
            None,
            sizes,
        )?);
        let filmer = hotl::Filmer::new(&footprint);

        let three_c_reports = self.sweep.three_c.finish();
        let three_c_points =
            three_c_points(&distances, &three_c_reports, self.options.ways, max_bytes)?;

        let two_level = self
            .sweep
            .three_c
            .two_level()
            .ok_or(Error::InvalidParameter {
                name: "report",
                message: "the 3C sweep has no two-level simulation".into(),
            })?;
        let l1 = crate::models::l2::L1Histogram::from_stack_distances(&distances);
        let l2 = match l2_report(&l1, two_level, line) {
            Ok(r) => Some(r),
            Err(e) => {
                notes.push(format!("L2 model left out: {e}"));
                None
            }
        };

        let phases = if self.sweep.phases.intervals() < MIN_INTERVALS {
            notes.push(format!(
                "phases left out: {} interval(s) of {}; at least {MIN_INTERVALS} are needed \
                 (a shorter interval gives more)",
                self.sweep.phases.intervals(),
                self.options.phase_interval
            ));
            None
        } else {
            match self.sweep.phases.finish_on(self.threads) {
                Ok(r) => Some(phases_summary(&r)),
                Err(e) => {
                    notes.push(format!("phases left out: {e}"));
                    None
                }
            }
        };

        let policies = self.policies.finish(&three_c_reports, opt()?, max_bytes);
        // The simulations' caches and tables are done with: let them go before the naming
        // below (3-5 MB of resident memory on the gzip trace; the 3C caches' 11 MB are mostly
        // zeroed pages never touched).
        drop(self.sweep.three_c);
        drop(self.local);
        drop(self.random);
        drop(self.fp);
        // Last, once OPT's stack (on another thread) and the other models are done with their
        // tables: naming the code and heap sites loads the modules' DWARF line tables (a
        // distribution's libc debug file alone parses into 12-33 MB), which is this report's
        // peak of memory when it overlaps them.
        let callgraph = match (self.callgraph, &self.attribution) {
            (Some(g), Some(a)) => super::callgraph::summary(g.finish_named(a.buckets())?),
            _ => None,
        };
        let attribution = match self.attribution {
            None => None,
            Some(a) => Some(attribution_summary(&a.finish()?)),
        };
        let mut report = Report {
            version: FORMAT_VERSION,
            generator: concat!("cachescope-report ", env!("CARGO_PKG_VERSION")).into(),
            source: trace.source().to_string(),
            program: None,
            format: trace.format_name().to_string(),
            line_size: line,
            elapsed_seconds: self.started.elapsed().as_secs_f64(),
            stats,
            mrc,
            policies,
            sampling: SamplingSummary {
                rate: profile.rate(),
                seed: self.options.seed,
                samples: profile.samples().len() as u64,
                reuses: profile.reuses(),
                dangling: profile.dangling(),
            },
            working_set: hotl_points::working_set(&footprint, line)?,
            fill_time: hotl_points::fill_time(&filmer, &footprint, sizes, line),
            reuse_time: octave_histogram(
                "reuse_time",
                &reuse_times.reuse_time,
                reuse_times.distinct_lines,
            ),
            stack_distance: octave_histogram(
                "stack_distance",
                &distances.histogram,
                distances.cold,
            ),
            three_c: ThreeCReport {
                ways: self.options.ways,
                policy: "lru".into(),
                points: three_c_points,
            },
            l2,
            phases,
            attribution,
            callgraph,
            threads: {
                let ids = self.kinds.threads();
                (ids.len() > 1).then_some(ThreadsReport {
                    ids,
                    curves: None,
                    shards_curves: None,
                    sharing: None,
                })
            },
            what_to_change: None,
            pages: super::pages::section(&self.pages)?,
            notes,
            figures: Vec::new(),
            sampled: None,
        };
        report.figures = catalog::list(&report);
        Ok(report)
    }
}

/// The options of the report's curve by `method`: `mrc --method M`'s defaults, with the
/// report's line size, seed and sampling rate, and the models' cold misses estimated (the
/// report shows `miss_ratio` beside `miss_ratio_warm`).
fn curve_options(
    options: &CollectOptions,
    method: Method,
    policy: Option<CurvePolicy>,
    sizes: &[u64],
) -> MrcOptions {
    MrcOptions {
        method,
        policy,
        sizes: sizes.to_vec(),
        options: crate::reuse::Options {
            line_size: options.line_size,
            ..crate::reuse::Options::default()
        },
        seed: options.seed,
        rate: options.sample_rate,
        cold: Cold::Estimate,
        ..MrcOptions::default()
    }
}

/// The simulated caches up to `max_bytes`, their misses by class beside Smith's estimate.
fn three_c_points(
    distances: &StackDistances,
    reports: &[SimReport],
    ways: u32,
    max_bytes: u64,
) -> Result<Vec<ThreeCPoint>> {
    let smith_distances = smith::Distances::from_stack_distances(distances);
    let mut points = Vec::new();
    for report in reports {
        let level = &report.levels[0];
        let size = level.geometry.size_bytes();
        if size > max_bytes {
            continue;
        }
        let classes = level.stats.three_c.unwrap_or_default();
        let smith = smith::set_associative_mrc(&smith_distances, ways, &[size])?;
        points.push(ThreeCPoint {
            size_bytes: size,
            refs: level.stats.refs,
            misses: level.stats.misses,
            cold: classes.cold,
            capacity: classes.capacity,
            conflict: classes.conflict,
            smith_miss_ratio: smith.points[0].miss_ratio.unwrap_or(f64::NAN),
        });
    }
    Ok(points)
}
