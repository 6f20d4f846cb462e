//! Call events in the tool's spatially sampled stream (header bit 19, `--cs-calls=yes`): every
//! call word comes, as in a full stream, where it happened, after a position record (when the
//! counts changed) and followed by one word, the thread's last instruction fetch (its site,
//! 0 before the thread's first). Each goes into the batch with its
//! [`CallPlace`](crate::batch::CallPlace): its thread's counts before it and that site,
//! exactly as sampling the full trace places it (docs/callgraph.md, `--sampled` call graphs).

use std::io::Read;

use super::SpatialReader;
use crate::batch::{Batch, ThreadSpan};
use crate::error::Result;
use crate::record::tool_decode::call_op;
use crate::trace::CallPlaces;

pub(super) const TAG_ENTER: u64 = 0x9;
pub(super) const TAG_LEAVE: u64 = 0xA;
/// The header's flag of call events.
const CALLS: u64 = 1 << 19;

/// After the header word `w`: the places, kept from the stream's start (an exec followed does
/// not restart them), when its call events come.
pub(super) fn header(w: u64, places: &mut Option<CallPlaces>) {
    if w & CALLS != 0 && places.is_none() {
        *places = Some(CallPlaces::default());
    }
}

/// A run of the running thread's references, with call events.
pub(super) fn count(places: &mut Option<CallPlaces>, span: &ThreadSpan) {
    if let Some(places) = places {
        places.count(span, None);
    }
}

impl<R: Read + Send> SpatialReader<R> {
    /// The call word `w` (its site follows) into `out`, with its place.
    pub(super) fn call(&mut self, w: u64, out: &mut Batch) -> Result<()> {
        let [pc] = self.words.array("a call event's site")?;
        let op = call_op(w).ok_or_else(|| {
            self.words
                .corrupt(format!("a call event holding {w:#018x}"))
        })?;
        let here = ThreadSpan {
            thread: self.thread,
            ..ThreadSpan::default()
        };
        let places = self.calls.as_mut().expect("a stream with call events");
        places.count(&here, Some(pc));
        out.push_sampled_call(self.thread, op, places.place(self.thread));
        Ok(())
    }
}
