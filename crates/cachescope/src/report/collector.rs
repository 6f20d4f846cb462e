//! [`Collector`]: every analysis the report shows, set up to be fed by one decode of the trace
//! (through [`crate::pass::Pass::run`]: in order as [`crate::pass::Analyses`], or shared out
//! over the threads as [`crate::pass::Independent`]; the CLI's hooks add a progress bar),
//! then finished into a [`Report`].

use std::sync::Arc;
use std::time::Instant;

use crate::Result;
use crate::analysis::Analysis;
use crate::attribution::measure::{self as attribution, EventSource};
use crate::models::hotl::{FootprintAnalysis, LocalFootprintAnalysis};
use crate::models::l2::TwoLevelAnalysis;
use crate::opt::SpilledIds;
use crate::phases::{Method, PhaseAnalysis, PhaseOptions};
use crate::reuse::{Options, RandomReplacementAnalysis, sizes_log_range};
use crate::sampling::{DEFAULT_SLOT_REFS, Sampler, SamplerOptions};
use crate::sim::{Geometry, Policy, ThreeCSweep, TwoLevelLru};
use crate::stages::Stage;
use crate::trace::Trace;

use super::kinds::KindCounts;
use super::model::Report;
use super::options::{
    CollectOptions, L2_BYTES, MAX_BYTES, MIN_BYTES, l1_lines, max_bytes, three_c_sizes,
};
use super::policies::PolicyCurves;
use super::sweep::SweepAndPhases;

/// The analyses of one report, waiting to be fed.
pub struct Collector {
    pub(super) options: CollectOptions,
    pub(super) started: Instant,
    /// Accesses per kind (the distinct lines come from the stack distances).
    pub(super) kinds: KindCounts,
    /// The footprint, and the reuse-time histograms (it measures the same reuse times: one
    /// table of last uses, not two).
    pub(super) fp: FootprintAnalysis,
    /// HOTL's time-local reading, the one `mrc --method hotl` shows; and random replacement.
    /// Both run after the pass on the line ids OPT spilled, beside OPT's stack (the longest
    /// model, which leaves the other core idle otherwise): the pass's cores go to the
    /// analyses that need the trace.
    pub(super) local: LocalFootprintAnalysis,
    pub(super) random: RandomReplacementAnalysis,
    pub(super) sampler: Sampler,
    /// The 3C caches, classified from one stack-distance computation, whose histogram gives
    /// the exact LRU curve too; from the same distances, the exact L1 → L2 simulation the L2
    /// model is checked against, and the phases' reuse-distance signature.
    pub(super) sweep: SweepAndPhases,
    /// FIFO, SRRIP, DRRIP in the 3C caches, and OPT: the policies figure.
    pub(super) policies: PolicyCurves,
    /// Data-structure attribution, only for traces with an event log (without one every
    /// reference of a synthetic trace is "other", which says nothing).
    pub(super) attribution: Option<attribution::Attribution<'static>>,
    /// Each thread's page-level stack distances: the pages section (`pages.rs`).
    pub(super) pages: crate::tlb::PageCurves,
    /// The call graph, beside the attribution (named by its memory map), for recordings
    /// with call events.
    pub(super) callgraph: Option<crate::attribution::callgraph::CallGraph>,
    /// Threads [`Collector::finish`] may use (OPT's curve beside the other models, the phases'
    /// clusterings side by side).
    pub(super) threads: usize,
    /// The work of [`Collector::finish`], counted for a front end ([`Collector::stages`]).
    stages: Stages,
}

/// [`Collector::finish`]'s stages, in the order [`Collector::stages`] lists them.
struct Stages {
    next_uses: Arc<Stage>,
    opt_stack: Arc<Stage>,
    local: Arc<Stage>,
    random: Arc<Stage>,
    models: Arc<Stage>,
}

impl Stages {
    fn new() -> Stages {
        Stages {
            next_uses: Stage::new("OPT's next uses"),
            opt_stack: Stage::new("OPT's stack"),
            local: Stage::new("time-local footprint"),
            random: Stage::new("random replacement"),
            models: Stage::new("models"),
        }
    }
}

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
        TwoLevelAnalysis::new(line, l1_lines(line), &L2_BYTES, Policy::Lru)?;
        let three_c = ThreeCSweep::new(reuse, &geometries, Policy::Lru)?
            .with_two_level(TwoLevelLru::new(line, l1_lines(line), &L2_BYTES));
        let policy_sizes: Vec<u64> = geometries.iter().map(|g| g.size_bytes()).collect();
        let policies = PolicyCurves::new(reuse, &policy_sizes, options.ways, options.seed)?;
        let phases = PhaseAnalysis::new(PhaseOptions {
            interval: options.phase_interval,
            l2: Geometry::new(1 << 20, 16, line)?,
            seed: options.seed,
            methods: Method::ALL.to_vec(),
            // The sampled report's bound, so that both cut a long run alike.
            max_intervals: Some(crate::phases::BOUNDED_INTERVALS),
            ..PhaseOptions::default()
        })?;
        Ok(Collector {
            started: Instant::now(),
            kinds: KindCounts::default(),
            fp: FootprintAnalysis::new(reuse, &[])?,
            local: LocalFootprintAnalysis::new(reuse),
            random: RandomReplacementAnalysis::new(reuse, &random_sizes, options.seed),
            sampler: Sampler::new(SamplerOptions {
                rate: options.sample_rate,
                seed: options.seed,
                slot_refs: DEFAULT_SLOT_REFS,
                line_size: options.line_size,
                include_instructions: false,
            })?,
            sweep: SweepAndPhases::new(three_c, phases),
            policies,
            attribution: None,
            pages: crate::tlb::PageCurves::new(crate::LineSize::PAGE_4K),
            callgraph: None,
            threads: 1,
            stages: Stages::new(),
            options,
        })
    }

    /// Lets [`Collector::finish`] use `threads` threads (default 1); the report is the same
    /// for any number.
    pub fn with_threads(mut self, threads: usize) -> Collector {
        self.threads = threads.max(1);
        self
    }

    /// The stages of [`Collector::finish`] (OPT's backward pass and stack, the time-local
    /// footprint and random replacement over the spilled references, the models), each
    /// counting its references as it goes: a front end reads them from another thread while
    /// `finish` runs, which otherwise says nothing for seconds on a long trace.
    pub fn stages(&self) -> Vec<Arc<Stage>> {
        let s = &self.stages;
        [&s.next_uses, &s.opt_stack, &s.local, &s.random, &s.models]
            .into_iter()
            .cloned()
            .collect()
    }

    /// Adds data-structure attribution (the paper's default cache, the monitor's cost left
    /// out, line utilization and the loads' strides in) fed by `events`, the trace's event log.
    pub fn with_attribution(mut self, events: EventSource<'static>) -> Result<Collector> {
        let options = attribution::Options {
            cost: None,
            mrc: false,
            utilization: true,
            seed: self.options.seed,
            ..attribution::Options::default()
        };
        self.attribution = Some(attribution::Attribution::new(options, Some(events))?);
        let graph = crate::attribution::callgraph::Options {
            only_with_calls: true,
            ..Default::default()
        };
        self.callgraph = Some(crate::attribution::callgraph::CallGraph::new(graph, None)?);
        Ok(self)
    }

    /// Every analysis, for one pass on one thread:
    /// `pass.run(trace, Analyses(&mut collector.analyses()))`; those of
    /// [`Collector::analyses_send`], in its order.
    pub fn analyses(&mut self) -> Vec<&mut dyn Analysis> {
        self.analyses_send()
            .into_iter()
            .map(|a| a as &mut dyn Analysis)
            .collect()
    }

    /// Every analysis as `Send`, for [`crate::pass::Independent`] (one decode, the analyses
    /// shared out over the threads as the pass goes). Listed so that the first deal, every
    /// other analysis to each of two threads, is about even on small footprints (the 3C sweep
    /// with the two-level simulation and the phases, StatCache's sampler, OPT's spill and the
    /// attribution on one; the policies' miniatures, the footprint with the reuse times and
    /// the access counts on the other); the pass moves them where the load is even on others
    /// (docs/report.md has each stage's cost).
    pub fn analyses_send(&mut self) -> Vec<&mut (dyn Analysis + Send)> {
        let (minis, opt) = self.policies.parts();
        let mut all: Vec<&mut (dyn Analysis + Send)> =
            vec![&mut self.sweep, minis, &mut self.sampler, &mut self.fp];
        all.extend(opt.map(|o| o as &mut (dyn Analysis + Send)));
        all.push(&mut self.kinds);
        if let Some(a) = &mut self.attribution {
            all.push(a);
        }
        all.push(&mut self.pages);
        if let Some(g) = &mut self.callgraph {
            all.push(g);
        }
        all
    }

    /// Runs the models on what the pass measured and builds the report. `trace` is the trace
    /// that was read (for its name and format).
    pub fn finish(mut self, trace: &Trace) -> Result<Report> {
        let line = self.options.line_size.bytes();
        let distinct = self.sweep.three_c.distances().cold;
        let stats = self.kinds.summary(distinct, line);
        let max_bytes = max_bytes(stats.bytes_touched, line);
        let sizes = sizes_log_range(MIN_BYTES.max(line), max_bytes, 8)?;
        let mut opt = self
            .policies
            .take_opt()
            .ok_or(crate::Error::InvalidParameter {
                name: "report",
                message: "OPT's analysis was already finished".into(),
            })?;
        // Random replacement and the time-local footprint read the line ids OPT spilled
        // while OPT runs its backward pass and stack on another thread.
        let ids = opt.ids()?;
        let (next_uses, opt_stack) = (self.stages.next_uses.clone(), self.stages.opt_stack.clone());
        let opt_stages = Some((&*next_uses, &*opt_stack));
        let models = self.stages.models.clone();
        let report = if self.threads > 1 {
            std::thread::scope(|s| {
                let opt = s.spawn(|| opt.finish_staged(&sizes, opt_stages));
                self.run_numbered(&ids)?;
                models.start(0);
                self.models(trace, stats, max_bytes, &sizes, || joined(opt))
            })
        } else {
            self.run_numbered(&ids)?;
            models.start(0);
            self.models(trace, stats, max_bytes, &sizes, || {
                opt.finish_staged(&sizes, opt_stages)
            })
        };
        models.finish();
        report
    }

    /// Random replacement and the time-local footprint over the spilled line ids; with more
    /// than one thread the footprint gets one of its own, so that the two cores share out
    /// these two and OPT's stack as they go.
    fn run_numbered(&mut self, ids: &SpilledIds) -> Result<()> {
        let (local, random) = (&mut self.local, &mut self.random);
        let (local_stage, random_stage) = (&*self.stages.local, &*self.stages.random);
        let mut local = || counted(ids, local_stage, |b| local.observe_numbered(b));
        let mut random = || counted(ids, random_stage, |b| random.observe_numbered(b));
        if self.threads > 1 {
            std::thread::scope(|s| {
                let local = s.spawn(local);
                random()?;
                joined(local)
            })
        } else {
            random()?;
            local()
        }
    }
}

/// `ids.for_each_block(f)`, counted on `stage`.
fn counted(ids: &SpilledIds, stage: &Stage, mut f: impl FnMut(&[u32])) -> Result<()> {
    stage.start(ids.refs());
    ids.for_each_block(|b| {
        f(b);
        stage.add(b.len() as u64);
    })?;
    stage.finish();
    Ok(())
}

/// What a finishing thread returned; its panic goes on.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    match thread.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
