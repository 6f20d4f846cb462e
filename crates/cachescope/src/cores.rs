//! [`Simulation`]: a threaded trace through a [`crate::sim::MultiCore`], its
//! threads ordered as a
//! [`Schedule`] says (docs/threads.md): in modelled time (the default: the dealing asks the
//! machine for each core's clock, so the two run together), round-robin by instructions, or
//! in the recorded order. The one way in for `simulate --cores`, `sharing`, `corun
//! --split-threads --simulate` and a library user.
//!
//! A thread starts when the recording first saw it (after as many of the first thread's
//! references as preceded it), so two threads recorded one after the other never overlap:
//! the second's first touch of a line is a cold miss on its core, not a coherence miss. The
//! example records its two threads as a running program's recording shows them, taking turns:
//!
//! ```
//! use cachescope::pass::Pass;
//! use cachescope::cores::{Schedule, Simulation};
//! use cachescope::sim::{Geometry, LevelSpec, MultiCoreConfig};
//! use cachescope::trace::{Trace, native};
//! use cachescope::{Access, Batch, Source};
//!
//! // Two threads writing one line, a thousand times each, recorded taking turns of ten.
//! let mut b = Batch::new();
//! for k in 0..2000 {
//!     b.set_thread(1 + (k / 10) % 2);
//!     b.push(Access::store(0x1000, 8));
//! }
//! let mut w = native::Writer::new(Vec::new(), native::Header::new())?;
//! w.write_batch(&b)?;
//! let (bytes, _) = w.finish()?;
//! let reader = native::Reader::new(std::io::Cursor::new(bytes), Source::Memory)?;
//! let mut trace = Trace::from_reader(Box::new(reader), Source::Memory);
//! let l1 = LevelSpec::private("L1", Geometry::parse("32K,8,64")?);
//! let config = MultiCoreConfig::new(2, vec![l1]);
//! let run = Simulation::run(&mut trace, &mut Pass::new(1), &config, Schedule::default())?;
//! assert!(run.report.totals[0].counts.coherence > 0);
//! assert_eq!(run.report.clocks.len(), 2);
//! # Ok::<(), cachescope::Error>(())
//! ```

use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::interleave::{DEFAULT_QUANTUM, DEFAULT_SLICE, Interleaver, QuantumUnit};
use crate::pass::{Analyses, Hooks, Pass};
use crate::sim::{MultiCore, MultiCoreConfig, MultiCoreReport};
use crate::trace::{AccessReader, Observing, Trace};

/// How the threads are ordered for the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interleave {
    /// In modelled time: the core whose clock is lowest runs next, a slice of `quantum`
    /// cycles ([`crate::interleave::Timed`]).
    Time,
    /// Round-robin, `quantum` instructions each ([`crate::interleave::Interleaved`]).
    Instructions,
}

impl Interleave {
    /// `time` or `instructions`.
    pub fn name(self) -> &'static str {
        match self {
            Interleave::Time => "time",
            Interleave::Instructions => "instructions",
        }
    }
}

/// The order the machine sees: how the threads are interleaved, and the quantum (cycles in
/// time, instructions round-robin; 0: the recorded order, nothing re-interleaved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// In modelled time or round-robin.
    pub interleave: Interleave,
    /// The slice; 0 keeps the recorded order.
    pub quantum: u64,
}

impl Default for Schedule {
    /// In modelled time, slices of [`DEFAULT_SLICE`] cycles.
    fn default() -> Schedule {
        Schedule {
            interleave: Interleave::Time,
            quantum: DEFAULT_SLICE,
        }
    }
}

impl Schedule {
    /// `interleave` with its default quantum ([`DEFAULT_SLICE`] cycles, [`DEFAULT_QUANTUM`]
    /// instructions).
    pub fn with_default_quantum(interleave: Interleave) -> Schedule {
        let quantum = match interleave {
            Interleave::Time => DEFAULT_SLICE,
            Interleave::Instructions => DEFAULT_QUANTUM,
        };
        Schedule {
            interleave,
            quantum,
        }
    }
}

/// What a [`Simulation`] gives.
#[derive(Clone, Debug)]
pub struct SimulationRun {
    /// The machine's counts.
    pub report: MultiCoreReport,
    /// What the quantum counted: cycles, instructions, references (a trace without
    /// instruction fetches dealt round-robin); `None` for the recorded order.
    pub unit: Option<QuantumUnit>,
}

/// A [`MultiCore`] over a threaded trace in two passes: the first splits the trace per
/// thread (or, in the recorded order, runs the machine), the second reads the threads dealt
/// into the machine ([`Simulation::dealt`]). See the [module documentation](self).
pub struct Simulation {
    machine: Arc<Mutex<MultiCore>>,
    split: Option<Interleaver>,
    schedule: Schedule,
    unit: Option<QuantumUnit>,
}

impl Simulation {
    /// The machine `config` (checked) fed in the order `schedule` says.
    pub fn new(config: &MultiCoreConfig, schedule: Schedule) -> Result<Simulation> {
        let machine = Arc::new(Mutex::new(MultiCore::new(config)?));
        let split = NonZeroU64::new(schedule.quantum).map(Interleaver::new);
        Ok(Simulation {
            machine,
            split,
            schedule,
            unit: None,
        })
    }

    /// The schedule.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// The machine (its counts so far, its coherence misses by line).
    pub fn machine(&self) -> MutexGuard<'_, MultiCore> {
        self.machine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The second pass: the threads the first pass split, dealt into the machine (reading it
    /// runs them); `None` in the recorded order, which the first pass ran. Named as `source`.
    pub fn dealt(&mut self, source: &Trace) -> Result<Option<Trace>> {
        let Some(split) = self.split.take() else {
            return Ok(None);
        };
        let quantum = NonZeroU64::new(self.schedule.quantum).expect("split only when nonzero");
        let reader: Box<dyn AccessReader> = match self.schedule.interleave {
            Interleave::Time => {
                self.unit = Some(QuantumUnit::Cycles);
                Box::new(split.finish_timed(quantum, self.machine.clone())?)
            }
            Interleave::Instructions => {
                let merged = split.finish()?;
                self.unit = Some(merged.unit());
                // Round-robin dealing read into the machine as it is read.
                Box::new(Observing::new(Box::new(merged), self.machine.clone()))
            }
        };
        Ok(Some(Trace::from_reader(reader, source.source().clone())))
    }

    /// The counts, once the passes have run.
    pub fn finish(&self) -> SimulationRun {
        SimulationRun {
            report: self.machine().finish(),
            unit: self.unit,
        }
    }

    /// Both passes over `trace` with `pass`.
    pub fn run<H: Hooks>(
        trace: &mut Trace,
        pass: &mut Pass<H>,
        config: &MultiCoreConfig,
        schedule: Schedule,
    ) -> Result<SimulationRun, H::Error> {
        let mut sim = Simulation::new(config, schedule)?;
        pass.run(trace, Analyses(&mut [&mut sim]))?;
        if let Some(mut dealt) = sim.dealt(trace)? {
            pass.run(&mut dealt, Analyses(&mut []))?;
        }
        Ok(sim.finish())
    }
}

/// The first pass: the split per thread, or the machine itself in the recorded order.
impl Analysis for Simulation {
    fn observe(&mut self, batch: &Batch) {
        match &mut self.split {
            Some(split) => split.observe(batch),
            None => self.machine().observe(batch),
        }
    }
}
