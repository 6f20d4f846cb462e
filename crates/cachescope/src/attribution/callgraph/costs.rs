//! What each reference costs: Cachegrind's events from its cache model ([`CachegrindSim`],
//! the model Callgrind's `--cache-sim=yes` shares), and cachescope's own: the lines a data
//! reference evicts from D1, the dirty ones among them (write-backs), and coherence misses.
//!
//! Coherence misses need caches of the threads' own: with two threads or more, each thread
//! also runs in a private D1 of the same shape (as if on a core of its own; `coherence.rs`),
//! where a write invalidates the line in the others'; a miss there on a line another
//! thread's write took away is a coherence miss. Before a second thread appears the first
//! thread's private D1 is exactly the shared one, so it starts as a copy of it then.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::coherence::Coherence;
use crate::access::{AccessKind, ThreadId};
use crate::error::Result;
use crate::sim::{CachegrindSim, Geometry};

/// The events, in column order: Cachegrind's nine, then cachescope's three.
pub const EVENTS: [&str; N] = [
    "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "D1ev", "D1wb", "D1mc",
];

/// Each event's long name, for the `event:` lines of a Callgrind file.
pub const EVENT_NAMES: [&str; N] = [
    "Instruction Fetch",
    "Data Read Access",
    "Data Write Access",
    "L1 Instr. Fetch Miss",
    "L1 Data Read Miss",
    "L1 Data Write Miss",
    "LL Instr. Fetch Miss",
    "LL Data Read Miss",
    "LL Data Write Miss",
    "D1 Evictions (lines replaced)",
    "D1 Write-backs (dirty lines replaced)",
    "D1 Coherence Misses (private D1 per thread)",
];

/// How many events.
pub const N: usize = 12;

/// Column of each event.
pub(super) const IR: usize = 0;
pub(super) const DR: usize = 1;
pub(super) const DW: usize = 2;
pub(super) const I1MR: usize = 3;
pub(super) const D1MR: usize = 4;
pub(super) const D1MW: usize = 5;
pub(super) const ILMR: usize = 6;
pub(super) const DLMR: usize = 7;
pub(super) const DLMW: usize = 8;
pub(super) const D1EV: usize = 9;
pub(super) const D1WB: usize = 10;
pub(super) const D1MC: usize = 11;

/// A count per event ([`EVENTS`]); serialised as an object keyed by the event names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs(pub [u64; N]);

impl Costs {
    /// Adds `other`.
    #[inline]
    pub fn add(&mut self, other: &Costs) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// `self - before`, per event (both cumulative counts, `before` taken earlier).
    #[inline]
    pub fn since(&self, before: &Costs) -> Costs {
        Costs(std::array::from_fn(|i| self.0[i] - before.0[i]))
    }

    /// The count of event `name`, if it is one.
    pub fn get(&self, name: &str) -> Option<u64> {
        EVENTS.iter().position(|e| *e == name).map(|i| self.0[i])
    }

    /// D1 misses, read and write.
    pub fn d1_misses(&self) -> u64 {
        self.0[D1MR] + self.0[D1MW]
    }

    /// LL misses of data references, read and write.
    pub fn ll_data_misses(&self) -> u64 {
        self.0[DLMR] + self.0[DLMW]
    }

    /// True when every count is 0.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&c| c == 0)
    }
}

impl Serialize for Costs {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(N))?;
        for (name, v) in EVENTS.iter().zip(self.0) {
            m.serialize_entry(name, &v)?;
        }
        m.end()
    }
}

/// The cache model every reference runs through, in trace order.
#[derive(Debug)]
pub(super) struct CostModel {
    sim: CachegrindSim,
    d1_shift: u32,
    /// Dirty D1 lines.
    dirty: hashbrown::HashSet<u64, foldhash::fast::FixedState>,
    /// Private D1s, from the second thread on.
    coherence: Option<Coherence>,
    /// The first thread seen: until another appears, the only one.
    first: Option<ThreadId>,
}

impl CostModel {
    /// Cachegrind's I1, D1 and LL (an LL of another set count reshaped as Cachegrind does).
    pub(super) fn new(i1: Geometry, d1: Geometry, ll: Geometry) -> Result<CostModel> {
        Ok(CostModel {
            sim: CachegrindSim::new(i1, d1, ll)?,
            d1_shift: d1.line_size().shift(),
            dirty: Default::default(),
            coherence: None,
            first: None,
        })
    }

    /// The I1, D1 and LL simulated.
    pub(super) fn geometries(&self) -> [Geometry; 3] {
        self.sim.geometries()
    }

    /// True once a second thread made a reference (the coherence event counts).
    pub(super) fn threaded(&self) -> bool {
        self.coherence.is_some()
    }

    /// Runs one reference of `thread` and adds what it cost to `c`.
    #[inline]
    pub(super) fn access(
        &mut self,
        thread: ThreadId,
        kind: AccessKind,
        addr: u64,
        size: u32,
        c: &mut Costs,
    ) {
        if kind == AccessKind::Instr {
            let o = self.sim.instr_outcome(addr, size);
            c.0[IR] += 1;
            c.0[I1MR] += u64::from(o.l1_miss);
            c.0[ILMR] += u64::from(o.ll_miss);
            return;
        }
        let first = addr >> self.d1_shift;
        let last = addr.saturating_add(u64::from(size.max(1)) - 1) >> self.d1_shift;
        match (&mut self.coherence, self.first) {
            (Some(coh), _) => c.0[D1MC] += coh.access(thread, first, last, kind),
            (None, Some(t)) if t != thread => {
                // The first thread's private D1 is the shared one so far.
                let mut coh = Coherence::new(self.sim.d1_cache().clone(), t);
                c.0[D1MC] += coh.access(thread, first, last, kind);
                self.coherence = Some(coh);
            }
            (None, Some(_)) => {}
            (None, None) => self.first = Some(thread),
        }
        let write = kind == AccessKind::Store;
        let o = self.sim.data_outcome(addr, size, write);
        let (refs, l1, ll) = if write {
            (DW, D1MW, DLMW)
        } else {
            (DR, D1MR, DLMR)
        };
        c.0[refs] += 1;
        c.0[l1] += u64::from(o.l1_miss);
        c.0[ll] += u64::from(o.ll_miss);
        for v in o.evicted.into_iter().flatten() {
            c.0[D1EV] += 1;
            c.0[D1WB] += u64::from(self.dirty.remove(&v));
        }
        if kind != AccessKind::Load {
            // A store or a modify dirties what it touched (at most two lines).
            self.dirty.insert(first);
            self.dirty.insert(last);
        }
    }
}
