//! The sampled report: what the pass over the sampled stream measured, scaled by the rate and
//! run through the models the exact report runs, into a [`Report`] of the same schema.

use crate::Result;
use crate::method::{self, CurvePolicy, Measured, Method, MrcOptions};
use crate::models::hotl::{self, HotlVariant};
use crate::phases::PhaseAnalysis;
use crate::reuse::{Mrc, MrcPoint, sizes_log_range};
use crate::sampling::Cold;
use crate::trace::Trace;

use super::super::catalog;
use super::super::hotl_points;
use super::super::l2::l2_report;
use super::super::model::*;
use super::super::options::{
    L2_BYTES, MIN_BYTES, MIN_INTERVALS, l1_lines, max_bytes, three_c_sizes,
};
use super::super::summaries::{attribution_summary, phases_summary};
use super::collector::{POLICIES, SampledCollector};
use super::expected;
use super::{curves, scale, warnings};

impl SampledCollector {
    /// Runs the models on what the pass measured and builds the report of `trace`, the
    /// sampled trace that was read (its name, format and StatCache profile).
    pub fn finish(self, trace: &mut Trace) -> Result<Report> {
        let mut notes = Vec::new();
        let line = self.options.line_size.bytes();
        let shards = self.two_level.shards.finish();
        let rate = shards.rate;
        // The phases' clustering (k-means over every method) on a thread of its own beside
        // the models below, given threads: the same section either way.
        let SampledCollector { phases, .. } = self;
        let interval = self.options.phase_interval;
        let mut phases = Some(phases);
        let phased = (self.threads > 1).then(|| {
            let p = phases.take().expect("not taken yet");
            std::thread::spawn(move || finished_phases(p, interval, rate))
        });
        let distinct = shards.cold.round() as u64;
        let stats = self.kinds.summary(distinct, line);
        let max_bytes = max_bytes(stats.bytes_touched, line);
        let sizes = sizes_log_range(MIN_BYTES.max(line), max_bytes, 8)?;
        let threads = self.threads;
        let opts = |method, policy| MrcOptions {
            threads,
            ..curve_options(&self.options, method, policy, &sizes)
        };

        let mut mrc = vec![shards.mrc(&sizes)];
        // The footprint's, the two-level simulation's and OPT's tables, summed up and dropped
        // before the reuse profile is built: its copy of the samples and the models run on it
        // make the report's peak on a large footprint (docs/recording.md's memory paragraph).
        let (footprint, reuse_times) = self.fp.finish_with_reuse_times();
        let two_level = self.two_level.sim.finish();
        drop((self.fp, self.two_level));
        // OPT's backward pass over its spill (the longest step here) on a thread of its own
        // beside the models below, given threads: the same curve either way.
        let opt = if self.threads > 1 {
            let (o, sizes, refs) = (self.opt, sizes.clone(), shards.refs);
            Ok(std::thread::spawn(move || {
                method::OptSample::new(o, &sizes, rate, refs, line)
            }))
        } else {
            Err(self.opt)
        };
        let profile = trace.reuse_profile();
        let [mut random, random_lru]: [Mrc; 2] = (self.random.finish_all().try_into())
            .expect("the random miniatures run random and LRU");
        random.points.retain(|p| p.size_bytes <= max_bytes);
        let random_sizes: Vec<u64> = random.points.iter().map(|p| p.size_bytes).collect();
        // StatStack once, on `sizes` and the random miniatures' sizes after them: its points
        // are each size's alone (`statstack::mrc`), so the report's curve is the first
        // `sizes.len()` of them and the reference LRU curve below is all of them.
        let mut statstack = None;
        if let Some(profile) = &profile {
            for method in [Method::Statcache, Method::Statstack] {
                let mut o = opts(method, None);
                if method == Method::Statstack {
                    o.sizes.extend_from_slice(&random_sizes);
                }
                match method::curve_from(Measured::Profile(profile), &o) {
                    Ok(c) if method == Method::Statstack => {
                        let mut own = c.clone();
                        own.points.truncate(sizes.len());
                        mrc.push(own);
                        statstack = Some(c);
                    }
                    Ok(c) => mrc.push(c),
                    Err(e) => notes.push(format!("{} left out: {e}", method.name())),
                }
            }
        } else {
            notes.push("StatCache and StatStack left out: the stream had no reuse profile".into());
        }
        // HOTL from the reuse samples where there are any (the spatial sample of a small
        // program holds too few lines for its footprint: docs/accuracy/sampled.md), else from
        // the sampled lines' footprint and reuse times. The exact report's `hotl` is the
        // time-local reading, whose estimate of a reuse's distance is StatStack's, so the
        // samples' time-local StatStack curve is its estimate here (docs/sampled.md, HOTL).
        let hotl_opts = MrcOptions {
            hotl_variant: HotlVariant::Paper,
            ..opts(Method::Hotl, None)
        };
        let by_time = profile
            .as_ref()
            .filter(|p| !p.samples().is_empty())
            .map(hotl::ProfileFootprint::new);
        mrc.push(match (&by_time, &statstack) {
            (Some(_), Some(s)) => hotl_points::time_local(s, sizes.len()),
            (Some(f), None) => f.footprint_mrc(&sizes),
            (None, _) => method::curve_from(Measured::Footprint(&footprint), &hotl_opts)?,
        });
        mrc.push(match &by_time {
            Some(f) => f.mrc(&sizes),
            None => method::curve_from(
                Measured::ReuseTimes(&reuse_times),
                &opts(Method::HotlRt, None),
            )?,
        });
        let (working_set, fill_time) = match &by_time {
            Some(f) => hotl_points::of_profile(f, shards.refs, &sizes, line)?,
            None => {
                let filmer = hotl::Filmer::new(&footprint);
                (
                    hotl_points::working_set(&footprint, line)?,
                    hotl_points::fill_time(&filmer, &footprint, &sizes, line),
                )
            }
        };
        let reuse_time = match &profile {
            Some(p) if !p.samples().is_empty() => scale::reuse_times(p),
            _ => super::super::histogram::octave_histogram(
                "reuse_time",
                &reuse_times.reuse_time,
                reuse_times.distinct_lines,
            ),
        };

        // The reference LRU curves: StatStack's (above) where there are reuse samples, else
        // SHARDS's.
        let shards_all = shards.mrc(&[sizes.as_slice(), &random_sizes].concat());
        let lru_ref = statstack.as_ref().unwrap_or(&shards_all);
        let lru = |size| curves::at(lru_ref, size);
        let l1 = curves::l2_input(
            profile.as_ref(),
            &shards,
            rate,
            l1_lines(line),
            self.options.sample_rate,
        )?;
        // Smith's formula (the 3C section's conflict misses where the sample holds less than
        // one of the cache's sets, small caches) reads the LRU curve's own switch: StatStack's
        // distances below 256 sampled lines (docs/accuracy/sampled.md, "Ji's L2 model"), the
        // time-local ones with the measured windows, as that curve reads them (the whole-run
        // estimate smooths a cliff: sqlite3's conflict misses 0.37 pp off with it, 0.06 without).
        let l1_curve = match &profile {
            Some(p) if p.reuses() >= curves::MIN_REUSES_COMBINED => scale::combined_l1(
                &crate::models::l2::L1Histogram::from_local_profile(p)?,
                &shards,
                |lines| curves::shards_serves(lines, rate),
            )?,
            _ => scale::l1_histogram(&shards)?,
        };
        let smith_d = scale::smith_of(&l1_curve, "statstack", shards.refs);
        let reference = curves::Reference {
            lru: &lru,
            shards: &shards,
            smith: &smith_d,
            ways: self.options.ways,
        };
        let mut minis = self.minis.finish_all();
        let lru_minis = curves::LruMinis {
            set_assoc: minis.remove(0),
            fully: (self.minis.finish_fully_associative())
                .expect("the collector runs LRU fully associative beside the miniatures"),
        };
        let three_c = reference.three_c(
            &lru_minis,
            &three_c_sizes(line, self.options.ways)
                .into_iter()
                .filter(|&s| s <= max_bytes)
                .collect::<Vec<_>>(),
        );
        let mut policies = vec![Mrc {
            points: three_c
                .iter()
                .map(|p| MrcPoint {
                    size_bytes: p.size_bytes,
                    lines: p.size_bytes / line,
                    miss_ratio: Some(p.misses as f64 / p.refs.max(1) as f64),
                    miss_ratio_warm: (p.misses - p.cold) as f64 / p.refs.max(1) as f64,
                })
                .collect(),
            ..lru_minis.set_assoc.clone()
        }];
        for m in minis {
            policies.push(reference.set_associative(m, &lru_minis));
        }
        let opt = match opt {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?,
            Err(o) => method::OptSample::new(o, &sizes, rate, shards.refs, line)?,
        };
        policies.push(reference.opt(&opt, &sizes));
        for c in &mut policies {
            c.points.retain(|p| p.size_bytes <= max_bytes);
        }
        debug_assert_eq!(policies.len(), POLICIES + 1);
        mrc.insert(1, reference.fully_associative(random, &random_lru));
        // The report's LRU curve first: StatStack's where the sample holds too few lines.
        // (StatStack only where its reuse samples are enough: curves::MIN_REUSES_COMBINED.)
        let trusted = statstack.as_ref().filter(|_| {
            profile
                .as_ref()
                .is_some_and(|p| p.reuses() >= curves::MIN_REUSES_COMBINED)
        });
        let (combined, from) = curves::combined(&mrc[0], trusted, rate);
        if statstack.is_some() {
            notes.push(warnings::combined_note(from, &sizes, rate));
            mrc.insert(0, combined);
        }

        let l2 = {
            let sim = scale::two_level(two_level, rate, &L2_BYTES);
            let reuse = scale::octave_scaled("l2_reuse_distance", &sim.l2_reuse, 0, rate);
            match l2_report(&l1, sim, line) {
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
        let (phases, note) = match (phased, phases) {
            (Some(thread), _) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            (None, Some(p)) => finished_phases(p, interval, rate),
            (None, None) => unreachable!("the phases are finished here or on their thread"),
        };
        notes.extend(note);
        // The call graph of a trace with call events: references and calls exact, misses
        // estimates (docs/callgraph.md).
        if self.calls_seen.is_some_and(|w| w.has_calls()) && self.attribution.is_some() {
            notes.push(super::super::callgraph::LEFT_OUT.into());
        }
        let callgraph = match (self.callgraph, &self.attribution) {
            (Some(g), Some(a)) => super::super::callgraph::summary(g.finish_named(a.buckets())?),
            _ => None,
        };
        let sub_rate = self.attribution.as_ref().and_then(|a| a.sub_rate());
        let attribution = match self.attribution {
            None => None,
            Some(a) => Some(scale::attribution(
                attribution_summary(&a.finish()?),
                // The lines measured: those under the miniature's own rate, if lower.
                sub_rate.map_or(rate, |r| r.min(rate)),
                crate::attribution::measure::Options::default()
                    .geometry
                    .to_string(),
            )),
        };
        let sampling = match &profile {
            Some(p) => SamplingSummary {
                rate: p.rate(),
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
            // The advice and the pages (TLBs) need every reference.
            what_to_change: None,
            pages: None,
            callgraph,
            elapsed_seconds: self.started.elapsed().as_secs_f64(),
            stats,
            mrc,
            policies,
            sampling,
            working_set,
            fill_time,
            reuse_time,
            stack_distance: {
                // In full-stream references: the histogram's weights are its own units.
                let f = shards.refs as f64 / l1.refs.max(f64::MIN_POSITIVE);
                let bins = l1
                    .masses
                    .iter()
                    .map(|m| (m.sd, m.sd + m.len - 1, m.weight * f));
                scale::octave_weights("stack_distance", bins, l1.cold * f)
            },
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
                    shards_curves: None,
                    sharing: None,
                })
            },
            notes,
            figures: Vec::new(),
            sampled: Some(expected::summary(&self.spatial, rate, shards.sampled)),
        };
        report.figures = catalog::list(&report);
        expected::caption(&mut report);
        warnings::warn(&mut report, profile.as_ref(), shards.cold * rate);
        Ok(report)
    }
}

/// The exact report's curve options for `method`.
pub(super) fn curve_options(
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

/// The phase timeline's interval sizes over the rate (each interval's sampled references).
/// The phases section scaled by the rate, or the note saying why it is left out.
fn finished_phases(
    phases: PhaseAnalysis,
    interval: u64,
    rate: f64,
) -> (Option<PhasesSummary>, Option<String>) {
    if phases.intervals() < MIN_INTERVALS {
        let note = format!(
            "phases left out: {} interval(s) of {interval}; at least {MIN_INTERVALS} are needed",
            phases.intervals(),
        );
        return (None, Some(note));
    }
    match phases.finish() {
        Ok(r) => (Some(scaled_phases(phases_summary(&r), rate)), None),
        Err(e) => (None, Some(format!("phases left out: {e}"))),
    }
}

fn scaled_phases(mut p: PhasesSummary, rate: f64) -> PhasesSummary {
    for i in &mut p.intervals {
        i.data_refs = (i.data_refs as f64 / rate).round() as u64;
    }
    p.l2 = "1M,16,64".into();
    p
}
