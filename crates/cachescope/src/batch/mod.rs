//! [`Batch`]: a run of accesses stored column by column.
//!
//! Readers fill batches and analyses consume them. Columns (structure of arrays) let an analysis
//! that needs only addresses scan one dense slice, and let the native format decode each column
//! with a tight loop.
//!
//! The thread of each access is not a column: threads switch rarely (Valgrind runs one thread
//! for long slices), so a batch keeps the switches ([`ThreadRun`], `threads.rs`) and an
//! analysis that ignores threads pays nothing for them. Calls and returns are kept the same
//! way ([`CallEvent`], `calls.rs`).

mod calls;
mod data;
mod sampled;
mod threads;

pub use calls::{CallEvent, CallOp, EnterKind, Step, Steps};
pub use sampled::{CallPlace, Sampling, ThreadSpan};

pub(crate) use threads::switch_to;
pub use threads::{ThreadRun, ThreadRuns};

use crate::access::{Access, AccessKind, ThreadId};

/// The number of accesses readers aim to put in one batch: large enough that per-batch costs
/// vanish, small enough (1.5 MiB of columns) to stay in L2/L3 while every analysis reads it.
pub const BATCH_LEN: usize = 64 * 1024;

/// Sentinel in [`Batch::pcs`] for "instruction address unknown".
pub const NO_PC: u64 = 0;

/// Sentinel in [`Batch::pcs`] for a page walk's read of a page-table entry, inserted by
/// [`crate::tlb::Walked`]: no program has code at this address.
pub const WALK_PC: u64 = u64::MAX;

/// Accesses in trace order, one column per field. All four columns always have the same length.
/// Each access belongs to a thread: [`MAIN_THREAD`](crate::access::MAIN_THREAD) unless a
/// [`Batch::set_thread`] before it said otherwise ([`Batch::thread_runs`] lists them).
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Byte address of each access.
    pub addrs: Vec<u64>,
    /// Size in bytes of each access (at least 1).
    pub sizes: Vec<u32>,
    /// Kind of each access.
    pub kinds: Vec<AccessKind>,
    /// Instruction address of each access, or [`NO_PC`] when unknown.
    pub pcs: Vec<u64>,
    /// The thread switches, in canonical form (see `threads.rs`).
    switches: Vec<ThreadRun>,
    /// The call events, in order (see `calls.rs`).
    calls: Vec<CallEvent>,
    /// The data references' addresses, when indexed (`data.rs`).
    data: data::DataIndex,
    /// Whether the batch belongs to a sampled stream, and then its sampling (`sampled.rs`;
    /// allocated the first time, kept when cleared).
    sampled: bool,
    sampling: Option<Box<Sampling>>,
}

impl Batch {
    /// An empty batch with room for [`BATCH_LEN`] accesses.
    pub fn new() -> Batch {
        Batch::with_capacity(BATCH_LEN)
    }

    /// An empty batch with room for `n` accesses.
    pub fn with_capacity(n: usize) -> Batch {
        Batch {
            addrs: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            pcs: Vec::with_capacity(n),
            switches: Vec::new(),
            calls: Vec::new(),
            data: data::DataIndex::default(),
            sampled: false,
            sampling: None,
        }
    }

    /// Number of accesses.
    #[inline]
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// True when the batch holds no access.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// True once the batch holds [`BATCH_LEN`] accesses or more.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.addrs.len() >= BATCH_LEN
    }

    /// Removes every access, keeping the allocations; the next access is the main thread's
    /// unless [`Batch::set_thread`] says otherwise, and the batch is a full stream's again.
    pub fn clear(&mut self) {
        self.addrs.clear();
        self.sizes.clear();
        self.kinds.clear();
        self.pcs.clear();
        self.switches.clear();
        self.calls.clear();
        self.data.forget();
        self.clear_sampling();
    }

    /// Keeps the accesses before the `n + 1`-th one that `counted` accepts (all of them if
    /// there are no more than `n`), and returns how many accepted ones were kept. For prefixes of a trace
    /// measured in counted references (data references, say).
    pub fn keep_counted(&mut self, n: u64, counted: impl Fn(AccessKind) -> bool) -> u64 {
        let mut seen = 0;
        for (i, &k) in self.kinds.iter().enumerate() {
            if seen == n {
                self.truncate(i);
                return seen;
            }
            seen += u64::from(counted(k));
        }
        seen
    }

    /// Keeps the first `len` accesses.
    pub fn truncate(&mut self, len: usize) {
        self.addrs.truncate(len);
        self.sizes.truncate(len);
        self.kinds.truncate(len);
        self.pcs.truncate(len);
        self.truncate_switches(len);
        self.truncate_calls(len);
        self.data.forget();
        self.truncate_sampling(len);
    }

    /// Appends one access.
    #[inline]
    pub fn push(&mut self, a: Access) {
        self.push_raw(a.addr, a.size, a.kind, a.pc.unwrap_or(NO_PC));
    }

    /// Appends one access given as columns (`pc` = [`NO_PC`] when unknown).
    #[inline]
    pub fn push_raw(&mut self, addr: u64, size: u32, kind: AccessKind, pc: u64) {
        self.addrs.push(addr);
        self.sizes.push(size);
        self.kinds.push(kind);
        self.pcs.push(pc);
    }

    /// The access at `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Access {
        let pc = self.pcs[i];
        Access {
            addr: self.addrs[i],
            size: self.sizes[i],
            kind: self.kinds[i],
            pc: (pc != NO_PC).then_some(pc),
        }
    }

    /// The accesses in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Access> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The accesses in order, each with its thread.
    pub fn iter_threaded(&self) -> impl Iterator<Item = (ThreadId, Access)> + '_ {
        self.thread_runs()
            .flat_map(move |(range, t)| range.map(move |i| (t, self.get(i))))
    }

    /// Appends the accesses `range` of `other`, with their threads and the call events before
    /// them (and after them, when `range` reaches `other`'s end); the thread of accesses
    /// pushed after them is the last one's. Both batches sampled: with their positions in the
    /// full stream (each access under the limit `self` has when it is pushed, so a caller
    /// moving sampled accesses carries the limits and spans).
    pub fn extend_from_range(&mut self, other: &Batch, range: std::ops::Range<usize>) {
        let positions = self.sampled && other.sampled;
        for (r, t) in other.thread_runs() {
            let (lo, hi) = (r.start.max(range.start), r.end.min(range.end));
            if lo < hi {
                self.set_thread(t);
                self.addrs.extend_from_slice(&other.addrs[lo..hi]);
                self.sizes.extend_from_slice(&other.sizes[lo..hi]);
                self.kinds.extend_from_slice(&other.kinds[lo..hi]);
                self.pcs.extend_from_slice(&other.pcs[lo..hi]);
                if let (true, Some(to), Some(from)) = (
                    positions,
                    self.sampling.as_deref_mut(),
                    other.sampling.as_deref(),
                ) {
                    to.data_before.extend_from_slice(&from.data_before[lo..hi]);
                    to.instrs_before
                        .extend_from_slice(&from.instrs_before[lo..hi]);
                }
            }
        }
        if !other.calls.is_empty() {
            self.extend_calls_from(other, range);
        }
    }
}

impl PartialEq for Batch {
    /// The same accesses by the same threads, with the same call events (a switch after the
    /// last access does not count).
    fn eq(&self, other: &Batch) -> bool {
        self.addrs == other.addrs
            && self.sizes == other.sizes
            && self.kinds == other.kinds
            && self.pcs == other.pcs
            && self.thread_switches() == other.thread_switches()
            && self.sampling() == other.sampling()
            && self.calls == other.calls
    }
}

impl Eq for Batch {}

impl Extend<Access> for Batch {
    fn extend<I: IntoIterator<Item = Access>>(&mut self, iter: I) {
        for a in iter {
            self.push(a);
        }
    }
}

impl FromIterator<Access> for Batch {
    fn from_iter<I: IntoIterator<Item = Access>>(iter: I) -> Batch {
        let mut b = Batch::with_capacity(0);
        b.extend(iter);
        b
    }
}

#[cfg(test)]
mod tests;
