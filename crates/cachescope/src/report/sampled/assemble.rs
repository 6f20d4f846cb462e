//! The sampled report: what the pass over the sampled stream measured, scaled by the rate and
//! run through the models the exact report runs, into a [`Report`] of the same schema.

use crate::Result;
use crate::method::{self, CurvePolicy, Measured, Method, MrcOptions};
use crate::models::hotl::{self, HotlVariant};
use crate::models::smith;
use crate::reuse::{Mrc, MrcPoint, ShardsDistances, sizes_log_range};
use crate::sampling::Cold;
use crate::trace::Trace;

use super::super::catalog;
use super::super::l2::l2_report;
use super::super::model::*;
use super::super::options::{L2_BYTES, MIN_BYTES, MIN_INTERVALS, max_bytes};
use super::super::summaries::{attribution_summary, phases_summary};
use super::collector::{POLICIES, SampledCollector};
use super::expected;
use super::scale;

impl SampledCollector {
    /// Runs the models on what the pass measured and builds the report of `trace`, the
    /// sampled trace that was read (its name, format and StatCache profile).
    pub fn finish(self, trace: &mut Trace) -> Result<Report> {
        let mut notes = Vec::new();
        let line = self.options.line_size.bytes();
        let shards = self.shards.finish();
        let rate = shards.rate;
        let distinct = shards.cold.round() as u64;
        let stats = self.kinds.summary(distinct, line);
        let max_bytes = max_bytes(stats.bytes_touched, line);
        let sizes = sizes_log_range(MIN_BYTES.max(line), max_bytes, 8)?;
        let opts = |method, policy| curve_options(&self.options, method, policy, &sizes);

        let mut mrc = vec![shards.mrc(&sizes)];
        let mut random = self.random.finish();
        random.points.retain(|p| p.size_bytes <= max_bytes);
        mrc.push(random);
        let profile = trace.reuse_profile();
        if let Some(profile) = &profile {
            for method in [Method::Statcache, Method::Statstack] {
                match method::curve_from(Measured::Profile(profile), &opts(method, None)) {
                    Ok(c) => mrc.push(c),
                    Err(e) => notes.push(format!("{} left out: {e}", method.name())),
                }
            }
        } else {
            notes.push("StatCache and StatStack left out: the stream had no reuse profile".into());
        }
        let (footprint, reuse_times) = self.fp.finish_with_reuse_times();
        let hotl_opts = MrcOptions {
            hotl_variant: HotlVariant::Paper,
            ..opts(Method::Hotl, None)
        };
        mrc.push(method::curve_from(
            Measured::Footprint(&footprint),
            &hotl_opts,
        )?);
        mrc.push(method::curve_from(
            Measured::ReuseTimes(&reuse_times),
            &opts(Method::HotlRt, None),
        )?);
        let filmer = hotl::Filmer::new(&footprint);

        let minis = self.minis.finish_all();
        let three_c = three_c_points(&shards, &minis[0], &self.options, max_bytes)?;
        let mut policies = minis;
        policies.push(opt_curve(self.opt, &sizes, rate, shards.refs, line)?);
        for c in &mut policies {
            c.points.retain(|p| p.size_bytes <= max_bytes);
        }
        debug_assert_eq!(policies.len(), POLICIES + 1);

        let l2 = {
            let sim = scale::two_level(self.two_level.sim.finish(), rate, &L2_BYTES);
            let reuse = scale::octave_scaled("l2_reuse_distance", &sim.l2_reuse, 0, rate);
            match l2_report(&scale::l1_histogram(&shards)?, sim, line) {
                Ok(mut r) => {
                    r.reuse_simulated = Histogram {
                        cold: r.cold,
                        total: r.cold + reuse.total,
                        ..reuse
                    };
                    Some(r)
                }
                Err(e) => {
                    notes.push(format!("L2 model left out: {e}"));
                    None
                }
            }
        };
        let phases = if self.phases.intervals() < MIN_INTERVALS {
            notes.push(format!(
                "phases left out: {} interval(s) of {}; at least {MIN_INTERVALS} are needed",
                self.phases.intervals(),
                self.options.phase_interval
            ));
            None
        } else {
            match self.phases.finish() {
                Ok(r) => Some(scaled_phases(phases_summary(&r), rate)),
                Err(e) => {
                    notes.push(format!("phases left out: {e}"));
                    None
                }
            }
        };
        let attribution = match self.attribution {
            None => None,
            Some(a) => Some(scale::attribution(
                attribution_summary(&a.finish()?),
                rate,
                crate::attribution::measure::Options::default()
                    .geometry
                    .to_string(),
            )),
        };
        let sampling = match &profile {
            Some(p) => SamplingSummary {
                rate: self.options.sample_rate,
                seed: self.options.seed,
                samples: p.samples().len() as u64,
                reuses: p.reuses(),
                dangling: p.dangling(),
            },
            None => SamplingSummary {
                rate: self.options.sample_rate,
                seed: self.options.seed,
                samples: 0,
                reuses: 0,
                dangling: 0,
            },
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
            sampling,
            working_set: footprint
                .points(8)?
                .into_iter()
                .map(|p| WorkingSetPoint {
                    window: p.window,
                    lines: p.footprint,
                    bytes: p.footprint * line as f64,
                })
                .collect(),
            fill_time: fill_time(&filmer, &footprint, &sizes, line),
            reuse_time: super::super::histogram::octave_histogram(
                "reuse_time",
                &reuse_times.reuse_time,
                reuse_times.distinct_lines,
            ),
            stack_distance: scale::octave_weights("stack_distance", shards.bins(), shards.cold),
            three_c: ThreeCReport {
                ways: self.options.ways,
                policy: "lru".into(),
                points: three_c,
            },
            l2,
            phases,
            attribution,
            threads: {
                let ids = self.kinds.threads();
                (ids.len() > 1).then_some(ThreadsReport {
                    ids,
                    curves: None,
                    sharing: None,
                })
            },
            notes,
            figures: Vec::new(),
            sampled: Some(expected::summary(&self.spatial, rate, shards.sampled)),
        };
        report.figures = catalog::list(&report);
        expected::caption(&mut report);
        Ok(report)
    }
}

/// The exact report's curve options for `method`.
fn curve_options(
    options: &super::super::CollectOptions,
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

/// OPT on the sampled lines at the sizes scaled by `rate` (SHARDS applies to any stack
/// algorithm, OPT's included), its misses over the references the rate should keep of the
/// full stream's `refs` (SHARDS's adjustment); sizes whose miniature holds less than half a
/// line are left out.
fn opt_curve(
    opt: crate::opt::OptAnalysis,
    sizes: &[u64],
    rate: f64,
    refs: u64,
    line: u64,
) -> Result<Mrc> {
    let sampled = opt.refs() as f64;
    let kept: Vec<(u64, u64)> = sizes
        .iter()
        .map(|&s| (s, ((s / line) as f64 * rate).round() as u64 * line))
        .filter(|&(_, m)| m > 0)
        .collect();
    let small: Vec<u64> = kept.iter().map(|&(_, m)| m).collect();
    let mut curve = opt.finish(&small)?;
    let adjust = sampled / (rate * refs.max(1) as f64);
    curve.points = curve
        .points
        .iter()
        .zip(&kept)
        .map(|(p, &(size_bytes, _))| MrcPoint {
            size_bytes,
            lines: size_bytes / line,
            miss_ratio: p.miss_ratio.map(|r| (r * adjust).min(1.0)),
            miss_ratio_warm: (p.miss_ratio_warm * adjust).min(1.0),
        })
        .collect();
    curve.method = "shards".into();
    Ok(curve)
}

/// The 3C points: each cache's misses from its LRU miniature (or Smith's formula on SHARDS's
/// distances where the sample holds less than one of its sets), its cold misses the distinct
/// lines, its capacity misses the fully associative LRU cache's of its size beyond them.
fn three_c_points(
    shards: &ShardsDistances,
    lru: &Mrc,
    options: &super::super::CollectOptions,
    max_bytes: u64,
) -> Result<Vec<ThreeCPoint>> {
    let line = options.line_size.bytes();
    let d = scale::smith_distances(shards);
    let n = shards.refs as f64;
    let mut out = Vec::new();
    for size in super::super::options::three_c_sizes(line, options.ways) {
        if size > max_bytes {
            break;
        }
        let smith = smith::set_associative_mrc(&d, options.ways, &[size])?.points[0]
            .miss_ratio
            .unwrap_or(f64::NAN);
        let total = lru
            .points
            .iter()
            .find(|p| p.size_bytes == size)
            .and_then(|p| p.miss_ratio)
            .unwrap_or(smith);
        let misses = (total * n).round() as u64;
        let cold = (shards.cold.round() as u64).min(misses);
        let fa = shards.at_least(size / line) + shards.cold;
        let capacity = ((fa.round() as u64).min(misses)).saturating_sub(cold);
        out.push(ThreeCPoint {
            size_bytes: size,
            refs: shards.refs,
            misses,
            cold,
            capacity,
            conflict: misses - cold - capacity,
            smith_miss_ratio: smith,
        });
    }
    Ok(out)
}

/// Fill and inter-miss times, as the exact report's.
fn fill_time(
    filmer: &hotl::Filmer,
    footprint: &hotl::Footprint,
    sizes: &[u64],
    line: u64,
) -> Vec<FillTimePoint> {
    sizes
        .iter()
        .filter(|&&b| b / line <= footprint.distinct_lines)
        .map(|&b| {
            let c = (b / line) as f64;
            FillTimePoint {
                size_bytes: b,
                lines: b / line,
                fill_time: filmer.fill_time(c),
                inter_miss_time: filmer.inter_miss_time(c),
            }
        })
        .filter(|p| p.fill_time.is_finite() && p.inter_miss_time.is_finite())
        .collect()
}

/// The phase timeline's interval sizes over the rate (each interval's sampled references).
fn scaled_phases(mut p: PhasesSummary, rate: f64) -> PhasesSummary {
    for i in &mut p.intervals {
        i.data_refs = (i.data_refs as f64 / rate).round() as u64;
    }
    p.l2 = "1M,16,64".into();
    p
}
