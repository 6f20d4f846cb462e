//! The one-pass collection: every analysis the report shows, fed by a single decode of the
//! trace through [`cachescope::pass::Pass::run`] (the CLI's hooks add a progress bar).
//!
//! One pass holds: trace statistics, exact LRU stack distances, exact reuse times, the HOTL
//! footprint, exact random replacement (one seeded cache per octave of size), StatCache's
//! sampler, set-associative caches with 3C classes, an exact two-level L1/L2 simulation, and
//! the phase analysis. Every one of them streams: memory grows with distinct lines (and, for
//! phases, with intervals), never with trace length. The models (StatCache, StatStack, HOTL,
//! Smith, Ji et al.'s L2 model) run on their results afterwards. The analyses are independent:
//! [`Collector::analyses_split`] hands them to the pass as `cachescope::pass::Independent`.

use std::time::Instant;

use cachescope::analysis::Analysis;
use cachescope::attribution::measure::{self as attribution, EventSource};
use cachescope::models::hotl::{self, FootprintAnalysis};
use cachescope::models::l2::{self as l2model, L1Histogram, L2Model, TwoLevelResult, Variant};
use cachescope::models::{smith, statcache, statstack};
use cachescope::phases::{Method, PhaseAnalysis, PhaseOptions, PhaseReport, Unit};
use cachescope::reuse::{
    LogHistogram, Options, RandomReplacementAnalysis, ReuseTimeAnalysis, sizes_log_range,
};
use cachescope::sampling::{Cold, Sampler, SamplerOptions};
use cachescope::sim::{Geometry, Policy, ThreeCSweep, TwoLevelLru};
use cachescope::trace::Trace;
use cachescope::{LineSize, Result};

use crate::figures;
use crate::kinds::KindCounts;
use crate::model::*;
use crate::policies::PolicyCurves;

/// What the report measures. [`CollectOptions::default`] documents every default.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectOptions {
    /// Line size. Default 64 bytes.
    pub line_size: LineSize,
    /// Seed of random replacement, sampling and phase clustering. Default 1.
    pub seed: u64,
    /// StatCache sampling rate. Default 1e-3: about a thousand samples per million
    /// references, enough for smooth curves from the short traces a report is often made of.
    pub sample_rate: f64,
    /// Phase interval (instructions when the trace has instruction fetches, data references
    /// otherwise). Default 100 000; fewer than 4 intervals leave the phase section out.
    pub phase_interval: u64,
    /// Ways of the caches simulated for the 3C breakdown. Default 8.
    pub ways: u32,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            line_size: LineSize::default(),
            seed: 1,
            sample_rate: 1e-3,
            phase_interval: 100_000,
            ways: 8,
        }
    }
}

/// Smallest and largest cache size measured in advance (random replacement, 3C); the curves
/// are cut at twice the trace's footprint afterwards.
const MIN_BYTES: u64 = 1 << 10;
const MAX_BYTES: u64 = 1 << 30;
/// Intervals needed before phases mean anything.
const MIN_INTERVALS: usize = 4;
/// Phases in the timeline.
const PHASES_K: usize = 3;
/// The L2 section's L1 and L2 sizes: `cachescope l2`'s defaults.
const L1_BYTES: u64 = 32 << 10;
const L2_BYTES: [u64; 5] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20];
/// The L2 model's readings shown: the paper's and the most accurate corrected one.
const L2_VARIANTS: [Variant; 2] = [Variant::Paper, Variant::FootprintResident];

/// The analyses of one report, waiting to be fed.
pub struct Collector {
    options: CollectOptions,
    started: Instant,
    /// Accesses per kind (the distinct lines come from the stack distances).
    kinds: KindCounts,
    rt: ReuseTimeAnalysis,
    fp: FootprintAnalysis,
    /// Random replacement, its sizes dealt alternately over two analyses so that the two
    /// threads of [`Collector::analyses_split`] share its cost (each cache draws from its own
    /// generator, so the curve does not depend on the dealing).
    random: [RandomReplacementAnalysis; 2],
    sampler: Sampler,
    /// The 3C caches, classified from one stack-distance computation, whose histogram gives
    /// the exact LRU curve too; and, from the same distances, the exact L1 → L2 simulation
    /// the L2 model is checked against.
    three_c: ThreeCSweep,
    phases: PhaseAnalysis,
    /// FIFO, SRRIP, DRRIP in the 3C caches, and OPT: the policies figure.
    policies: PolicyCurves,
    /// Data-structure attribution, only for traces with an event log (without one every
    /// reference of a synthetic trace is "other", which says nothing).
    attribution: Option<attribution::Attribution<'static>>,
    /// Threads [`Collector::finish`] may use (OPT's curve beside the other models).
    threads: usize,
}

/// Analyses fed one after the other on one thread: one of the two halves of
/// [`Collector::analyses_split`].
pub struct Group<'a>(Vec<&'a mut (dyn Analysis + Send)>);

impl Analysis for Group<'_> {
    fn observe(&mut self, batch: &cachescope::batch::Batch) {
        for a in &mut self.0 {
            a.observe(batch);
        }
    }
}

/// Buckets shown in the attribution table and the evicted-by heatmap.
const ATTRIBUTION_TOP: usize = 10;

impl Collector {
    /// Sets up every analysis; errors on invalid options before any reading.
    pub fn new(options: CollectOptions) -> Result<Collector> {
        let reuse = Options {
            line_size: options.line_size,
            ..Options::default()
        };
        let line = options.line_size.bytes();
        let random_sizes = sizes_log_range(MIN_BYTES.max(line), MAX_BYTES, 1)?;
        let geometries = three_c_sizes(line, options.ways)
            .into_iter()
            .map(|size| Geometry::new(size, options.ways, line))
            .collect::<Result<Vec<_>>>()?;
        // Checks the L2 sizes as `cachescope l2` does.
        l2model::TwoLevelAnalysis::new(line, l1_lines(line), &L2_BYTES, Policy::Lru)?;
        let three_c = ThreeCSweep::new(reuse, &geometries, Policy::Lru)?
            .with_two_level(TwoLevelLru::new(line, l1_lines(line), &L2_BYTES));
        let policy_sizes: Vec<u64> = geometries.iter().map(|g| g.size_bytes()).collect();
        let policies = PolicyCurves::new(reuse, &policy_sizes, options.ways, options.seed)?;
        let dealt = |half: usize| -> Vec<u64> {
            random_sizes.iter().skip(half).step_by(2).copied().collect()
        };
        let phases = PhaseAnalysis::new(PhaseOptions {
            interval: options.phase_interval,
            k: cachescope::phases::KChoice::Fixed(PHASES_K),
            l2: Geometry::new(1 << 20, 16, line)?,
            seed: options.seed,
            methods: Method::ALL.to_vec(),
            ..PhaseOptions::default()
        })?;
        Ok(Collector {
            started: Instant::now(),
            kinds: KindCounts::default(),
            rt: ReuseTimeAnalysis::new(reuse),
            fp: FootprintAnalysis::new(reuse, &[])?,
            random: [0, 1].map(|h| RandomReplacementAnalysis::new(reuse, &dealt(h), options.seed)),
            sampler: Sampler::new(SamplerOptions {
                rate: options.sample_rate,
                seed: options.seed,
                slot_refs: cachescope::sampling::DEFAULT_SLOT_REFS,
                line_size: options.line_size,
                include_instructions: false,
            })?,
            three_c,
            phases,
            policies,
            attribution: None,
            threads: 1,
            options,
        })
    }

    /// Lets [`Collector::finish`] use `threads` threads (default 1); the report is the same
    /// for any number.
    pub fn with_threads(mut self, threads: usize) -> Collector {
        self.threads = threads.max(1);
        self
    }

    /// Adds data-structure attribution (the paper's default cache, the monitor's cost left
    /// out) fed by `events`, the trace's event log.
    pub fn with_attribution(mut self, events: EventSource<'static>) -> Result<Collector> {
        let options = attribution::Options {
            cost: None,
            mrc: false,
            seed: self.options.seed,
            ..attribution::Options::default()
        };
        self.attribution = Some(attribution::Attribution::new(options, Some(events))?);
        Ok(self)
    }

    /// Every analysis, for one pass: `pass.run(trace, Analyses(&mut collector.analyses()))`.
    pub fn analyses(&mut self) -> Vec<&mut dyn Analysis> {
        let [random_a, random_b] = &mut self.random;
        let mut all: Vec<&mut dyn Analysis> = vec![
            &mut self.kinds,
            &mut self.rt,
            &mut self.fp,
            random_a,
            random_b,
            &mut self.sampler,
            &mut self.phases,
            &mut self.three_c,
        ];
        all.extend(
            self.policies
                .analyses()
                .into_iter()
                .map(|a| a as &mut dyn Analysis),
        );
        if let Some(a) = &mut self.attribution {
            all.push(a);
        }
        all
    }

    /// Every analysis as `Send`, in two groups of about equal cost for
    /// [`cachescope::pass::Independent`] (one decode, each group on its own thread): the
    /// policies' miniatures, OPT's spill, StatCache's sampler and the access counts on one side;
    /// random replacement, the 3C sweep (with the two-level simulation), reuse times, footprint
    /// and phases on the other. `None` with attribution, whose event log is read on the thread
    /// that feeds it.
    pub fn analyses_split(&mut self) -> Option<[Group<'_>; 2]> {
        if self.attribution.is_some() {
            return None;
        }
        let mut first = self.policies.analyses();
        first.extend([
            &mut self.sampler as &mut (dyn Analysis + Send),
            &mut self.kinds,
        ]);
        let [random_a, random_b] = &mut self.random;
        let second: Vec<&mut (dyn Analysis + Send)> = vec![
            random_a,
            random_b,
            &mut self.three_c,
            &mut self.rt,
            &mut self.fp,
            &mut self.phases,
        ];
        Some([Group(first), Group(second)])
    }

    /// Runs the models on what the pass measured and builds the report. `trace` is the trace
    /// that was read (for its name and format).
    pub fn finish(mut self, trace: &Trace) -> Result<Report> {
        let line = self.options.line_size.bytes();
        let distinct = self.three_c.distances().cold;
        let stats = self.kinds.summary(distinct, line);
        // Curves stop at twice the footprint: beyond it every method is flat at the cold ratio.
        let max_bytes = (2 * stats.bytes_touched)
            .next_power_of_two()
            .clamp(4 * MIN_BYTES.max(line), MAX_BYTES);
        let sizes = sizes_log_range(MIN_BYTES.max(line), max_bytes, 8)?;
        let opt = self.policies.take_opt();
        let opt_curve = |sizes: &[u64]| match opt {
            Some(opt) => opt.finish(sizes),
            None => Err(cachescope::Error::InvalidParameter {
                name: "report",
                message: "OPT's analysis was already finished".into(),
            }),
        };
        if self.threads > 1 {
            std::thread::scope(|s| {
                let opt = s.spawn(|| opt_curve(&sizes));
                self.models(trace, stats, max_bytes, &sizes, || match opt.join() {
                    Ok(r) => r,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
            })
        } else {
            self.models(trace, stats, max_bytes, &sizes, || opt_curve(&sizes))
        }
    }

    /// The models and the report; `opt` gives OPT's curve (called once, last, so that it can
    /// be computed on another thread meanwhile).
    fn models(
        self,
        trace: &Trace,
        stats: TraceSummary,
        max_bytes: u64,
        sizes: &[u64],
        opt: impl FnOnce() -> Result<cachescope::reuse::Mrc>,
    ) -> Result<Report> {
        let mut notes = Vec::new();
        let line = self.options.line_size.bytes();
        let sizes = sizes.to_vec();

        let attribution = match self.attribution {
            None => None,
            Some(a) => Some(attribution_summary(&a.finish()?)),
        };

        let distances = self.three_c.distances();
        let mut mrc = vec![distances.mrc(&sizes)];
        let [random_a, random_b] = &self.random;
        let mut random = random_a.finish();
        random.points.extend(random_b.finish().points);
        random.points.sort_by_key(|p| p.size_bytes);
        random.points.retain(|p| p.size_bytes <= max_bytes);
        mrc.push(random);
        let profile = self.sampler.finish();
        for (name, model) in [
            ("statcache", statcache::mrc as fn(_, _, _) -> _),
            ("statstack", statstack::mrc),
        ] {
            match model(&profile, &sizes, Cold::Estimate) {
                Ok(curve) => mrc.push(curve),
                Err(e) => notes.push(format!("{name} left out: {e}")),
            }
        }
        let footprint = self.fp.finish();
        let filmer = hotl::Filmer::new(&footprint);
        mrc.push(filmer.mrc(&sizes));
        let reuse_times = self.rt.finish();
        mrc.push(hotl::reuse_time_mrc(&reuse_times, &sizes));

        let working_set = footprint
            .points(8)?
            .into_iter()
            .map(|p| WorkingSetPoint {
                window: p.window,
                lines: p.footprint,
                bytes: p.footprint * line as f64,
            })
            .collect();
        let fill_time = sizes
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
            .collect();

        let smith_distances = smith::Distances::from_stack_distances(&distances);
        let mut three_c_points = Vec::new();
        let three_c_reports = self.three_c.finish();
        for report in &three_c_reports {
            let level = &report.levels[0];
            let size = level.geometry.size_bytes();
            if size > max_bytes {
                continue;
            }
            let classes = level.stats.three_c.unwrap_or_default();
            let smith = smith::set_associative_mrc(&smith_distances, self.options.ways, &[size])?;
            three_c_points.push(ThreeCPoint {
                size_bytes: size,
                refs: level.stats.refs,
                misses: level.stats.misses,
                cold: classes.cold,
                capacity: classes.capacity,
                conflict: classes.conflict,
                smith_miss_ratio: smith.points[0].miss_ratio.unwrap_or(f64::NAN),
            });
        }

        let two_level = self
            .three_c
            .two_level()
            .ok_or(cachescope::Error::InvalidParameter {
                name: "report",
                message: "the 3C sweep has no two-level simulation".into(),
            })?;
        let l2 = match l2_report(&distances, two_level, line) {
            Ok(r) => Some(r),
            Err(e) => {
                notes.push(format!("L2 model left out: {e}"));
                None
            }
        };

        let phases = if self.phases.intervals() < MIN_INTERVALS {
            notes.push(format!(
                "phases left out: {} interval(s) of {}; at least {MIN_INTERVALS} are needed \
                 (a shorter interval gives more)",
                self.phases.intervals(),
                self.options.phase_interval
            ));
            None
        } else {
            match self.phases.finish() {
                Ok(r) => Some(phases_summary(&r)),
                Err(e) => {
                    notes.push(format!("phases left out: {e}"));
                    None
                }
            }
        };

        let policies = self.policies.finish(&three_c_reports, opt()?, max_bytes);
        let mut report = Report {
            version: FORMAT_VERSION,
            generator: concat!("cachescope-report ", env!("CARGO_PKG_VERSION")).into(),
            source: trace.source().to_string(),
            format: trace.format_name().to_string(),
            line_size: line,
            elapsed_seconds: self.started.elapsed().as_secs_f64(),
            stats,
            mrc,
            policies,
            sampling: SamplingSummary {
                rate: self.options.sample_rate,
                seed: self.options.seed,
                samples: profile.samples().len() as u64,
                reuses: profile.reuses(),
                dangling: profile.dangling(),
            },
            working_set,
            fill_time,
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
            notes,
            figures: Vec::new(),
        };
        report.figures = figures::list(&report);
        Ok(report)
    }
}

/// L1 lines of the L2 section (at least one).
fn l1_lines(line: u64) -> u64 {
    (L1_BYTES / line).max(1)
}

/// The L2 model's curves and reuse histograms from the exact L1 stack distances, beside the
/// two-level simulation.
fn l2_report(
    distances: &cachescope::reuse::StackDistances,
    exact: TwoLevelResult,
    line: u64,
) -> Result<L2Report> {
    let hist = L1Histogram::from_stack_distances(distances);
    let l1 = l1_lines(line);
    let mut predicted = Vec::new();
    let mut reuse_predicted = Vec::new();
    for variant in L2_VARIANTS {
        predicted.push(l2model::l2_mrc(&hist, l1, &L2_BYTES, Policy::Lru, variant)?);
        let mut counts: Vec<f64> = Vec::new();
        for (r, w) in L2Model::new(&hist, l1, variant)?.reuse_histogram() {
            let i = octave_of(r);
            if counts.len() <= i {
                counts.resize(i + 1, 0.0);
            }
            counts[i] += w;
        }
        reuse_predicted.push(PredictedHistogram {
            method: variant.method().into(),
            total: counts.iter().sum(),
            bins: counts
                .iter()
                .enumerate()
                .map(|(i, &weight)| {
                    let (lo, hi) = octave_bounds(i);
                    PredictedBin { lo, hi, weight }
                })
                .filter(|b| b.weight > 0.0)
                .collect(),
        });
    }
    Ok(L2Report {
        l1_bytes: l1 * line,
        l1_lines: l1,
        policy: "lru".into(),
        l2_refs: exact.l1_misses,
        cold: exact.cold,
        simulated: exact.mrc(),
        predicted,
        reuse_simulated: octave_histogram("l2_reuse_distance", &exact.l2_reuse, exact.cold),
        reuse_predicted,
    })
}

/// The report's view of an attribution: the top buckets by misses and, for each as a victim,
/// the share of its evictions caused by each of them as evictor (rows: victims).
fn attribution_summary(r: &cachescope::attribution::report::Report) -> Attribution {
    let top: Vec<&cachescope::attribution::report::BucketRow> =
        r.buckets.iter().take(ATTRIBUTION_TOP).collect();
    let names: Vec<String> = top.iter().map(|b| b.name.clone()).collect();
    let values = names
        .iter()
        .map(|victim| {
            names
                .iter()
                .map(|evictor| {
                    r.evictions
                        .iter()
                        .find(|e| &e.victim == victim && &e.evictor == evictor)
                        .map_or(0.0, |e| e.actual_pct)
                })
                .collect()
        })
        .collect();
    Attribution {
        cache: r.cache.to_string(),
        structures: top
            .iter()
            .map(|b| StructureRow {
                name: b.name.clone(),
                refs: b.refs,
                misses: b.misses,
                miss_ratio: if b.refs == 0 {
                    0.0
                } else {
                    b.misses as f64 / b.refs as f64
                },
            })
            .collect(),
        evicted_by: Matrix {
            rows: names.clone(),
            cols: names,
            values,
        },
    }
}

/// 3C cache sizes: every second octave from the smallest cache with one set of `ways` lines
/// (at least 4 KiB) to 1 GiB.
fn three_c_sizes(line: u64, ways: u32) -> Vec<u64> {
    let mut size = (line * u64::from(ways)).max(4 << 10).next_power_of_two();
    let mut out = Vec::new();
    while size <= MAX_BYTES {
        out.push(size);
        size *= 4;
    }
    out
}

/// Regroups a log histogram into one bin per power of two: `[0]`, `[1]`, `[2, 3]`, `[4, 7]`…
/// Every log-histogram bin lies inside one octave, so the regrouping is exact.
pub fn octave_histogram(name: &str, h: &LogHistogram, cold: u64) -> Histogram {
    let mut counts: Vec<u64> = Vec::new();
    for bin in h.bins() {
        if bin.count == 0 {
            continue;
        }
        let i = octave_of(bin.start);
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += bin.count;
    }
    let first = counts.iter().position(|&c| c > 0).unwrap_or(counts.len());
    let bins = counts
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, &count)| {
            let (lo, hi) = octave_bounds(i);
            HistogramBin { lo, hi, count }
        })
        .collect();
    Histogram {
        distance: name.into(),
        bins,
        cold,
        total: cold + h.total(),
    }
}

/// Octave index: 0 for 0, `k + 1` for `[2^k, 2^(k+1))`.
fn octave_of(d: u64) -> usize {
    if d == 0 { 0 } else { d.ilog2() as usize + 1 }
}

fn octave_bounds(i: usize) -> (u64, u64) {
    if i == 0 {
        (0, 0)
    } else {
        let lo = 1u64 << (i - 1);
        (lo, lo.saturating_mul(2) - 1)
    }
}

/// The phase timeline of setvectors (the paper's method) and every method's scores.
fn phases_summary(r: &PhaseReport) -> PhasesSummary {
    let labels = r.labels(Method::Setvector).unwrap_or_default();
    let intervals = r
        .intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| PhaseInterval {
            index: iv.index,
            data_refs: iv.data_refs,
            l2_hit_rate: iv.l2_hit_rate,
            phase: labels.get(i).copied().unwrap_or(0),
        })
        .collect();
    let l2 = &r.settings.l2;
    PhasesSummary {
        interval: r.settings.interval,
        unit: match r.settings.unit {
            Unit::Instructions => "instructions",
            Unit::DataRefs => "data-refs",
        }
        .into(),
        l2: format!(
            "{},{},{}",
            figures::human_bytes(l2.size_bytes() as f64),
            l2.assoc(),
            l2.line_size().bytes()
        ),
        k: PHASES_K,
        timeline_method: Method::Setvector.name().into(),
        intervals,
        methods: r
            .methods
            .iter()
            .map(|m| PhaseMethod {
                name: m.name.into(),
                poec: m.poec,
                cov: m.cov,
                sigma_weighted: m.sigma_weighted,
            })
            .collect(),
    }
}

/// A convenience for library users: reads `trace` once with `threads` threads and returns
/// its report.
pub fn collect(trace: &mut Trace, options: CollectOptions, threads: usize) -> Result<Report> {
    let mut collector = Collector::new(options)?.with_threads(threads);
    let all = cachescope::pass::Analyses(&mut collector.analyses());
    cachescope::pass::Pass::new(threads).run(trace, all)?;
    collector.finish(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octaves_regroup_exactly() {
        let mut h = LogHistogram::new(cachescope::reuse::Layout::DEFAULT);
        for d in [0, 1, 2, 3, 3, 4, 7, 8, 100_000, 70_000] {
            h.record(d);
        }
        let o = octave_histogram("stack_distance", &h, 5);
        let got: Vec<(u64, u64, u64)> = o.bins.iter().map(|b| (b.lo, b.hi, b.count)).collect();
        assert_eq!(
            got[..5],
            [(0, 0, 1), (1, 1, 1), (2, 3, 3), (4, 7, 2), (8, 15, 1)]
        );
        // 70 000 and 100 000 both lie in [65536, 131071]; the empty octaves between are kept.
        assert_eq!(*got.last().unwrap(), (65536, 131071, 2));
        assert_eq!(got.len(), 18);
        assert_eq!(o.total, 15);
    }

    #[test]
    fn three_c_sizes_start_at_one_set() {
        assert_eq!(three_c_sizes(64, 8)[..3], [4096, 16384, 65536]);
        assert_eq!(three_c_sizes(1024, 8)[0], 8192);
    }
}
