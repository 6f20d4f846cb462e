//! Decoding on every core for analyses that must see the trace in order on one thread (cache
//! simulations, the StatCache sampler, phases, several analyses fed from one pass).
//!
//! The trace is cut into segments ([`super::segments`]). `threads − 1` helper threads claim
//! segments in order and decode them ahead, at most [`AHEAD`] per helper, while the reading
//! thread consumes them in order; when the segment the reader needs next is not ready, the
//! reader claims the next unclaimed one (a few ahead at most) and decodes it itself rather
//! than wait. So a cheap analysis (the sampler) shares the decoding, and an expensive one (a
//! simulation) leaves all of it to the helpers: the split balances itself.
//!
//! The reader gives the accesses of a sequential reader, in the same batches for a native trace
//! (one per block; a text trace's batches end at segment ends too), and an error in a segment
//! when it reaches it, after the batches before it, as a sequential reader does.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TryRecvError, bounded, unbounded};

use super::segments::{SegmentBuf, Segments, decoded_segments};
use crate::batch::{Batch, NO_PC};
use crate::error::{Error, Result};
use crate::trace::{AccessReader, Trace};

mod helper;
use helper::{carry_pc, help};

/// Accesses per segment of a native trace (about 21 bytes each decoded, so 1.3 MiB: a segment
/// the reader decodes itself stays in its L2 while it is analysed).
const SEGMENT: u64 = 1 << 16;

/// Bytes per segment of a text trace (about 250 K lines). Larger than a native segment's
/// share: a lackey segment looks back for the pc of the last `I` record before it, up to
/// 1 MiB in a trace without any (`lackey::pc_before`), which would double the reading of 1 MiB
/// segments.
const TEXT_SEGMENT: u64 = 4 << 20;

/// Segments each helper may have decoded and not yet consumed.
const AHEAD: usize = 3;

/// Makes `trace` decode on `threads` threads from now on (the reading thread and `threads − 1`
/// helpers), when it can be cut into segments (an uncompressed native trace in a regular
/// file, or an uncompressed text trace in a regular file read without `skip_bad_lines`),
/// `threads` is at least 2, and nothing has been read from it yet; returns whether it does.
/// Its accesses, errors and progress stay those of a sequential read.
pub fn decode_in_parallel(trace: &mut Trace, threads: usize) -> Result<bool> {
    if threads < 2 || trace.started() {
        return Ok(false);
    }
    let Some(segments) = decoded_segments(
        trace,
        |accesses| accesses.div_ceil(SEGMENT).max(1),
        |bytes| bytes.div_ceil(TEXT_SEGMENT).max(1),
    )?
    else {
        return Ok(false);
    };
    if segments.count() < 2 {
        return Ok(false);
    }
    let mut reader = SharedReader::spawn(segments, threads - 1, trace.bytes_counter());
    // The replaced reader's counts, before it is dropped: the same stream's.
    reader.counts_ahead = trace.reader_counts_ahead();
    trace.replace_reader(Box::new(reader));
    Ok(true)
}

/// Feeds every batch of `segments`, in order, to `sink`, decoded on `threads` threads (the
/// caller's and `threads − 1` helpers, as [`decode_in_parallel`] does); stops at the first
/// error, after the batches before it.
pub(crate) fn read_segments<S: Segments + Send + 'static>(
    segments: S,
    threads: usize,
    sink: &mut dyn FnMut(&Batch),
) -> Result<()>
where
    S::Reader: Send,
{
    let mut batch = Batch::new();
    if threads < 2 || segments.count() < 2 {
        let mut reader = segments.open()?;
        let mut buf = SegmentBuf::default();
        for i in 0..segments.count() {
            buf.clear();
            let err = segments.read(&mut reader, i, &mut buf).err();
            buf.batches().iter().for_each(&mut *sink);
            if let Some(e) = err {
                return Err(e);
            }
            crate::interrupt::check()?;
        }
        return Ok(());
    }
    let mut reader = SharedReader::spawn(segments, threads - 1, Arc::new(AtomicU64::new(0)));
    while reader.read_batch(&mut batch)? > 0 {
        crate::interrupt::check()?;
        sink(&batch);
    }
    Ok(())
}

/// A decoded segment; when it did not read to its end, the batches before the error and the
/// error.
type Decoded = (SegmentBuf, Option<Error>);

/// What the reader and its helpers share.
struct Shared<S> {
    segments: S,
    /// The next segment nobody has claimed.
    claim: AtomicUsize,
    stop: AtomicBool,
}

impl<S: Segments> Shared<S> {
    /// Claims the next segment, if any is left.
    fn claim_next(&self) -> Option<usize> {
        let i = self.claim.fetch_add(1, Ordering::Relaxed);
        (i < self.segments.count()).then_some(i)
    }

    /// Claims the next segment if there is one and it is below `limit`.
    fn claim_below(&self, limit: usize) -> Option<usize> {
        let limit = limit.min(self.segments.count());
        self.claim
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                (c < limit).then_some(c + 1)
            })
            .ok()
    }
}

/// Reads the segments in order, decoded by its helpers or by itself.
struct SharedReader<S: Segments + Send + 'static>
where
    S::Reader: Send,
{
    shared: Arc<Shared<S>>,
    /// Segments decoded by helpers, as `(index, segment)`.
    decoded: Receiver<(usize, Decoded)>,
    /// Those decoded before their turn, and whether a helper decoded them.
    early: BTreeMap<usize, (Decoded, bool)>,
    /// How far past the next segment the reader decodes for itself.
    window: usize,
    /// One ticket per segment a helper may decode ahead; one goes back per segment consumed.
    tickets: Sender<()>,
    /// Used buffers for the helpers to fill again.
    recycle: Sender<SegmentBuf>,
    /// The reader's own segment reader, opened when first needed.
    own: Option<S::Reader>,
    /// Buffers for the segments the reader decodes itself.
    spares: Vec<SegmentBuf>,
    /// The segment being read: its index, the next batch in it, and the error after its
    /// last batch.
    current: Option<(SegmentBuf, usize, usize)>,
    pending: Option<Error>,
    /// The next segment to read.
    next: usize,
    /// The end of the trace was reached or an error returned.
    done: bool,
    /// Whether segments take their first pcs from before them ([`Segments::carries_pc`]), the
    /// pc of the last access handed out, and whether the current segment's first data
    /// records (before its first instruction) still get it.
    carries_pc: bool,
    /// The stream's counts when the reader it replaced knew them ahead
    /// ([`AccessReader::counts_ahead`]).
    counts_ahead: Option<crate::trace::native::Counts>,
    last_pc: u64,
    patching: bool,
    /// The trace's progress counter (bytes read).
    bytes: Arc<AtomicU64>,
    helpers: Vec<JoinHandle<()>>,
}

impl<S: Segments + Send + 'static> SharedReader<S>
where
    S::Reader: Send,
{
    fn spawn(segments: S, helpers: usize, bytes: Arc<AtomicU64>) -> Self {
        let helpers = helpers.clamp(1, segments.count());
        let segments_carry_pc = segments.carries_pc();
        let shared = Arc::new(Shared {
            segments,
            claim: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let (tickets, ticket_rx) = bounded::<()>(helpers * AHEAD);
        for _ in 0..helpers * AHEAD {
            tickets.send(()).expect("room for every ticket");
        }
        let (decoded_tx, decoded) = unbounded::<(usize, Decoded)>();
        // Bounded: a spent buffer the helpers have no use for is dropped, not queued. Queued
        // without bound, buffers piled up whenever the reader decoded segments itself while
        // the helpers' turn came late (89 batches, 200 MB, at the peak of a report of a
        // 150 M-record trace under Valgrind's serialised threads).
        let (recycle, recycled) = bounded::<SegmentBuf>(helpers * AHEAD);
        let handles = (0..helpers)
            .map(|_| {
                let (shared, tx) = (shared.clone(), decoded_tx.clone());
                let (ticket_rx, recycled) = (ticket_rx.clone(), recycled.clone());
                std::thread::spawn(move || help(&shared, &ticket_rx, &tx, &recycled))
            })
            .collect();
        SharedReader {
            carries_pc: segments_carry_pc,
            counts_ahead: None,
            last_pc: NO_PC,
            patching: false,
            shared,
            decoded,
            early: BTreeMap::new(),
            window: helpers * AHEAD + 1,
            tickets,
            recycle,
            own: None,
            spares: Vec::new(),
            current: None,
            pending: None,
            next: 0,
            done: false,
            bytes,
            helpers: handles,
        }
    }

    /// Segment `self.next`. While it is not ready, the reader decodes the next unclaimed
    /// segment itself (a few ahead at most) instead of waiting.
    fn take_next(&mut self) -> Decoded {
        let i = self.next;
        loop {
            if let Some((d, by_helper)) = self.early.remove(&i) {
                if by_helper {
                    let _ = self.tickets.try_send(());
                }
                return d;
            }
            match self.decoded.try_recv() {
                Ok((j, d)) => {
                    self.early.insert(j, (d, true));
                    continue;
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
            }
            if let Some(j) = self.shared.claim_below(i + self.window) {
                let d = self.decode_here(j);
                self.early.insert(j, (d, false));
                continue;
            }
            match self.decoded.recv() {
                Ok((j, d)) => {
                    self.early.insert(j, (d, true));
                }
                // Every helper gone, and segment `i` claimed by one that did not deliver it:
                // it panicked.
                Err(_) => {
                    for h in self.helpers.drain(..) {
                        if let Err(panic) = h.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                    let e = Error::InvalidParameter {
                        name: "decoding threads",
                        message: "a decoding thread stopped before its segment".into(),
                    };
                    return (SegmentBuf::default(), Some(e));
                }
            }
        }
    }

    /// At the end of the trace: stops the helpers and lets go of every buffer and decoder,
    /// which would otherwise live as long as the trace, past the pass into the models (the
    /// gzip report's heap peak under massif: 79.9 → 69.9 MB, docs/report.md "Memory").
    fn release(&mut self) {
        self.stop_helpers();
        // The spent buffers queued for the helpers go with the channel's last sender.
        drop(std::mem::replace(&mut self.recycle, bounded(0).0));
        while self.decoded.try_recv().is_ok() {}
        self.early.clear();
        self.spares = Vec::new();
        self.own = None;
    }

    /// Stops the helpers and waits for them.
    fn stop_helpers(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // Helpers wait for tickets: closing the channel (dropping the only sender) wakes them.
        drop(std::mem::replace(&mut self.tickets, bounded(0).0));
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }

    /// Decodes segment `j` on the reader's thread.
    fn decode_here(&mut self, j: usize) -> Decoded {
        let mut buf = self.spares.pop().unwrap_or_default();
        buf.clear();
        let segments = &self.shared.segments;
        let reader = match self.own.as_mut() {
            Some(r) => r,
            None => match segments.open() {
                Ok(r) => self.own.insert(r),
                Err(e) => return (buf, Some(e)),
            },
        };
        let err = segments.read(reader, j, &mut buf).err();
        (buf, err)
    }
}

impl<S: Segments + Send + 'static> AccessReader for SharedReader<S>
where
    S::Reader: Send,
{
    fn elide_fetches(&mut self) {
        self.shared.segments.elide_fetches();
    }

    fn counts_ahead(&self) -> Option<crate::trace::native::Counts> {
        self.counts_ahead
    }

    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        loop {
            if let Some((buf, seg, at)) = self.current.as_mut() {
                if *at < buf.batches().len() {
                    // Hand the decoded batch over; the buffer keeps the caller's old one to
                    // fill later.
                    std::mem::swap(batch, buf.batch_mut(*at));
                    *at += 1;
                    if batch.is_empty() {
                        continue;
                    }
                    if self.carries_pc {
                        if self.patching {
                            self.patching = carry_pc(batch, self.last_pc);
                        }
                        self.last_pc = *batch.pcs.last().expect("not empty");
                    }
                    return Ok(batch.len());
                }
                if let Some(e) = self.pending.take() {
                    self.done = true;
                    self.current = None;
                    return Err(e);
                }
                let end = self.shared.segments.end_byte(*seg);
                self.bytes.fetch_max(end, Ordering::Relaxed);
                let (buf, _, _) = self.current.take().expect("checked");
                if self.spares.len() < 2 {
                    self.spares.push(buf);
                } else {
                    // Full: the helpers hold enough; this one is freed.
                    let _ = self.recycle.try_send(buf);
                }
            }
            if self.done || self.next == self.shared.segments.count() {
                if !self.done {
                    self.release();
                }
                self.done = true;
                batch.clear();
                return Ok(0);
            }
            let (buf, err) = self.take_next();
            self.current = Some((buf, self.next, 0));
            self.pending = err;
            self.patching = self.next > 0;
            self.next += 1;
        }
    }
}

impl<S: Segments + Send + 'static> Drop for SharedReader<S>
where
    S::Reader: Send,
{
    fn drop(&mut self) {
        self.stop_helpers();
    }
}

#[cfg(test)]
mod tests;
