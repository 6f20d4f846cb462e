//! [`OnlyThread`]: a reader of one thread's references, for `--thread ID` on every command.
//!
//! The filter sits where data enters, so every analysis, plan and model downstream sees one
//! thread's stream without knowing threads exist. A thread that never appears is an error at
//! the end of the trace (naming the threads that do), not an empty result.

use std::collections::BTreeSet;

use super::{AccessReader, Diagnostics};
use crate::access::ThreadId;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

/// Reads `inner` and keeps the references of `thread` alone.
pub(crate) struct OnlyThread {
    inner: Box<dyn AccessReader>,
    thread: ThreadId,
    source: Source,
    read: Batch,
    seen: BTreeSet<ThreadId>,
}

impl OnlyThread {
    /// `inner`'s references made by `thread`; `source` names the trace in the error for a
    /// thread that never appears.
    pub(crate) fn new(inner: Box<dyn AccessReader>, thread: ThreadId, source: Source) -> Self {
        OnlyThread {
            inner,
            thread,
            source,
            read: Batch::new(),
            seen: BTreeSet::new(),
        }
    }
}

impl AccessReader for OnlyThread {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        batch.set_thread(self.thread);
        while batch.is_empty() {
            if self.inner.read_batch(&mut self.read)? == 0 {
                if !self.seen.contains(&self.thread) {
                    return Err(unknown_thread(self.thread, &self.seen, &self.source));
                }
                return Ok(0);
            }
            let (base, kept) = (batch.len(), batch.calls().len());
            for (run, t) in self.read.thread_runs() {
                self.seen.insert(t);
                if t == self.thread {
                    batch.extend_from_range(&self.read, run);
                }
            }
            if !self.read.calls().is_empty() {
                // The thread's own call events, wherever they fell among the others' runs.
                batch.take_thread_calls(&self.read, self.thread, base, kept);
            }
        }
        Ok(batch.len())
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.diagnostics()
    }
}

/// The error for `--thread ID` naming a thread the trace (`source`) does not have.
pub(crate) fn unknown_thread(
    thread: ThreadId,
    seen: &BTreeSet<ThreadId>,
    source: &dyn std::fmt::Display,
) -> Error {
    let have: Vec<String> = seen.iter().map(ToString::to_string).collect();
    Error::InvalidParameter {
        name: "thread",
        message: format!(
            "thread {thread} does not appear in {source}, whose references are by thread{} {}",
            if have.len() == 1 { "" } else { "s" },
            if have.is_empty() {
                "none (it is empty)".to_string()
            } else {
                have.join(", ")
            }
        ),
    }
}
