//! The helpers' side of [`super::SharedReader`]: their loop, and the pc a segment's first
//! data records inherit from the segment before.

use std::sync::atomic::Ordering;

use crossbeam_channel::{Receiver, Sender};

use super::{Decoded, Shared};
use crate::access::AccessKind;
use crate::batch::{Batch, NO_PC};
use crate::parallel::segments::{SegmentBuf, Segments};

/// A helper's loop: with a ticket, claim the next segment and decode it, until none is left
/// or the reader is gone.
pub(super) fn help<S: Segments>(
    shared: &Shared<S>,
    tickets: &Receiver<()>,
    out: &Sender<(usize, Decoded)>,
    recycled: &Receiver<SegmentBuf>,
) {
    let mut reader = None;
    while tickets.recv().is_ok() {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let Some(i) = shared.claim_next() else {
            return;
        };
        let mut buf = recycled.try_recv().unwrap_or_default();
        buf.clear();
        let err = match reader.as_mut() {
            Some(r) => shared.segments.read(r, i, &mut buf).err(),
            None => match shared.segments.open() {
                Ok(r) => shared.segments.read(reader.insert(r), i, &mut buf).err(),
                Err(e) => Some(e),
            },
        };
        let failed = err.is_some();
        if out.send((i, (buf, err))).is_err() || failed {
            return;
        }
    }
}

/// Gives the data records at the start of `batch`, up to its first instruction fetch, the pc
/// `pc` where they have none: the pc a sequential reader carries into a segment, which the
/// segment's own reader did not find (a lackey trace whose `I` records lie further apart than
/// `lackey::pc_before` looks). Returns whether the batch had no instruction fetch, so that
/// the next batch continues.
pub(super) fn carry_pc(batch: &mut Batch, pc: u64) -> bool {
    for (k, p) in batch.kinds.iter().zip(batch.pcs.iter_mut()) {
        if *k == AccessKind::Instr {
            return false;
        }
        if *p == NO_PC {
            *p = pc;
        }
    }
    true
}
