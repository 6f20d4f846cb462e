//! [`PhaseAnalysis`]: one pass computes every method's signature per interval and the ground
//! truth; [`PhaseAnalysis::finish`] clusters and scores.

mod bound;
mod features;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::clusters::{cluster, summaries};
use super::intervals::{Segment, Splitter, Unit};
use super::kmeans::{self, KMeansConfig};
use super::metrics;
use super::options::{IntervalUnit, KChoice, Method, PhaseOptions};
use super::report::{IntervalReport, MethodReport, PhaseReport, PhaseSettings};
use super::signature::{
    ActivityVectors, REUSE_BINS, ReuseHistograms, Setvectors, Signer, WaveletImages,
    full_magnitude, log_scale,
};
use super::truth::{GroundTruth, L2Counts};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};

/// Feeds the segments of one batch to `s`, closing intervals where they end.
#[inline]
fn drive(s: &mut impl Signer, segs: &[Segment], addrs: &[u64]) {
    for g in segs {
        if g.starts_interval {
            s.close();
        }
        s.feed(&addrs[g.start..g.end], g.column);
    }
}

/// Runs `f` and adds its wall time to `t`.
#[inline]
fn timed(t: &mut Duration, f: impl FnOnce()) {
    let start = Instant::now();
    f();
    *t += start.elapsed();
}

/// Memory phase classification over a trace (see the module documentation of `phases`).
///
/// Memory: the ground truth's caches, the reuse-distance stack (∝ distinct lines), the set of
/// one interval's distinct lines, and per interval its stored signatures (about 1.5 KiB with
/// the defaults, plus one byte per set when `setvector-vector` runs), for at most
/// [`PhaseOptions::max_intervals`] intervals (and two) when it is set.
#[derive(Debug)]
pub struct PhaseAnalysis {
    options: PhaseOptions,
    splitter: Splitter,
    addrs: Vec<u64>,
    segs: Vec<Segment>,
    setvectors: Option<Setvectors>,
    activity: Option<ActivityVectors>,
    reuse: Option<ReuseHistograms>,
    wavelet: Option<WaveletImages>,
    truth: GroundTruth,
    /// Time in: setvectors, activity, reuse, wavelet, ground truth.
    time: [Duration; 5],
}

impl PhaseAnalysis {
    /// Validates `options` and prepares every signature the chosen methods need.
    pub fn new(options: PhaseOptions) -> Result<PhaseAnalysis> {
        options.validate()?;
        let uses = |ms: &[Method]| ms.iter().any(|m| options.methods.contains(m));
        let unit = match options.unit {
            IntervalUnit::Auto => None,
            IntervalUnit::Instructions => Some(Unit::Instructions),
            IntervalUnit::DataRefs => Some(Unit::DataRefs),
        };
        Ok(PhaseAnalysis {
            splitter: Splitter::new(unit, options.interval).bounded(options.max_intervals),
            addrs: Vec::new(),
            segs: Vec::new(),
            setvectors: uses(&[Method::Setvector, Method::SetvectorVector]).then(|| {
                Setvectors::new(
                    options.l2,
                    options.setvector_bits,
                    options.methods.contains(&Method::SetvectorVector),
                )
            }),
            activity: uses(&[Method::Activity, Method::ActivityMagnitude])
                .then(|| ActivityVectors::new(options.l2, options.activity_supersets)),
            reuse: uses(&[Method::ReuseDistance])
                .then(|| ReuseHistograms::new(options.l2.line_size())),
            wavelet: uses(&[Method::Wavelet, Method::WaveletDc, Method::WaveletSvd]).then(|| {
                let w = WaveletImages::new(options.wavelet_modulo, options.svd_rank);
                if uses(&[Method::WaveletSvd]) {
                    w
                } else {
                    w.without_svd()
                }
            }),
            truth: GroundTruth::new(&options)?,
            time: [Duration::ZERO; 5],
            options,
        })
    }

    /// For a stream of the lines sampled at `rate` (a hash of the line, docs/sampled.md): the
    /// setvectors' magnitudes estimate the full stream's ([`Setvectors::sampled`]).
    pub fn sampled(mut self, rate: f64) -> PhaseAnalysis {
        self.setvectors = self.setvectors.map(|s| s.sampled(rate));
        self
    }

    /// Takes the reuse-distance signature's stack distances from the caller
    /// ([`PhaseAnalysis::observe_with_distances`]) instead of computing them: for a pass that
    /// computes the same distances anyway (data references at the L2's line size).
    pub(crate) fn fed_distances(mut self) -> PhaseAnalysis {
        if self.reuse.is_some() {
            self.reuse = Some(ReuseHistograms::fed());
        }
        self
    }

    /// Takes the ground truth's L2 misses from the caller too
    /// ([`PhaseAnalysis::observe_with_distances`]): for a pass that simulates the same L2 (the
    /// options' L2 under LRU, no L1, each data reference at the line of its first byte).
    /// Errors when the options have an L1 or another policy.
    pub(crate) fn fed_truth(mut self) -> Result<PhaseAnalysis> {
        if self.options.l1.is_some() || self.options.policy != crate::sim::Policy::Lru {
            return Err(Error::InvalidParameter {
                name: "phases' ground truth",
                message: "only an LRU L2 without L1 can be fed".into(),
            });
        }
        self.truth = self.truth.fed();
        Ok(self)
    }

    /// [`Analysis::observe`] for an analysis made with [`PhaseAnalysis::fed_distances`]:
    /// `distances` holds the stack distance of each data reference of `batch`, in order; with
    /// [`PhaseAnalysis::fed_truth`], `l2_misses` the positions of those that missed the L2,
    /// in order.
    pub(crate) fn observe_with_distances(
        &mut self,
        batch: &Batch,
        distances: &[Option<u64>],
        l2_misses: Option<&[usize]>,
    ) {
        self.observe_addresses(batch);
        if self.truth.is_fed() {
            let misses = l2_misses.expect("a fed ground truth is told its misses");
            let t = &mut self.truth;
            timed(&mut self.time[4], || {
                let mut m = 0;
                for g in &self.segs {
                    if g.starts_interval {
                        t.close();
                    }
                    let end = m + misses[m..].partition_point(|&i| i < g.end);
                    t.feed_misses(g.end - g.start, end - m);
                    m = end;
                }
            });
        }
        if let Some(s) = &mut self.reuse {
            timed(&mut self.time[2], || {
                for g in &self.segs {
                    if g.starts_interval {
                        s.close();
                    }
                    s.push_distances(&distances[g.start..g.end]);
                }
            });
        }
        self.bound();
    }

    /// Feeds every signature but the reuse distances and the ground truth.
    fn observe_addresses(&mut self, batch: &Batch) {
        self.splitter.split(batch, &mut self.addrs, &mut self.segs);
        let (segs, addrs) = (&self.segs, &self.addrs);
        if let Some(s) = &mut self.setvectors {
            timed(&mut self.time[0], || drive(s, segs, addrs));
        }
        if let Some(s) = &mut self.activity {
            timed(&mut self.time[1], || drive(s, segs, addrs));
        }
        if let Some(s) = &mut self.wavelet {
            timed(&mut self.time[3], || drive(s, segs, addrs));
        }
        let t = &mut self.truth;
        if !t.is_fed() {
            timed(&mut self.time[4], || drive(t, segs, addrs));
        }
    }

    /// The options in use.
    pub fn options(&self) -> &PhaseOptions {
        &self.options
    }

    /// Intervals started so far.
    pub fn intervals(&self) -> usize {
        self.splitter.counts().len()
    }

    /// Ends the last interval, clusters every method's signatures and scores them.
    ///
    /// Errors when the trace held no reference, or when the unit is
    /// [`IntervalUnit::Instructions`] and the trace has no instruction fetch.
    pub fn finish(self) -> Result<PhaseReport> {
        self.finish_on(1)
    }

    /// [`PhaseAnalysis::finish`] with the methods clustered on up to `threads` threads (the
    /// report is the same for any number, but for the timings it holds).
    pub fn finish_on(mut self, threads: usize) -> Result<PhaseReport> {
        let counts = self.splitter.counts().to_vec();
        let n = counts.len();
        if n == 0 {
            return Err(Error::InvalidParameter {
                name: "trace",
                message: "no reference: phase classification needs at least one interval".into(),
            });
        }
        let unit = self.splitter.unit().expect("decided on the first batch");
        let instructions: u64 = counts.iter().map(|c| c.instructions).sum();
        let data_refs: u64 = counts.iter().map(|c| c.data_refs).sum();
        if unit == Unit::Instructions && instructions == 0 {
            return Err(Error::InvalidParameter {
                name: "interval unit",
                message: "the trace has no instruction fetches; count intervals in data \
                          references (or let the unit be chosen automatically)"
                    .into(),
            });
        }
        if let Some(s) = &mut self.setvectors {
            s.close();
        }
        if let Some(s) = &mut self.activity {
            s.close();
        }
        if let Some(s) = &mut self.reuse {
            s.close();
        }
        if let Some(s) = &mut self.wavelet {
            s.close();
        }
        self.truth.close();
        self.bound_last();
        let counts = self.splitter.counts().to_vec();
        let n = counts.len();
        let truth: Vec<L2Counts> = self.truth.intervals().to_vec();
        debug_assert_eq!(truth.len(), n);
        let hit_rates: Vec<f64> = truth.iter().map(|c| c.hit_rate()).collect();
        let per_ref = |t: Duration| t.as_secs_f64() * 1e9 / data_refs.max(1) as f64;
        let config = KMeansConfig {
            restarts: self.options.restarts,
            max_iterations: self.options.max_iterations,
            seed: self.options.seed,
        };
        let mut class_cache: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut methods = Vec::new();
        // The clusterings are independent: a sweep of k shares out its values of k over the
        // threads, a single k its methods.
        let (across, within) = match self.options.k {
            KChoice::Sweep { .. } => (1, threads),
            KChoice::Fixed(_) => (threads, 1),
        };
        // Each method's signatures (as f64, up to eight times their own size) are let go once
        // its clustering is summarised: only the methods on the threads at a time hold theirs.
        let clustered = crate::threads::map_in_order(&self.options.methods, across, |&m| {
            let (features, dims) = self.features(m, n);
            let start = Instant::now();
            let (c, k_scores) = cluster(
                &features,
                dims,
                m.is_scalar(),
                self.options.k,
                &config,
                within,
            );
            let phases = summaries(&c, &features, &hit_rates, &counts);
            (dims, c, k_scores, phases, start.elapsed())
        });
        for (&m, (dims, c, k_scores, phases, took)) in self.options.methods.iter().zip(clustered) {
            let start = Instant::now();
            let classes = class_cache
                .entry(c.k())
                .or_insert_with(|| kmeans::kmeans_1d(&hit_rates, c.k()).labels);
            let poec = metrics::poec(&c.labels, classes);
            let cov = metrics::cov(&c.labels, &hit_rates);
            let sigma_weighted = metrics::sigma_weighted(&c.labels, &hit_rates);
            let clustering = took + start.elapsed();
            let builder_time = match m {
                Method::Setvector | Method::SetvectorVector => self.time[0],
                Method::Activity | Method::ActivityMagnitude => self.time[1],
                Method::ReuseDistance => self.time[2],
                Method::Wavelet | Method::WaveletDc | Method::WaveletSvd => self.time[3],
            };
            methods.push((
                m,
                c.labels.clone(),
                MethodReport {
                    name: m.name(),
                    poec,
                    cov,
                    sigma_weighted,
                    k: c.k(),
                    k_scores,
                    dims,
                    inertia: c.inertia,
                    phases,
                    signature_ns_per_ref: per_ref(builder_time),
                    clustering_ms: clustering.as_secs_f64() * 1e3,
                    clustering_ns_per_ref: per_ref(clustering),
                    simpoint: None,
                },
            ));
        }
        let intervals = (0..n)
            .map(|i| IntervalReport {
                index: i as u64,
                instructions: counts[i].instructions,
                data_refs: counts[i].data_refs,
                l2_accesses: truth[i].accesses,
                l2_hits: truth[i].hits,
                l2_hit_rate: hit_rates[i],
                phases: methods
                    .iter()
                    .map(|(m, labels, _)| (m.name(), labels[i]))
                    .collect(),
            })
            .collect();
        let l2_accesses: u64 = truth.iter().map(|c| c.accesses).sum();
        let l2_hits: u64 = truth.iter().map(|c| c.hits).sum();
        let o = &self.options;
        Ok(PhaseReport {
            methods: methods.into_iter().map(|(_, _, r)| r).collect(),
            intervals,
            settings: PhaseSettings {
                interval: o.interval << self.splitter.merged(),
                unit,
                k: o.k,
                l2: o.l2,
                l1: o.l1,
                policy: o.policy,
                setvector_bits: o.setvector_bits,
                activity_supersets: o.supersets(),
                wavelet_modulo: o.wavelet_modulo,
                svd_rank: o.svd_rank,
                seed: o.seed,
                restarts: o.restarts,
                max_iterations: o.max_iterations,
                warmup_intervals: o.warmup_intervals,
                merged: self.splitter.merged(),
            },
            instructions,
            data_refs,
            l2_accesses,
            l2_hits,
            l2_miss_ratio: if l2_accesses == 0 {
                0.0
            } else {
                (l2_accesses - l2_hits) as f64 / l2_accesses as f64
            },
            ground_truth_ns_per_ref: per_ref(self.time[4]),
        })
    }
}

impl Analysis for PhaseAnalysis {
    /// # Panics
    /// On an analysis made with `PhaseAnalysis::fed_distances` (crate-internal) that uses reuse
    /// distances, or with `PhaseAnalysis::fed_truth`.
    fn observe(&mut self, batch: &Batch) {
        assert!(
            !self.truth.is_fed(),
            "a fed ground truth is told its misses"
        );
        self.observe_addresses(batch);
        if let Some(s) = &mut self.reuse {
            timed(&mut self.time[2], || drive(s, &self.segs, &self.addrs));
        }
        self.bound();
    }
}
