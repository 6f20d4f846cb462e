//! The calls and returns between a [`Batch`]'s accesses: each thread's call stack, as one more
//! field of the access (docs/callgraph.md).
//!
//! A recording with call events (cachescope's Valgrind tool keeps a shadow stack per thread,
//! as Callgrind does) says where each thread enters and leaves functions. Like the thread of
//! an access, the stack is not a column: it changes every few hundred instructions, so a batch
//! keeps the changes ([`CallEvent`]s) at their positions, and an analysis that ignores calls
//! pays nothing for them. Replaying them ([`crate::calls::Stacks`]) gives the stack of every
//! access.
//!
//! An event at `at` happens before access `at` (an event at the batch's length, after its last
//! access), to `thread`'s stack: usually the thread of access `at`, but not always (a thread
//! that returns and then stops running before its next access).

use super::Batch;
use crate::access::ThreadId;

/// How a thread entered a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EnterKind {
    /// A call instruction.
    Call,
    /// A jump into another function's first instruction (a tail call, a PLT stub's jump into
    /// the library): Callgrind's call emulation, left with the frame below it.
    Jump,
    /// A signal handler is about to run: a boundary, not a function (its key is the signal
    /// number). The handler's costs are not its interrupted callers'.
    Signal,
    /// The bottom frame of a thread: the code it first ran, or returned into past its last
    /// frame.
    Root,
    /// A call into a PLT stub: not a function. Its costs are its caller's, and its jump into
    /// the library is its caller's call (Callgrind's `--skip-plt=yes`).
    Plt,
}

impl EnterKind {
    /// All kinds, in code order (the tool's `CS_ENTER_*` and the native format's codes).
    pub const ALL: [EnterKind; 5] = [Self::Call, Self::Jump, Self::Signal, Self::Root, Self::Plt];
}

/// What happened to a thread's call stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallOp {
    /// A frame was pushed: `key` is the address control arrived at (a function's entry, for
    /// calls), or the signal number of a [`EnterKind::Signal`] boundary.
    Enter {
        /// The frame's function, by the address entered.
        key: u64,
        /// How it was entered.
        kind: EnterKind,
    },
    /// The top `frames` frames were left (a return, or a longjmp past several).
    Leave {
        /// How many, at least 1.
        frames: u32,
    },
    /// Every thread's frames are gone (recording restarted after a stop); each thread's
    /// next frames start from an [`EnterKind::Root`].
    Reset,
}

/// One change to a call stack, before access `at` of its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallEvent {
    /// The index of the access it precedes (the batch's length: after its last access).
    pub at: u32,
    /// The thread whose stack changes (every thread's, for [`CallOp::Reset`]).
    pub thread: ThreadId,
    /// What changed.
    pub op: CallOp,
}

impl Batch {
    /// The call events, in stream order (their `at` never decreases).
    pub fn calls(&self) -> &[CallEvent] {
        &self.calls
    }

    /// Appends a call event after the accesses so far, to `thread`'s stack.
    pub fn push_call(&mut self, thread: ThreadId, op: CallOp) {
        let at = self.len() as u32;
        self.calls.push(CallEvent { at, thread, op });
    }

    /// Replaces the call events (a decoder's path, after filling the columns). An error says
    /// how `events` is out of order or past the accesses.
    pub fn set_calls(&mut self, events: &[CallEvent]) -> Result<(), String> {
        let len = self.len() as u32;
        let mut last = 0;
        for e in events {
            if e.at < last || e.at > len {
                return Err(format!(
                    "call event at access {} is out of order or past the {len} accesses",
                    e.at
                ));
            }
            if matches!(e.op, CallOp::Leave { frames: 0 }) {
                return Err(format!("call event at access {} leaves no frame", e.at));
            }
            last = e.at;
        }
        self.calls.clear();
        self.calls.extend_from_slice(events);
        Ok(())
    }

    /// Appends `other`'s call events at `range` (those before its accesses `range`, and those
    /// after its last access when `range` reaches its end), moved to follow this batch's
    /// accesses, which must already hold `range`'s accesses at their end.
    pub(super) fn extend_calls_from(&mut self, other: &Batch, range: std::ops::Range<usize>) {
        let reaches_end = range.end == other.len();
        let base = self.len() - range.len();
        // Sampled batches carry each event's place in the full stream beside it.
        let places = other
            .sampling()
            .map(|s| s.calls.as_slice())
            .filter(|p| p.len() == other.calls.len() && self.sampled);
        for (n, e) in other.calls.iter().enumerate() {
            let at = e.at as usize;
            if at >= range.start && (at < range.end || (reaches_end && at == range.end)) {
                self.calls.push(CallEvent {
                    at: (base + at - range.start) as u32,
                    ..*e
                });
                if let (Some(p), Some(to)) = (places, self.sampling.as_deref_mut()) {
                    to.calls.push(p[n]);
                }
            }
        }
    }

    /// Drops the call events after the first `len` accesses (after a truncation).
    pub(super) fn truncate_calls(&mut self, len: usize) {
        let keep = self.calls.partition_point(|e| (e.at as usize) <= len);
        self.calls.truncate(keep);
    }
}

/// One step of [`Batch::steps`]: a run of accesses by one thread, or a call event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// Accesses `range` of the batch, all `thread`'s, with no call event among them.
    Accesses(std::ops::Range<usize>, ThreadId),
    /// A call event.
    Call(&'a CallEvent),
}

/// The iterator of [`Batch::steps`].
#[derive(Clone, Debug)]
pub struct Steps<'a> {
    runs: super::ThreadRuns<'a>,
    run: Option<(std::ops::Range<usize>, ThreadId)>,
    calls: &'a [CallEvent],
}

impl<'a> Iterator for Steps<'a> {
    type Item = Step<'a>;

    fn next(&mut self) -> Option<Step<'a>> {
        if self.run.as_ref().is_none_or(|(r, _)| r.is_empty()) {
            self.run = self.runs.next();
        }
        match (&mut self.run, self.calls.first()) {
            (Some((r, t)), Some(e)) if (e.at as usize) > r.start => {
                let end = r.end.min(e.at as usize);
                let step = Step::Accesses(r.start..end, *t);
                r.start = end;
                Some(step)
            }
            (_, Some(e)) => {
                self.calls = &self.calls[1..];
                Some(Step::Call(e))
            }
            (Some((r, t)), None) => {
                let step = Step::Accesses(r.clone(), *t);
                r.start = r.end;
                Some(step)
            }
            (None, None) => None,
        }
    }
}

impl Batch {
    /// The batch in stream order: runs of accesses by one thread, split where a call event
    /// falls, and the call events between them. An analysis that keeps call stacks walks
    /// this.
    pub fn steps(&self) -> Steps<'_> {
        Steps {
            runs: self.thread_runs(),
            run: None,
            calls: &self.calls,
        }
    }
}

impl Batch {
    /// Replaces the call events from the `kept`-th on with `other`'s events of `thread`,
    /// placed among that thread's accesses of `other`, which were appended to this batch from
    /// access `base` on (one thread's references filtered out of a batch: `--thread ID`).
    pub(crate) fn take_thread_calls(
        &mut self,
        other: &Batch,
        thread: ThreadId,
        base: usize,
        kept: usize,
    ) {
        self.calls.truncate(kept);
        let mut seen = 0;
        for step in other.steps() {
            match step {
                Step::Accesses(range, t) if t == thread => seen += range.len(),
                Step::Call(e) if e.thread == thread || e.op == CallOp::Reset => {
                    self.calls.push(CallEvent {
                        at: (base + seen) as u32,
                        ..*e
                    });
                }
                _ => {}
            }
        }
    }
}
