//! Where call events stand in their threads' full streams: the stage passes every call event
//! through its line filter with the counts of its thread's references before it and its
//! thread's last instruction fetch ([`CallPlace`]), so a call graph of the sampled stream
//! keeps `Ir`, `Dr` and `Dw` exact per function (docs/callgraph.md). The tool's sampled
//! stream ([`crate::record::tool_spatial`]) places its call events with them too.

use crate::access::ThreadId;
use crate::batch::{CallPlace, NO_PC, ThreadSpan};

/// Each thread's running counts and last fetch. Threads are few: a short scan finds them.
#[derive(Debug, Default)]
pub(crate) struct CallPlaces {
    threads: Vec<CallPlace>,
}

impl CallPlaces {
    fn thread(&mut self, thread: ThreadId) -> &mut CallPlace {
        let i = match self.threads.iter().position(|p| p.before.thread == thread) {
            Some(i) => i,
            None => {
                self.threads.push(CallPlace {
                    before: ThreadSpan {
                        thread,
                        ..ThreadSpan::default()
                    },
                    pc: NO_PC,
                });
                self.threads.len() - 1
            }
        };
        &mut self.threads[i]
    }

    /// Counts a run of `span.thread`'s references, whose last fetch (if any) was at
    /// `last_fetch`.
    pub(crate) fn count(&mut self, span: &ThreadSpan, last_fetch: Option<u64>) {
        let p = self.thread(span.thread);
        p.before.add(span);
        if let Some(pc) = last_fetch {
            p.pc = pc;
        }
    }

    /// The place of a call event of `thread` now.
    pub(crate) fn place(&mut self, thread: ThreadId) -> CallPlace {
        *self.thread(thread)
    }
}
