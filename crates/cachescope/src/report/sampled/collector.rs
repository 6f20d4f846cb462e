//! [`SampledCollector`]: the analyses of a sampled report, fed the sampled stream in order on
//! one thread (they see a few hundredths of the references; the decode runs on the others).

use std::time::Instant;

use crate::Result;
use crate::analysis::Analysis;
use crate::attribution::callgraph::CallsSeen;
use crate::attribution::measure::{self as attribution, EventSource};
use crate::batch::Batch;
use crate::mini::MiniSim;
use crate::models::hotl::FootprintAnalysis;
use crate::opt::OptAnalysis;
use crate::phases::PhaseAnalysis;
use crate::reuse::{Options, ShardsAnalysis, sizes_log_range};
use crate::sampling::{DEFAULT_SLOT_REFS, SamplerOptions};
use crate::sim::{Policy, TwoLevelLru};
use crate::spatial::{Forgetting, SpatialOptions};

use super::super::kinds::KindCounts;
use super::super::options::{
    CollectOptions, L2_BYTES, MAX_BYTES, MIN_BYTES, l1_lines, three_c_sizes,
};
use super::scale::scaled_geometry;

/// The analyses of one sampled report, waiting to be fed.
pub struct SampledCollector {
    pub(super) options: CollectOptions,
    pub(super) spatial: SpatialOptions,
    pub(super) started: Instant,
    /// Access counts from the batches' spans.
    pub(super) kinds: KindCounts,
    /// SHARDS (the LRU curve, the stack-distance histogram, the L1 histogram of the L2 model,
    /// the 3C capacity misses) and the two-level simulation on the sampled lines that reads
    /// its stack distances, its caches scaled by the rate.
    pub(super) two_level: SampledTwoLevel,
    /// The footprint and reuse times at full-stream positions, scaled by the rate.
    pub(super) fp: FootprintAnalysis,
    /// LRU, FIFO, SRRIP and DRRIP in the 3C section's caches, inside the sample, with LRU
    /// fully associative on the same lines (the conflict misses' control variate).
    pub(super) minis: MiniSim,
    /// Fully associative random replacement, one size per octave, inside the sample, with LRU
    /// in the same caches (its control variate).
    pub(super) random: MiniSim,
    /// OPT on the sampled lines, its sizes scaled by the rate.
    pub(super) opt: OptAnalysis,
    pub(super) phases: PhaseAnalysis,
    pub(super) attribution: Option<attribution::Attribution<'static>>,
    /// The call graph of a trace with call events, beside the attribution (docs/callgraph.md).
    pub(super) callgraph: Option<crate::attribution::callgraph::CallGraph>,
    /// Without `--sampled-calls`, only whether the trace has call events, for the note that
    /// says how to get the section.
    pub(super) calls_seen: Option<CallsSeen>,
    /// Threads the models after the pass may use ([`SampledCollector::with_threads`]).
    pub(super) threads: usize,
}

/// The 3C sweep's policies, in `minis`' order.
pub(super) const POLICIES: usize = 4;

/// StatCache's sampler beside the filter: the report's rate and seed.
pub fn reuse_options(options: &CollectOptions) -> SamplerOptions {
    SamplerOptions {
        rate: options.sample_rate,
        seed: options.seed,
        slot_refs: DEFAULT_SLOT_REFS,
        line_size: options.line_size,
        include_instructions: false,
    }
}

impl SampledCollector {
    /// Sets up every analysis for a stream sampled with `spatial` (its rate caps every
    /// miniature); errors on invalid options before any reading.
    pub fn new(options: CollectOptions, spatial: SpatialOptions) -> Result<SampledCollector> {
        spatial.validate()?;
        let rate = spatial.rate;
        let reuse = Options {
            line_size: options.line_size,
            ..Options::default()
        };
        let line = options.line_size.bytes();
        let sizes = three_c_sizes(line, options.ways);
        let policies = [
            Policy::Lru,
            Policy::Fifo,
            Policy::Srrip,
            Policy::Drrip { seed: options.seed },
        ];
        let minis =
            MiniSim::of_sample(reuse, &policies, Some(options.ways), &sizes, rate, 1, rate)?
                .with_fully_associative_lru()?;
        let random_sizes = sizes_log_range(MIN_BYTES.max(line), MAX_BYTES, 1)?;
        let random = MiniSim::of_sample(
            reuse,
            &[Policy::Random { seed: options.seed }, Policy::Lru],
            None,
            &random_sizes,
            rate,
            1,
            rate,
        )?;
        let phases = super::phases::phase_analysis(&options, rate)?;
        Ok(SampledCollector {
            started: Instant::now(),
            kinds: KindCounts::default(),
            two_level: SampledTwoLevel::new(reuse, rate),
            fp: FootprintAnalysis::new(reuse, &[])?,
            minis,
            random,
            opt: OptAnalysis::new(reuse)?,
            phases,
            attribution: None,
            callgraph: None,
            calls_seen: None,
            threads: 1,
            options,
            spatial,
        })
    }

    /// Lets [`SampledCollector::finish`] use `threads` threads (default 1): StatCache's sizes
    /// are solved on them, the phases clustered beside; the report is the same for any number.
    pub fn with_threads(mut self, threads: usize) -> SampledCollector {
        self.threads = threads.max(1);
        self
    }

    /// Adds data-structure attribution fed by `events`, the trace's event log: the report's
    /// cache as a miniature at the stream's rate, its counts scaled back.
    pub fn with_attribution(mut self, events: EventSource<'static>) -> Result<SampledCollector> {
        let d = attribution::Options::default();
        let options = attribution::Options {
            geometry: scaled_geometry(d.geometry, self.spatial.rate)?,
            cost: None,
            mrc: false,
            utilization: true,
            seed: self.options.seed,
            ..d
        };
        let mut a = attribution::Attribution::new(options, Some(events))?;
        if let Some(r) = super::scale::miniature_rate(d.geometry, self.spatial.rate)? {
            a = a.sub_sampled(r, self.spatial.line_size)?;
        }
        self.attribution = Some(a);
        // The call graph, where the trace has call events and the stream is sampled by the
        // lines of its D1 (the default caches': 64 bytes).
        let graph = crate::attribution::callgraph::Options {
            only_with_calls: true,
            ..Default::default()
        };
        if graph.caches[1].line_size() == self.spatial.line_size && !self.options.sampled_calls {
            self.calls_seen = Some(CallsSeen::default());
        } else if graph.caches[1].line_size() == self.spatial.line_size {
            let mini = super::super::callgraph::miniatures(graph.caches, self.spatial.rate)?;
            let graph = crate::attribution::callgraph::Options {
                sampled: Some(mini),
                ..graph
            };
            self.callgraph = Some(crate::attribution::callgraph::CallGraph::new(graph, None)?);
        }
        Ok(self)
    }

    /// Every analysis, for one pass over the sampled stream shared out over threads
    /// ([`crate::pass::Independent`]): each sees every batch in order, so the report is the
    /// one thread's. The costliest first and apart (the 3C sweep's miniatures, OPT's spill,
    /// SHARDS's stack distances with the two-level model, the phases), the pass moving them
    /// where the load is even.
    pub fn analyses_send(&mut self) -> Vec<&mut (dyn Analysis + Send)> {
        let mut all: Vec<&mut (dyn Analysis + Send)> = vec![
            &mut self.minis,
            &mut self.phases,
            &mut self.two_level,
            &mut self.opt,
            &mut self.fp,
            &mut self.random,
            &mut self.kinds,
        ];
        if let Some(a) = &mut self.attribution {
            all.push(a);
        }
        if let Some(g) = &mut self.callgraph {
            all.push(g);
        }
        if let Some(w) = &mut self.calls_seen {
            all.push(w);
        }
        all
    }

    /// Every analysis, for one pass over the sampled stream on one thread.
    pub fn analyses(&mut self) -> Vec<&mut dyn Analysis> {
        let mut all: Vec<&mut dyn Analysis> = vec![
            &mut self.kinds,
            &mut self.two_level,
            &mut self.fp,
            &mut self.minis,
            &mut self.random,
            &mut self.opt,
            &mut self.phases,
        ];
        if let Some(a) = &mut self.attribution {
            all.push(a);
        }
        if let Some(g) = &mut self.callgraph {
            all.push(g);
        }
        if let Some(w) = &mut self.calls_seen {
            all.push(w);
        }
        all
    }
}

/// SHARDS ([`ShardsAnalysis`]) and the two-level L1 → L2 simulation of the report's L2
/// section on the sampled lines, which reads SHARDS's stack distances: every cache scaled by
/// the rate (SHARDS's reading of a fully associative LRU cache: `C` lines hit the sampled
/// references whose sampled stack distance is below `C · R`). One stack for both: SHARDS's,
/// from which a line the stream's limit drops leaves at once (SHARDS_max).
pub(super) struct SampledTwoLevel {
    pub(super) shards: ShardsAnalysis,
    /// The L2s' tables forget the dropped lines in sweeps.
    forgetting: Forgetting,
    pub(super) sim: TwoLevelLru,
}

impl SampledTwoLevel {
    fn new(reuse: Options, rate: f64) -> SampledTwoLevel {
        let line = reuse.line_size.bytes();
        let l1 = ((l1_lines(line) as f64 * rate).round() as u64).max(1);
        let l2: Vec<u64> = L2_BYTES
            .iter()
            .map(|&b| (((b / line) as f64 * rate).round() as u64).max(1) * line)
            .collect();
        SampledTwoLevel {
            shards: ShardsAnalysis::new(reuse),
            forgetting: Forgetting::default(),
            sim: TwoLevelLru::new(line, l1, &l2),
        }
    }
}

impl Analysis for SampledTwoLevel {
    fn observe(&mut self, batch: &Batch) {
        let sim = &mut self.sim;
        self.shards
            .observe_each(batch, |line, distance| sim.access(line, distance));
        if let Some(s) = batch.sampling() {
            let (hash, limit) = (s.hash(), s.limit());
            if self.forgetting.due(limit, self.sim.held_lines()) {
                self.sim.forget(|line| limit.admits(hash.of(line)));
                self.forgetting.swept(limit, self.sim.held_lines());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::forget::{cap, testing};

    /// After 10^7 distinct lines through the default fixed-size filter (2^18 lines), each
    /// line table of the analyses that forget holds at most 1.2 times the sample plus a
    /// batch's lines, so it fits 2^19 slots (8 MiB); without forgetting they would hold every
    /// line the filter ever admitted (about 1.2 M, 2^21 slots).
    #[test]
    fn line_tables_stay_under_the_cap_on_ten_million_lines() {
        let max_lines = crate::spatial::DEFAULT_MAX_LINES;
        let cap = cap(max_lines as usize, crate::batch::BATCH_LEN);
        let reuse = Options::default();
        let mut two_level = SampledTwoLevel::new(reuse, 1.0);
        let sizes = [64 << 10, 1 << 20];
        let mut mini =
            MiniSim::of_sample(reuse, &[Policy::Lru], Some(8), &sizes, 1.0, 1, 1.0).expect("valid");
        let mut opt = OptAnalysis::new(reuse).expect("a temporary file");
        let mut fp = FootprintAnalysis::new(reuse, &[]).expect("valid");
        let (mut batches, mut admitted) = (0, 0u64);
        testing::sampled(0..10_000_000u64, max_lines, |batch| {
            two_level.observe(batch);
            mini.observe(batch);
            opt.observe(batch);
            fp.observe(batch);
            for held in [
                two_level.shards.held_lines(),
                two_level.sim.held_lines(),
                mini.held_lines(),
                opt.held_lines(),
                fp.held_lines(),
            ] {
                assert!(held <= cap, "{held} lines held after batch {batches}");
            }
            batches += 1;
            admitted += batch.len() as u64;
        });
        // Every line is referenced once: the lines admitted are the references kept.
        assert!(admitted > 2 * cap as u64, "{admitted} lines admitted");
        // The footprint's table in 2^19 slots, the forgotten lines' positions beside it in a
        // byte or two each.
        assert!(
            fp.heap_bytes() < (8 << 20) + (3 << 20),
            "{} bytes",
            fp.heap_bytes()
        );
        assert_eq!(fp.distinct_lines(), admitted);
    }
}
