//! The monitor's own cost (Buck & Hollingsworth §3.2–3.3, Figures 3–4): the sampling handler
//! runs on the same cache, so each sample injects its footprint into the simulated stream.
//!
//! Model (every constant configurable in [`CostModel`]): at each sampled miss the handler
//! touches `handler_lines` cache lines of its own (its stack, the stat bucket table and
//! counters), the same lines every time, at an address region no program uses. Its time is a
//! fixed interrupt delivery cost plus its instructions, plus `miss_penalty` cycles for every
//! miss it adds (its own misses and the program's misses it causes by evicting the program's
//! lines). The program's own time is one cycle per instruction (the trace's instruction
//! fetches; its data references when it has none) plus `miss_penalty` per miss, the paper's
//! virtual cycle count of a simple RISC processor.
//!
//! One perturbed simulation per rate runs alongside the unperturbed one, so the increase in
//! misses is exact for the model.

use crate::error::Result;
use crate::sim::{Cache, Geometry, Policy};

use super::sampler::Sampler;

/// Where the handler's lines live (as a byte address): far above any user mapping.
const HANDLER_BASE: u64 = 0x7e00_0000_0000;

/// The handler's footprint and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Sampling rates to model (1 in N misses). Default: 250, 2500, 25000, 250000.
    pub rates: Vec<u64>,
    /// Distinct cache lines the handler touches per sample. Default: 32 (1 KiB at 32-byte
    /// lines: a few stack frames, the bucket lookup structures and the counters it bumps).
    pub handler_lines: u64,
    /// Cycles to deliver the interrupt and return. Default: 2000.
    pub interrupt_cycles: u64,
    /// Instructions the handler executes per sample. Default: 1000.
    pub handler_instructions: u64,
    /// Cycles per miss. Default: 100.
    pub miss_penalty: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            rates: vec![250, 2_500, 25_000, 250_000],
            handler_lines: 32,
            interrupt_cycles: 2_000,
            handler_instructions: 1_000,
            miss_penalty: 100,
        }
    }
}

/// The cost at one sampling rate. Field names are a public contract (`monitor_cost`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CostRow {
    /// 1 in this many misses sampled.
    pub sample_every: u64,
    /// Samples taken.
    pub samples: u64,
    /// Misses with the handler running (the program's and the handler's).
    pub misses: u64,
    /// Misses added by the handler: `misses` − the unperturbed run's.
    pub extra_misses: i64,
    /// `extra_misses` as a percentage of the unperturbed run's misses.
    pub miss_increase_pct: f64,
    /// The handler's time as a percentage of the program's (virtual cycles).
    pub overhead_pct: f64,
}

/// The cache of one sampling rate with the handler injected.
#[derive(Clone, Debug)]
pub(super) struct Perturbed {
    cache: Cache,
    sampler: Sampler,
    handler: Vec<u64>,
    misses: u64,
    samples: u64,
}

impl Perturbed {
    pub(super) fn new(
        geometry: Geometry,
        every: u64,
        seed: u64,
        model: &CostModel,
    ) -> Result<Perturbed> {
        let first = HANDLER_BASE >> geometry.line_size().shift();
        Ok(Perturbed {
            cache: Cache::new(geometry, Policy::Lru)?,
            sampler: Sampler::new(every, seed),
            handler: (first..first + model.handler_lines).collect(),
            misses: 0,
            samples: 0,
        })
    }

    /// One program reference; the handler runs when its miss is sampled. The handler's own
    /// misses are counted but do not advance the sampling counter (interrupts are off).
    #[inline]
    pub(super) fn access(&mut self, line: u64) {
        if self.cache.access(line) {
            return;
        }
        self.misses += 1;
        if self.sampler.tick() {
            self.samples += 1;
            for &h in &self.handler {
                self.misses += u64::from(!self.cache.access(h));
            }
        }
    }

    /// The row, against the unperturbed `base_misses` and the program's `instructions`.
    pub(super) fn row(&self, model: &CostModel, base_misses: u64, instructions: u64) -> CostRow {
        let extra = self.misses as i64 - base_misses as i64;
        let program = instructions as f64 + (model.miss_penalty * base_misses) as f64;
        let handler = (self.samples * (model.interrupt_cycles + model.handler_instructions)) as f64
            + model.miss_penalty as f64 * extra as f64;
        CostRow {
            sample_every: self.sampler.every(),
            samples: self.samples,
            misses: self.misses,
            extra_misses: extra,
            miss_increase_pct: pct(extra as f64, base_misses as f64),
            overhead_pct: pct(handler, program),
        }
    }
}

fn pct(n: f64, d: f64) -> f64 {
    if d > 0.0 { 100.0 * n / d } else { 0.0 }
}
