//! The whole sharing analysis of a trace, as `cachescope sharing`, Python's `sharing()` and the
//! report's threads section run it: one pass finds the shared lines and splits the trace per
//! thread; the threads are then dealt back a quantum at a time ([`crate::interleave`]) into a
//! machine with a private L1 per core over a shared last level, which counts each line's
//! coherence misses (docs/threads.md).
//!
//! [`Finder`] and [`Machine`] are the two passes for a driver of one's own (the command-line
//! tool's progress bars); [`analyse`] runs both with one [`Pass`].

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::path::Path;

use super::{SharedLine, SharingAnalysis};
use crate::analysis::Analysis;
use crate::attribution::events::EventReader;
use crate::error::{Error, Result};
use crate::interleave::{DEFAULT_QUANTUM, Interleaver};
use crate::pass::{Analyses, Hooks, Pass};
use crate::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig};
use crate::trace::Trace;

/// The machine the coherence misses are counted in.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Each core's private cache; its line size is the line sharing is measured on.
    pub l1: Geometry,
    /// The shared last level.
    pub ll: Geometry,
    /// Cores; `None` is one per thread, up to 64.
    pub cores: Option<u32>,
    /// Instructions each thread runs before the next one's turn.
    pub quantum: NonZeroU64,
}

impl Default for Options {
    /// `sharing`'s defaults: 32 KiB 8-way L1s over an 8 MiB 16-way LL, 64-byte lines.
    fn default() -> Options {
        Options {
            l1: Geometry::new(32 << 10, 8, 64).expect("a valid geometry"),
            ll: Geometry::new(8 << 20, 16, 64).expect("a valid geometry"),
            cores: None,
            quantum: NonZeroU64::new(DEFAULT_QUANTUM).expect("nonzero"),
        }
    }
}

/// What the sharing analysis finds (`sharing --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sharing {
    /// What was analysed.
    pub source: String,
    /// Threads of the trace.
    pub threads: u32,
    /// Cores of the model.
    pub cores: u32,
    /// Its quantum, in instructions.
    pub quantum: u64,
    /// Coherence misses of the whole model.
    pub coherence_misses: u64,
    /// Every shared line, most coherence misses first ([`super::rank`]).
    pub lines: Vec<SharedLine>,
    /// What limits the names (no event log, a log of another run).
    pub notes: Vec<String>,
}

/// The first pass: the shared lines and the per-thread streams.
pub struct Finder {
    options: Options,
    found: SharingAnalysis,
    split: Interleaver,
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
        Ok(Finder {
            found: SharingAnalysis::new(options.l1.line_size()),
            split: Interleaver::new(options.quantum),
            options,
        })
    }

    /// The analyses the first pass feeds.
    pub fn analyses(&mut self) -> [&mut dyn Analysis; 2] {
        [&mut self.found, &mut self.split]
    }

    /// The second pass's machine and the re-interleaved trace it reads (named as `trace`).
    pub fn machine(self, trace: &Trace) -> Result<Machine> {
        let threads = self.split.threads().len() as u32;
        let cores = self.options.cores.unwrap_or(threads.clamp(1, 64));
        let mut config = MultiCoreConfig::new(
            cores,
            vec![
                LevelSpec::private("L1", self.options.l1),
                LevelSpec::shared("LL", self.options.ll),
            ],
        );
        config.by_line = true;
        Ok(Machine {
            model: MultiCore::new(&config)?,
            trace: Trace::from_reader(Box::new(self.split.finish()?), trace.source().clone()),
            lines: self.found.finish(),
            source: trace.source().to_string(),
            threads,
            cores,
            options: self.options,
        })
    }
}

/// The second pass: the multi-core model over the re-interleaved trace.
pub struct Machine {
    /// The model; the pass feeds it [`Machine::trace`].
    pub model: MultiCore,
    /// The threads dealt a quantum at a time.
    pub trace: Trace,
    lines: Vec<SharedLine>,
    source: String,
    threads: u32,
    cores: u32,
    options: Options,
}

impl Machine {
    /// The shared lines with their coherence misses, ranked, structures not named yet.
    pub fn finish(self) -> Sharing {
        let shift = self.options.l1.line_size().shift();
        let by_line: HashMap<u64, u64> = self
            .model
            .coherence_by_line()
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut lines = self.lines;
        for l in &mut lines {
            l.coherence_misses = by_line.get(&(l.addr >> shift)).copied().unwrap_or(0);
        }
        super::rank(&mut lines);
        Sharing {
            source: self.source,
            threads: self.threads,
            cores: self.cores,
            quantum: self.options.quantum.get(),
            coherence_misses: by_line.values().sum(),
            lines,
            notes: Vec::new(),
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
}

/// Both passes over `trace` with `pass`, the lines named from `log` when given.
pub fn analyse<H: Hooks>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    options: Options,
    log: Option<&Path>,
) -> Result<Sharing, H::Error> {
    let mut finder = Finder::new(options)?;
    pass.run(trace, Analyses(&mut finder.analyses()))?;
    let mut machine = finder.machine(trace)?;
    pass.run(&mut machine.trace, Analyses(&mut [&mut machine.model]))?;
    let mut sharing = machine.finish();
    sharing.name_from(trace, log, options.l1.line_size().bytes())?;
    Ok(sharing)
}
