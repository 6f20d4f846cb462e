//! Call stacks replayed from a trace's call events ([`crate::batch::CallEvent`]): the stack of
//! every access, per thread, for any analysis that wants it (docs/callgraph.md).
//!
//! [`Stacks`] keeps each thread's frames and applies events in stream order; what a frame
//! holds is the analysis's ([`Frames`]: it makes each frame when entered and is handed it back
//! when left). [`Stacks::walk`] runs a batch through it: the analysis sees every run of
//! accesses with its thread, its stack as it is then. So the call graph
//! ([`crate::attribution::callgraph`]) and any later analysis of calling contexts get the
//! stack by composition, as they get the thread.
//!
//! ```
//! use cachescope::batch::{Batch, CallOp, EnterKind};
//! use cachescope::calls::{Frames, Stacks};
//! use cachescope::{Access, ThreadId};
//!
//! /// Counts each access under the function on top of its thread's stack.
//! #[derive(Default)]
//! struct Tops(Vec<(u64, usize)>);
//! impl Frames for Tops {
//!     type Frame = u64;
//!     fn enter(&mut self, _: ThreadId, key: u64, _: EnterKind, _: Option<&u64>) -> u64 { key }
//!     fn leave(&mut self, _: ThreadId, _: u64, _: Option<&u64>) {}
//! }
//!
//! let mut b = Batch::new();
//! b.push_call(1, CallOp::Enter { key: 0x100, kind: EnterKind::Root });
//! b.push(Access::load(0x10, 8));
//! b.push_call(1, CallOp::Enter { key: 0x200, kind: EnterKind::Call });
//! b.push(Access::load(0x20, 8));
//! b.push(Access::load(0x28, 8));
//! b.push_call(1, CallOp::Leave { frames: 1 });
//! let (mut stacks, mut tops) = (Stacks::default(), Tops::default());
//! stacks.walk(&b, &mut tops, |tops, range, _thread, stack| {
//!     tops.0.push((*stack.last().unwrap(), range.len()))
//! });
//! assert_eq!(tops.0, [(0x100, 1), (0x200, 2)]);
//! ```

use crate::access::ThreadId;
use crate::batch::{Batch, CallEvent, CallOp, EnterKind, Step};

/// What an analysis keeps per frame, and what it does when frames come and go.
pub trait Frames {
    /// The analysis's frame.
    type Frame;
    /// `thread` enters `key` (a function's address, or a signal's number) by `kind`, over
    /// `below` (its top frame, if any); returns the new frame.
    fn enter(
        &mut self,
        thread: ThreadId,
        key: u64,
        kind: EnterKind,
        below: Option<&Self::Frame>,
    ) -> Self::Frame;
    /// `thread` leaves `frame`; `below` is the frame now on top, if any.
    fn leave(&mut self, thread: ThreadId, frame: Self::Frame, below: Option<&Self::Frame>);
}

/// Every thread's stack of frames. Threads are few, so they are found by a short scan.
#[derive(Debug)]
pub struct Stacks<F> {
    threads: Vec<(ThreadId, Vec<F>)>,
    /// Events seen: zero means the trace had none (a format or recording without them).
    events: u64,
}

impl<F> Default for Stacks<F> {
    fn default() -> Self {
        Stacks {
            threads: Vec::new(),
            events: 0,
        }
    }
}

impl<F> Stacks<F> {
    /// `thread`'s frames, bottom first (empty for a thread with none).
    pub fn stack(&self, thread: ThreadId) -> &[F] {
        self.threads
            .iter()
            .find(|(t, _)| *t == thread)
            .map_or(&[], |(_, s)| s.as_slice())
    }

    fn stack_mut(&mut self, thread: ThreadId) -> &mut Vec<F> {
        let i = match self.threads.iter().position(|(t, _)| *t == thread) {
            Some(i) => i,
            None => {
                self.threads.push((thread, Vec::new()));
                self.threads.len() - 1
            }
        };
        &mut self.threads[i].1
    }

    /// Call events applied so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Applies one event. Leaving more frames than a thread has leaves them all (a damaged or
    /// cut trace must not stop an analysis; the tool never does it).
    pub fn apply<O: Frames<Frame = F>>(&mut self, e: &CallEvent, frames: &mut O) {
        self.events += 1;
        match e.op {
            CallOp::Enter { key, kind } => {
                let stack = self.stack_mut(e.thread);
                let frame = frames.enter(e.thread, key, kind, stack.last());
                stack.push(frame);
            }
            CallOp::Leave { frames: n } => {
                let stack = self.stack_mut(e.thread);
                for _ in 0..n {
                    let Some(f) = stack.pop() else { break };
                    frames.leave(e.thread, f, stack.last());
                }
            }
            CallOp::Reset => self.leave_all(frames),
        }
    }

    /// Leaves every frame of every thread, innermost first (at the end of a trace, or a
    /// reset).
    pub fn leave_all<O: Frames<Frame = F>>(&mut self, frames: &mut O) {
        for (thread, stack) in &mut self.threads {
            while let Some(f) = stack.pop() {
                frames.leave(*thread, f, stack.last());
            }
        }
    }

    /// Runs `batch` through the stacks: its call events are applied in order, and `accesses`
    /// sees each run of accesses with its thread and that thread's frames (bottom first).
    pub fn walk<O: Frames<Frame = F>>(
        &mut self,
        batch: &Batch,
        frames: &mut O,
        mut accesses: impl FnMut(&mut O, std::ops::Range<usize>, ThreadId, &[F]),
    ) {
        for step in batch.steps() {
            match step {
                Step::Accesses(range, thread) => {
                    accesses(frames, range, thread, self.stack(thread));
                }
                Step::Call(e) => self.apply(e, frames),
            }
        }
    }
}

#[cfg(test)]
mod tests;
