//! [`Sampling`]: what a batch of a sampled stream carries besides its accesses.
//!
//! A sampled stream (`--sampled`: [`crate::spatial`]) holds the data references of
//! the sampled lines only, in the order of the full stream they were taken from. Each batch of
//! it says how it was sampled (the hash's key and the limit, which may fall inside the batch)
//! and where each of its accesses stood in the full stream, and counts the references of the
//! full stream it covers, sampled or not, so analyses place references in full-stream units
//! and scale their counts by the rate. A batch of a full stream carries none of it and pays
//! for none of it (empty vectors). docs/sampled.md is the contract.

use super::Batch;
use crate::access::{AccessKind, ThreadId};
use crate::spatial::{Limit, LineHash};

/// The sampling of one batch of a sampled stream; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sampling {
    /// The key of the line hash ([`LineHash::key`]).
    pub key: u64,
    /// The limit from each access on: `(index, limit)` with strictly increasing indexes, the
    /// first at 0 and the last at most the batch's length, limits falling. Access `i` was kept
    /// under the limit of the last entry at or before `i` (the limit after it, which its own
    /// line may have lowered); an entry at the length is the limit the next batch starts with.
    pub limits: Vec<(u32, Limit)>,
    /// For each access, the data references (loads, stores, modifies; every thread) of the
    /// full stream before it.
    pub data_before: Vec<u64>,
    /// For each access, the instruction fetches of the full stream before it.
    pub instrs_before: Vec<u64>,
    /// The references of the full stream this batch covers, sampled or not, per thread: from
    /// the end of the batch before (the stream's start for the first) to this batch's end, which
    /// may lie past its last access. At most one entry per thread.
    pub span: Vec<ThreadSpan>,
    /// Where each of the batch's call events ([`Batch::calls`], same order) stood in its
    /// thread's full stream: empty for a stream without call events (docs/callgraph.md).
    pub calls: Vec<CallPlace>,
}

/// Where a call event of a sampled stream stood in its thread's full stream, so that counts
/// between two events of a thread stay exact though its references were sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallPlace {
    /// The references of the event's thread before it, from the stream's start (its
    /// `thread` is the event's).
    pub before: ThreadSpan,
    /// The address of the thread's last instruction fetch before it (the call's site), or
    /// [`crate::batch::NO_PC`].
    pub pc: u64,
}

/// One thread's references of the full stream in a batch's span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ThreadSpan {
    /// The thread.
    pub thread: ThreadId,
    /// Its loads.
    pub loads: u64,
    /// Its stores.
    pub stores: u64,
    /// Its modifies.
    pub modifies: u64,
    /// Its instruction fetches.
    pub instrs: u64,
}

impl ThreadSpan {
    /// Its data references.
    pub fn data(&self) -> u64 {
        self.loads + self.stores + self.modifies
    }

    /// Counts one reference of kind `kind`.
    #[inline]
    pub fn count(&mut self, kind: AccessKind) {
        match kind {
            AccessKind::Load => self.loads += 1,
            AccessKind::Store => self.stores += 1,
            AccessKind::Modify => self.modifies += 1,
            AccessKind::Instr => self.instrs += 1,
        }
    }

    /// Adds `other`'s counts (of any thread) to these.
    pub fn add(&mut self, other: &ThreadSpan) {
        self.loads += other.loads;
        self.stores += other.stores;
        self.modifies += other.modifies;
        self.instrs += other.instrs;
    }
}

impl Sampling {
    fn clear(&mut self) {
        self.limits.clear();
        self.data_before.clear();
        self.instrs_before.clear();
        self.span.clear();
        self.calls.clear();
    }

    /// The line hash the stream was sampled with.
    pub fn hash(&self) -> LineHash {
        LineHash::with_key(self.key)
    }

    /// The limit at the batch's end (what the next batch starts with).
    pub fn limit(&self) -> Limit {
        self.limits.last().map_or(Limit::ALL, |&(_, l)| l)
    }

    /// The limit access `i` was kept under.
    pub fn limit_at(&self, i: usize) -> Limit {
        let at = self.limits.partition_point(|&(s, _)| s as usize <= i);
        self.limits[at.saturating_sub(1)].1
    }

    /// The share of lines sampled at the batch's end.
    pub fn rate(&self) -> f64 {
        self.limit().rate()
    }

    /// True when the limit falls inside the batch (or at its end).
    pub fn limit_falls(&self) -> bool {
        self.limits.len() > 1
    }

    /// The span's counts of `thread` (zeros when the batch covers none of its references).
    pub fn thread_span(&self, thread: ThreadId) -> ThreadSpan {
        self.span
            .iter()
            .find(|s| s.thread == thread)
            .copied()
            .unwrap_or(ThreadSpan {
                thread,
                ..ThreadSpan::default()
            })
    }

    /// The span's counts over every thread (its `thread` field is 0).
    pub fn total_span(&self) -> ThreadSpan {
        let mut all = ThreadSpan::default();
        for s in &self.span {
            all.add(s);
        }
        all
    }

    /// The span's counts of `thread`, to add to.
    pub fn span_mut(&mut self, thread: ThreadId) -> &mut ThreadSpan {
        let at = match self.span.iter().position(|s| s.thread == thread) {
            Some(at) => at,
            None => {
                self.span.push(ThreadSpan {
                    thread,
                    ..ThreadSpan::default()
                });
                self.span.len() - 1
            }
        };
        &mut self.span[at]
    }
}

impl Batch {
    /// The batch's sampling when it belongs to a sampled stream.
    #[inline]
    pub fn sampling(&self) -> Option<&Sampling> {
        self.sampling.as_deref().filter(|_| self.sampled)
    }

    /// Empties the batch and makes it a sampled stream's, sampled with `hash` under `limit`
    /// from its start.
    pub fn start_sampled(&mut self, hash: LineHash, limit: Limit) -> &mut Sampling {
        self.clear();
        self.sampled = true;
        let s = self.sampling.get_or_insert_default();
        s.key = hash.key();
        s.limits.push((0, limit));
        s
    }

    /// The sampling of a batch made a sampled stream's by [`Batch::start_sampled`], to fill in.
    pub fn sampling_mut(&mut self) -> Option<&mut Sampling> {
        self.sampling.as_deref_mut().filter(|_| self.sampled)
    }

    /// Appends one sampled access, `data_before` data references and `instrs_before`
    /// instruction fetches of the full stream before it. Panics on a batch that is not a
    /// sampled stream's.
    #[inline]
    pub fn push_sampled(
        &mut self,
        addr: u64,
        size: u32,
        kind: AccessKind,
        pc: u64,
        data_before: u64,
        instrs_before: u64,
    ) {
        self.push_raw(addr, size, kind, pc);
        let s = self
            .sampling_mut()
            .expect("push_sampled on a batch of a full stream");
        s.data_before.push(data_before);
        s.instrs_before.push(instrs_before);
    }

    /// Appends a call event after the accesses so far ([`Batch::push_call`]) with its place
    /// in the full stream. Panics on a batch that is not a sampled stream's.
    pub fn push_sampled_call(&mut self, thread: ThreadId, op: super::CallOp, place: CallPlace) {
        self.push_call(thread, op);
        self.sampling_mut()
            .expect("push_sampled_call on a batch of a full stream")
            .calls
            .push(place);
    }

    /// Lowers the limit from the next access pushed on (the access that lowered it, if kept).
    pub fn lower_limit(&mut self, limit: Limit) {
        let at = self.len() as u32;
        let limits = &mut self
            .sampling_mut()
            .expect("lower_limit on a batch of a full stream")
            .limits;
        match limits.last_mut() {
            Some((s, l)) if *s == at => *l = limit,
            _ => limits.push((at, limit)),
        }
    }

    /// Forgets the sampling (with the accesses: [`Batch::clear`]).
    pub(super) fn clear_sampling(&mut self) {
        self.sampled = false;
        if let Some(s) = &mut self.sampling {
            s.clear();
        }
    }

    /// Keeps the sampling of the first `len` accesses (the span is kept whole).
    pub(super) fn truncate_sampling(&mut self, len: usize) {
        if let Some(s) = self.sampling_mut() {
            s.data_before.truncate(len);
            s.instrs_before.truncate(len);
            let keep = s.limits.partition_point(|&(i, _)| i as usize <= len);
            s.limits.truncate(keep.max(1));
        }
        let calls = self.calls.len();
        if let Some(s) = self.sampling_mut() {
            s.calls.truncate(calls);
        }
    }

    /// Checks a sampled batch's invariants (columns as long as the batch, positions not
    /// decreasing, limits as [`Sampling::limits`] says), for readers of sampled streams made
    /// elsewhere (the Valgrind tool's); `Ok` for a batch of a full stream.
    pub fn check_sampling(&self) -> Result<(), String> {
        let Some(s) = self.sampling() else {
            return Ok(());
        };
        let n = self.len();
        if s.data_before.len() != n || s.instrs_before.len() != n {
            return Err(format!(
                "{} data positions and {} instruction positions for {n} sampled accesses",
                s.data_before.len(),
                s.instrs_before.len()
            ));
        }
        if !s.calls.is_empty() && s.calls.len() != self.calls().len() {
            return Err(format!(
                "{} call places for {} call events",
                s.calls.len(),
                self.calls().len()
            ));
        }
        if self.kinds.contains(&AccessKind::Instr) {
            return Err(
                "an instruction fetch in a sampled stream, which holds data references only".into(),
            );
        }
        let rising = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
        if !rising(&s.data_before) {
            return Err("sampled data positions that do not increase".into());
        }
        if !s.instrs_before.windows(2).all(|w| w[0] <= w[1]) {
            return Err("sampled instruction positions that decrease".into());
        }
        let starts_ok = s.limits.first().is_some_and(|&(i, _)| i == 0)
            && s.limits
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1)
            && s.limits.last().is_some_and(|&(i, _)| i as usize <= n);
        if !starts_ok {
            return Err(format!("sampling limits out of order: {:?}", s.limits));
        }
        Ok(())
    }
}
