//! [`MultiCore`]: several cores with private caches over shared ones, kept coherent, fed a
//! threaded trace (`simulate --cores`; docs/threads.md says what every count means).
//!
//! Each thread runs on one core ([`ThreadPlacement`]: pinned, or round-robin by first
//! appearance), and each reference goes down its core's private levels, then the shared ones
//! (`protocol.rs`). Writes invalidate the other cores' private copies; a line one core holds
//! modified is supplied by it to another that misses. Every cache counts its hits and misses,
//! its misses in four classes (cold, capacity, conflict, coherence: `unit.rs`) and the lines
//! other cores' writes took from it. On request ([`MultiCoreConfig::by_line`]) the model also
//! counts each line's coherence misses, the cost a sharing analysis ranks lines by.
//!
//! The model reads the trace in the order it is given. A Valgrind recording runs one thread
//! at a time in long slices; [`crate::interleave`] re-interleaves the threads' streams into a
//! concurrent order first. Caches are non-inclusive, write-allocate unless configured
//! otherwise, with dirty lines and write-backs tracked on request
//! ([`MultiCoreConfig::writes`]), and a reference looks up the line of its first byte, as in [`Hierarchy`](super::Hierarchy); instruction fetches
//! are simulated only with a split first level ([`MultiCoreConfig::l1i`]).
//!
//! ```
//! use cachescope::sim::{Geometry, LevelSpec, MultiCore, MultiCoreConfig};
//! use cachescope::{Access, Batch};
//! use cachescope::analysis::Analysis;
//!
//! // Two threads writing one line in turn, each on its own core: after the first two
//! // references every one is a coherence miss.
//! let l1 = LevelSpec::private("L1", Geometry::parse("32K,8,64")?);
//! let mut sim = MultiCore::new(&MultiCoreConfig::new(2, vec![l1]))?;
//! let mut b = Batch::new();
//! for k in 0..10 {
//!     b.set_thread(1 + k % 2);
//!     b.push(Access::store(0x1000, 8));
//! }
//! sim.observe(&b);
//! let r = sim.finish();
//! assert_eq!(r.totals[0].counts.coherence, 8);
//! # Ok::<(), cachescope::Error>(())
//! ```

mod config;
mod contested;
mod placement;
mod prefetch;
mod protocol;
mod report;
mod threads;
mod timing;
mod unit;

#[cfg(test)]
mod tests;

pub use config::{LevelSpec, MAX_CORES, MultiCoreConfig};
pub use placement::ThreadPlacement;
pub use report::{CacheReport, LevelTotals, MachineLevel, MultiCoreReport};
pub use threads::{ThreadLevel, ThreadReport};
pub use timing::{CoreClock, Latencies};
pub use unit::CacheCounts;

use hashbrown::HashMap;
use placement::Placement;
use unit::Unit;

use crate::access::LineSize;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;

/// A multi-core machine simulated over a threaded trace. See the module documentation.
#[derive(Clone, Debug)]
pub struct MultiCore {
    config: MultiCoreConfig,
    /// Every cache, level by level (L1I first when split), each private level core by core.
    units: Vec<Unit>,
    /// The level and core (`None`: shared) of each unit.
    slots: Vec<(usize, Option<u32>)>,
    /// Per core: its private units on the data side, top down.
    data: Vec<Vec<usize>>,
    /// Per core: its private units on the instruction side (split L1 only).
    instr: Vec<Vec<usize>>,
    /// Per core: all its private units.
    private: Vec<Vec<usize>>,
    /// The shared units, top down.
    shared: Vec<usize>,
    /// Where each unit's write-backs go: the next unit down its core's path, the first shared
    /// one below a core's last private level, `None` for memory.
    below: Vec<Option<usize>>,
    /// Several cores with private caches: the protocol runs.
    coherent: bool,
    /// The lines some core holds modified, and that core.
    owner: HashMap<u64, u32, foldhash::fast::FixedState>,
    /// Per core, a memo of lines it owns.
    hints: Vec<protocol::Hints>,
    placement: Placement,
    line_size: LineSize,
    /// Coherence misses per line, when asked for.
    by_line: Option<HashMap<u64, u64, foldhash::fast::FixedState>>,
    /// What each outcome costs (`timing.rs`).
    latencies: Latencies,
    /// Each core's modelled time.
    clocks: Vec<CoreClock>,
    /// Per thread (in order of first appearance), its lookups per level (`threads.rs`).
    tallies: Vec<Vec<CacheCounts>>,
    /// The lines that moved between cores (`contested.rs`).
    contested: contested::Contested,
    /// Some cache has a prefetcher (`prefetch.rs`).
    prefetching: bool,
    /// Per core, the cycles its next reference has waited already for another core's line
    /// (`timing.rs`).
    waited: Vec<u64>,
}

impl MultiCore {
    /// Empty caches shaped by `config` (checked first: [`MultiCoreConfig::validate`]).
    pub fn new(config: &MultiCoreConfig) -> Result<MultiCore> {
        config.validate()?;
        let cores = config.cores as usize;
        let split = config.l1i.is_some();
        let specs: Vec<_> = config
            .l1i
            .iter()
            .copied()
            .map(|g| (g, false))
            .chain(config.levels.iter().map(|l| (l.geometry, l.shared)))
            .collect();
        let (mut units, mut slots) = (Vec::new(), Vec::new());
        let (mut data, mut instr) = (vec![Vec::new(); cores], vec![Vec::new(); cores]);
        let (mut private, mut shared) = (vec![Vec::new(); cores], Vec::new());
        for (k, &(geometry, is_shared)) in specs.iter().enumerate() {
            if is_shared {
                shared.push(units.len());
                slots.push((k, None));
                let mut unit = Unit::new(geometry, config.policy_of(k, 0), config.writes)?;
                unit.prefetch(config.prefetch_of(k));
                units.push(unit);
                continue;
            }
            for c in 0..cores {
                let u = units.len();
                private[c].push(u);
                // The split L1's two sides each have their own path; the levels below both.
                if !(split && k == 1) {
                    instr[c].push(u);
                }
                if !(split && k == 0) {
                    data[c].push(u);
                }
                slots.push((k, Some(c as u32)));
                let mut unit = Unit::new(geometry, config.policy_of(k, c as u32), config.writes)?;
                unit.prefetch(config.prefetch_of(k));
                units.push(unit);
            }
        }
        if !split {
            instr.iter_mut().for_each(Vec::clear);
        }
        let mut below = vec![None; units.len()];
        for path in data.iter().chain(&instr).chain(std::iter::once(&shared)) {
            let next = path.iter().skip(1).map(|&u| Some(u));
            let last = if std::ptr::eq(path, &shared) {
                None
            } else {
                shared.first().copied()
            };
            for (&u, n) in path.iter().zip(next.chain(std::iter::once(last))) {
                below[u] = n;
            }
        }
        let latencies = config.latencies.clone().unwrap_or_else(|| {
            let shared: Vec<bool> = config.levels.iter().map(|l| l.shared).collect();
            Latencies::defaults(split, &shared)
        });
        if config.utilization {
            units.iter_mut().for_each(Unit::track_utilization);
        }
        Ok(MultiCore {
            latencies,
            clocks: (0..config.cores)
                .map(|core| CoreClock {
                    core,
                    ..CoreClock::default()
                })
                .collect(),
            tallies: Vec::new(),
            contested: contested::Contested::new(),
            waited: vec![0; cores],
            prefetching: config
                .prefetch
                .iter()
                .any(|&p| p != crate::sim::PrefetchPolicy::None),
            coherent: cores > 1 && !private[0].is_empty(),
            line_size: specs[0].0.line_size(),
            placement: Placement::new(config.cores, &config.pins),
            by_line: config.by_line.then(HashMap::default),
            owner: HashMap::default(),
            hints: vec![protocol::Hints::new(); cores],
            config: config.clone(),
            units,
            slots,
            data,
            instr,
            private,
            shared,
            below,
        })
    }

    /// The line size every level uses.
    pub fn line_size(&self) -> LineSize {
        self.line_size
    }

    /// Marks a reference's bytes (`size` at `addr`) on the lines holding them in the caches
    /// it can reach on `core`: its private levels on the instruction (`instr`) or data side,
    /// and the shared ones. Call after the reference.
    fn touch(&mut self, core: u32, instr: bool, addr: u64, size: u32) {
        let c = core as usize;
        let path = if instr { &self.instr[c] } else { &self.data[c] };
        for &u in path.iter().chain(&self.shared) {
            self.units[u].touch(addr, size);
        }
    }

    /// Each line's coherence misses (summed over every cache), by line address (see
    /// [`LineSize`]), in address order; `None` unless [`MultiCoreConfig::by_line`] asked.
    pub fn coherence_by_line(&self) -> Option<Vec<(u64, u64)>> {
        self.by_line.as_ref().map(|m| {
            let mut v: Vec<(u64, u64)> = m.iter().map(|(&l, &n)| (l, n)).collect();
            v.sort_unstable();
            v
        })
    }
}

impl Analysis for MultiCore {
    /// The references in the order given (the recorded order, or dealt round-robin), each
    /// core's clock advanced by them.
    fn observe(&mut self, b: &Batch) {
        for (run, thread) in b.thread_runs() {
            let (core, slot) = self.placement.place(thread);
            for i in run {
                self.run_access(core, slot, b, i, 0);
            }
        }
    }
}
