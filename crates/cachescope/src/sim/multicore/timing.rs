//! Modelled time: each core's clock, advanced by its instructions and by the latency of each
//! reference's outcome, from a table of latencies with public sources (docs/threads.md,
//! "Latencies").
//!
//! The clocks decide the order of the cores' references when the threads are dealt in
//! modelled time ([`crate::interleave::Timed`]); how fast each core runs relative to the
//! others is what matters, not the absolute time. The model is plain: one cycle per
//! instruction, then each data reference's load-to-use latency added in full (no overlap of
//! misses, no out-of-order execution), an instruction fetch adding only what its miss in the
//! L1I costs beyond the pipelined hit.

use super::MultiCore;
use crate::access::{AccessKind, ThreadId};
use crate::batch::Batch;
use crate::interleave::Clocked;
use crate::sim::Op;

/// Cycles each outcome costs. Field names are a public contract (`simulate --cores --json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Latencies {
    /// Each instruction (its fetch hitting the L1I included).
    pub instruction: u64,
    /// A hit in each level, top down (the L1I's entry, when the first level is split, is the
    /// extra cost of a fetch that misses the L1I and hits the level below: unused for hits).
    pub levels: Vec<u64>,
    /// A line no cache holds: memory.
    pub memory: u64,
    /// A line another core's private cache holds modified, which it supplies.
    pub transfer: u64,
    /// A write that takes a line from other cores' private caches (a request for ownership:
    /// their copies invalidated).
    pub invalidate: u64,
}

/// The sources of the defaults (docs/threads.md has the table and the reasons):
/// - L1 data 4, L2 12, L3 44 cycles: the "fastest latency" of each level of the Skylake
///   client microarchitecture in Intel's 64 and IA-32 Architectures Optimization Reference
///   Manual (cache parameters table);
/// - memory 250 cycles: about 60 ns at 4 GHz, the order of a DDR4 load-to-use latency
///   measured on that core (7-cpu.com's Skylake page: 42 cycles + 51 ns);
/// - transfer 120 cycles: about 40 ns at 3 GHz, Intel's Memory Latency Checker's L2-to-L2
///   modified intervention on a Broadwell-EP (J. McCalpin, Intel developer forum, 2016);
///   core-to-core latencies of current desktop and server cores measured by Chips and
///   Cheese (2021-2023) are 20-80 ns;
/// - invalidate 44 cycles: the L3's latency, where Intel's cores resolve a request for
///   ownership (the L3 keeps the snoop filter).
pub const SKYLAKE_L1: u64 = 4;
/// A private second level: Skylake's L2.
pub const SKYLAKE_L2: u64 = 12;
/// A third level, or any shared level: Skylake's L3.
pub const SKYLAKE_L3: u64 = 44;
/// Memory, in cycles of a 4 GHz core.
pub const MEMORY: u64 = 250;
/// A modified line from another core's private cache.
pub const TRANSFER: u64 = 120;

impl Latencies {
    /// The default latency of each level, top down, the L1I first when the first level is
    /// `split`; `shared` says which of the other levels are shared: the first level (each side
    /// of a split one) 4 cycles, a private second 12, a private third 44, any shared level 44.
    pub fn defaults(split: bool, shared: &[bool]) -> Latencies {
        let by_depth = |(depth, &s): (usize, &bool)| match (s, depth) {
            (true, _) => SKYLAKE_L3,
            (false, 0) => SKYLAKE_L1,
            (false, 1) => SKYLAKE_L2,
            (false, _) => SKYLAKE_L3,
        };
        let levels = split
            .then_some(SKYLAKE_L1)
            .into_iter()
            .chain(shared.iter().enumerate().map(by_depth))
            .collect();
        Latencies {
            instruction: 1,
            levels,
            memory: MEMORY,
            transfer: TRANSFER,
            invalidate: SKYLAKE_L3,
        }
    }
}

/// Where a data reference was served, for its latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// A hit at level `k` (counting a split L1 as two levels, L1I first).
    Level(usize),
    /// Another core's modified copy.
    Transfer,
    /// No cache: memory.
    Memory,
}

/// One core's modelled time. Field names are a public contract (`simulate --cores --json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoreClock {
    /// The core.
    pub core: u32,
    /// Its clock: instructions + stall cycles + idle cycles.
    pub cycles: u64,
    /// Instructions it ran, one cycle each ([`Latencies::instruction`]).
    pub instructions: u64,
    /// The latencies of its references' outcomes.
    pub stall_cycles: u64,
    /// Cycles it had no thread to run until one started on it.
    pub idle_cycles: u64,
}

impl MultiCore {
    /// The cycles a reference's outcome costs: an instruction its cycle, plus its fetch's miss
    /// if the L1I is simulated; a data reference the latency of where it was found; a write
    /// that invalidated other cores' copies the invalidation's too.
    #[inline]
    pub(super) fn latency(&self, instr: bool, served: Found, invalidated: bool) -> u64 {
        let t = &self.latencies;
        let found = match served {
            // A fetch that hits the L1I is in its instruction's cycle.
            Found::Level(0) if instr => 0,
            Found::Level(k) => t.levels[k],
            Found::Transfer => t.transfer,
            Found::Memory => t.memory,
        };
        let base = if instr { t.instruction } else { 0 };
        // A write served by the owner's copy took it over in the transfer.
        let taken = invalidated && served != Found::Transfer;
        base + found + if taken { t.invalidate } else { 0 }
    }

    /// Adds a reference's cycles to `core`'s clock (`instr`: an instruction).
    #[inline]
    pub(super) fn tick(&mut self, core: u32, instr: bool, cycles: u64) {
        let c = &mut self.clocks[core as usize];
        c.cycles += cycles;
        if instr {
            c.instructions += 1;
            c.stall_cycles += cycles - self.latencies.instruction.min(cycles);
        } else {
            c.stall_cycles += cycles;
        }
    }

    /// Each core's modelled time.
    pub fn clocks(&self) -> &[CoreClock] {
        &self.clocks
    }
}

impl MultiCore {
    /// Runs access `i` of `batch` by the thread in place `slot` on `core` and advances the
    /// core's clock by its cycles, less what it waited already (`paid`).
    #[inline]
    pub(super) fn run_access(
        &mut self,
        core: u32,
        slot: usize,
        batch: &Batch,
        i: usize,
        paid: u64,
    ) {
        let kind = batch.kinds[i];
        let instr = kind == AccessKind::Instr;
        let cycles = if instr && self.config.l1i.is_none() {
            self.latencies.instruction
        } else {
            let line = batch.addrs[i] >> self.line_size.shift();
            let (found, invalidated) = self.reference(
                core,
                slot,
                line,
                Op::of(kind),
                instr,
                (batch.addrs[i], batch.pcs[i]),
            );
            if self.config.utilization {
                self.touch(core, instr, batch.addrs[i], batch.sizes[i]);
            }
            self.latency(instr, found, invalidated)
        };
        self.tick(core, instr, cycles.saturating_sub(paid));
    }
}

impl Clocked for MultiCore {
    fn core_of(&mut self, thread: ThreadId) -> u32 {
        self.placement.core_of(thread)
    }

    fn clock(&self, core: u32) -> u64 {
        self.clocks[core as usize].cycles
    }

    fn idle_until(&mut self, core: u32, time: u64) {
        let c = &mut self.clocks[core as usize];
        if c.cycles < time {
            c.idle_cycles += time - c.cycles;
            c.cycles = time;
        }
    }

    /// A data reference to a line that has moved between cores waits while this core is
    /// ahead of another; when it is not, it first waits the latency of taking the line from
    /// the other core (a transfer or an invalidation: the clock advances, nothing changes
    /// hands yet, and the turn ends), and runs when its turn comes again, then costing only
    /// what its outcome costs beyond that wait. Meanwhile the other cores go on using the
    /// line: it changes hands when the request completes.
    #[inline]
    fn step(&mut self, core: u32, thread: ThreadId, batch: &Batch, i: usize, ahead: bool) -> bool {
        let kind = batch.kinds[i];
        let c = core as usize;
        let paid = self.waited[c];
        if paid == 0 && kind.is_data() && self.coherent {
            let line = batch.addrs[i] >> self.line_size.shift();
            if self.contended(core, line) {
                if ahead {
                    return false;
                }
                let wait = self.coherence_wait(core, line, Op::of(kind).writes());
                if wait > 0 {
                    self.waited[c] = wait;
                    self.tick(core, false, wait);
                    return false;
                }
            }
        }
        self.waited[c] = 0;
        let (_, slot) = self.placement.place(thread);
        self.run_access(core, slot, batch, i, paid);
        true
    }
}
