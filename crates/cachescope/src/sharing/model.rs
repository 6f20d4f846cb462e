//! The whole sharing analysis of a trace, as `cachescope sharing`, Python's `sharing()` and the
//! report's threads section run it: one pass finds the shared lines and splits the trace per
//! thread; the threads are then dealt back ([`crate::cores::Simulation`], in modelled time by
//! default) into a machine with a private L1 per core over a shared last level, which counts
//! each line's coherence misses (docs/threads.md).
//!
//! [`Finder`] and [`Machine`] are the two passes for a driver of one's own (the command-line
//! tool's progress bars; a sampled stream feeding the finder); [`analyse`] runs both with one
//! [`Pass`].

use std::collections::HashMap;
use std::path::Path;

use super::{SharedLine, SharingAnalysis};
use crate::analysis::Analysis;
use crate::attribution::events::{Event, EventReader};
use crate::cores::{Interleave, Schedule, Simulation};
use crate::error::{Error, Result};
use crate::interleave::QuantumUnit;
use crate::pass::{Analyses, Hooks, Pass};
use crate::sim::{Geometry, LevelSpec, MultiCoreConfig};
use crate::trace::Trace;

/// Cores of the model when [`Options::cores`] leaves it to the threads: one per thread, up to
/// this many (threads beyond share cores round-robin).
pub const MAX_CORES: u32 = 64;

/// The machine the coherence misses are counted in, and what is listed.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Each core's private cache; its line size is the line sharing is measured on.
    pub l1: Geometry,
    /// The shared last level.
    pub ll: Geometry,
    /// Cores; `None` is one per thread, up to [`MAX_CORES`].
    pub cores: Option<u32>,
    /// How the threads are interleaved in the model (default: in modelled time, slices of 100
    /// cycles; a quantum of 0 keeps the recorded order).
    pub schedule: Schedule,
    /// List every shared line, not only those with coherence misses.
    pub all: bool,
}

impl Default for Options {
    /// `sharing`'s defaults: 32 KiB 8-way L1s over an 8 MiB 16-way LL, 64-byte lines, the
    /// threads in modelled time, the lines with coherence misses.
    fn default() -> Options {
        Options {
            l1: Geometry::new(32 << 10, 8, 64).expect("a valid geometry"),
            ll: Geometry::new(8 << 20, 16, 64).expect("a valid geometry"),
            cores: None,
            schedule: Schedule::default(),
            all: false,
        }
    }
}

/// What the sharing analysis finds (`sharing --json`). Field names are a public contract.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sharing {
    /// What was analysed.
    pub source: String,
    /// Threads of the trace.
    pub threads: u32,
    /// Cores of the model (one per thread unless asked).
    pub cores: u32,
    /// How the threads were interleaved (`time` or `instructions`; absent: the recorded
    /// order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
    /// The slice (cycles in time, instructions round-robin; 0: the recorded order).
    pub quantum: u64,
    /// What the quantum counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum_unit: Option<QuantumUnit>,
    /// Coherence misses of the whole model.
    pub coherence_misses: u64,
    /// Lines two or more threads touch and one writes, listed or not.
    #[serde(default)]
    pub shared_lines: u64,
    /// The listed lines, most coherence misses first ([`super::rank`]): those with coherence
    /// misses, or every shared line when asked ([`Options::all`]).
    pub lines: Vec<SharedLine>,
    /// What limits the names (no event log, a log of another run).
    pub notes: Vec<String>,
    /// In a sampled analysis, what the detector of lines written by two threads did
    /// ([`super::promote`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotion: Option<super::detect::Promotion>,
}

/// The first pass: the shared lines and the per-thread streams.
pub struct Finder {
    options: Options,
    found: SharingAnalysis,
    sim: Simulation,
}

impl Finder {
    /// The first pass for `options`; their levels must have one line size.
    pub fn new(options: Options) -> Result<Finder> {
        if options.l1.line_size() != options.ll.line_size() {
            return Err(Error::InvalidParameter {
                name: "--L1 and --LL",
                message: "the private and the shared cache must have the same line size".into(),
            });
        }
        // One core per thread: the threads are counted only after this pass, and cores no
        // thread runs on change no count.
        let cores = options.cores.unwrap_or(MAX_CORES);
        let mut config = MultiCoreConfig::new(
            cores,
            vec![
                LevelSpec::private("L1", options.l1),
                LevelSpec::shared("LL", options.ll),
            ],
        );
        config.by_line = true;
        Ok(Finder {
            found: SharingAnalysis::new(options.l1.line_size()),
            sim: Simulation::new(&config, options.schedule)?,
            options,
        })
    }

    /// Follows the frames' locals through the first pass with the modules `log` maps, so
    /// lines on the stack are named `function:local` as `attribute` names them.
    pub fn follow_frames(&mut self, log: &Path) -> Result<()> {
        self.found.follow(super::Locals::from_log(log)?);
        Ok(())
    }

    /// The analyses the first pass feeds.
    pub fn analyses(&mut self) -> [&mut dyn Analysis; 2] {
        [&mut self.found, &mut self.sim]
    }

    /// The second pass's machine and the re-interleaved trace it reads (named as `trace`;
    /// none in the recorded order, which the first pass ran).
    pub fn machine(mut self, trace: &Trace) -> Result<Machine> {
        let dealt = self.sim.dealt(trace)?;
        Ok(Machine {
            trace: dealt,
            lines: self.found.finish(),
            source: trace.source().to_string(),
            sim: self.sim,
            options: self.options,
        })
    }
}

/// The second pass: the multi-core model over the re-interleaved trace.
pub struct Machine {
    /// The threads dealt into the model: reading it runs them (`None`: nothing to read, the
    /// recorded order ran in the first pass).
    pub trace: Option<Trace>,
    sim: Simulation,
    lines: Vec<SharedLine>,
    source: String,
    options: Options,
}

impl Machine {
    /// The shared lines with their coherence misses, ranked, structures not named yet.
    pub fn finish(self) -> Sharing {
        let shift = self.options.l1.line_size().shift();
        let run = self.sim.finish();
        let machine = self.sim.machine();
        let by_line: HashMap<u64, u64> = machine
            .coherence_by_line()
            .unwrap_or_default()
            .into_iter()
            .collect();
        let threads = run.report.placement.len() as u32;
        let mut lines = self.lines;
        for l in &mut lines {
            l.coherence_misses = by_line.get(&(l.addr >> shift)).copied().unwrap_or(0);
        }
        let shared_lines = lines.len() as u64;
        if !self.options.all {
            lines.retain(|l| l.coherence_misses > 0);
        }
        super::rank(&mut lines);
        let schedule = self.sim.schedule();
        Sharing {
            source: self.source,
            threads,
            cores: self
                .options
                .cores
                .unwrap_or_else(|| threads.clamp(1, MAX_CORES)),
            interleave: (schedule.quantum > 0).then_some(schedule.interleave),
            quantum: schedule.quantum,
            quantum_unit: run.unit,
            coherence_misses: by_line.values().sum(),
            shared_lines,
            lines,
            notes: Vec::new(),
            promotion: None,
        }
    }
}

impl Sharing {
    /// Names structures and code from the event log at `log` (`None`: notes that there is
    /// none), after checking it is `trace`'s.
    pub fn name_from(&mut self, trace: &Trace, log: Option<&Path>, line_size: u64) -> Result<()> {
        let Some(path) = log else {
            self.notes.push(
                "no event log (record the program with `cachescope record` first): structures \
                 are `other` and code is instruction addresses"
                    .into(),
            );
            return Ok(());
        };
        let log = EventReader::open(path)?;
        if let Some(warning) = crate::attribution::run_id::check(trace, &log.header, path)? {
            self.notes.push(warning);
        }
        super::name(&mut self.lines, log, None, line_size)
    }

    /// Names structures and code from `events`, the program's as it ran (`sharing -- PROGRAM`).
    pub fn name_from_events(&mut self, events: Vec<Event>, line_size: u64) -> Result<()> {
        super::name(&mut self.lines, events.into_iter().map(Ok), None, line_size)
    }
}

/// Both passes over `trace` with `pass`, the lines named from `log` when given.
pub fn analyse<H: Hooks>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    options: Options,
    log: Option<&Path>,
) -> Result<Sharing, H::Error> {
    analyse_through(trace, pass, options, log, None)
}

/// [`analyse`], the first pass's analyses fed through `promoter` when given.
pub(super) fn analyse_through<H: Hooks>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    options: Options,
    log: Option<&Path>,
    promoter: Option<&mut super::promote::Promoter>,
) -> Result<Sharing, H::Error> {
    let mut finder = Finder::new(options)?;
    if let Some(log) = log {
        finder.follow_frames(log)?;
    }
    match promoter {
        Some(promoter) => {
            let mut fed = super::promote::Fed {
                promoter,
                finder: &mut finder,
            };
            pass.run(trace, Analyses(&mut [&mut fed]))?
        }
        None => pass.run(trace, Analyses(&mut finder.analyses()))?,
    };
    let mut machine = finder.machine(trace)?;
    if let Some(dealt) = &mut machine.trace {
        pass.run(dealt, Analyses(&mut []))?;
    }
    let mut sharing = machine.finish();
    sharing.name_from(trace, log, options.l1.line_size().bytes())?;
    Ok(sharing)
}
