//! A [`Chunked`] plan over a trace file cut into parts: one worker per part, each reading its
//! own part ([`crate::parallel::FileSegments`]), partials merged in trace order as they come.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_channel::{Receiver, unbounded};

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::parallel::{
    Chunked, FileSegments, Fill, PROGRESS_EVERY, Segments, file_segments, index_range,
};
use crate::trace::Trace;

/// Bytes below which a part of a text trace is not worth a thread of its own.
const MIN_TEXT_PART: u64 = 1 << 16;

/// Runs `plan` over `trace` on `threads` threads and returns the merged result; `on_progress`
/// is called now and then on the caller's thread with the accesses analysed so far. A native
/// trace in a plain file is split by its block index (each worker decodes its own blocks), an
/// uncompressed text trace in a plain file by bytes at line boundaries (with two threads or
/// more); anything else is read on one thread and handed out in segments of `segment`
/// accesses ([`super::stream`]). With one thread the plan still runs through its worker, seal
/// and merge.
pub(super) fn run<P: Chunked>(
    trace: &mut Trace,
    plan: &P,
    threads: usize,
    segment: u64,
    on_progress: impl FnMut(u64),
) -> Result<P::Output> {
    let threads = threads.max(1);
    let parts = file_segments(
        trace,
        |_| threads as u64,
        // A text trace is cut only when two parts or more are worth their threads.
        |bytes| (bytes / MIN_TEXT_PART).clamp(1, threads as u64),
    )?;
    match parts {
        Some(parts @ FileSegments::Native(_)) => {
            finish(plan, run_parts(&parts, plan, on_progress)?)
        }
        Some(parts) if parts.count() > 1 => finish(plan, run_parts(&parts, plan, on_progress)?),
        _ => super::stream::run(trace, plan, threads, segment.max(1), on_progress),
    }
}

/// The result of the merged partials, or of an empty trace.
fn finish<P: Chunked>(plan: &P, acc: Option<P::Partial>) -> Result<P::Output> {
    Ok(plan.finish(match acc {
        Some(acc) => acc,
        None => plan.seal(plan.worker(0)),
    }))
}

/// Analyses the blocks `range` of the native trace at `path` on `threads` threads, and returns
/// the merged, unfinished partial (`None` for an empty range). One MPI rank's share.
pub fn run_indexed_range<P: Chunked>(
    path: &Path,
    range: Range<usize>,
    plan: &P,
    threads: usize,
) -> Result<Option<P::Partial>> {
    let blocks = index_range(path, range)?;
    let parts = FileSegments::native(path, blocks, threads.max(1) as u64);
    run_parts(&parts, plan, |_| {})
}

/// A worker's side of reading its part: one batch lent to the reader, observed once filled.
struct Feed<'a, W> {
    worker: &'a mut W,
    batch: Batch,
    done: &'a AtomicU64,
    abort: &'a AtomicBool,
}

impl<W: Analysis> Fill for Feed<'_, W> {
    fn batch(&mut self) -> &mut Batch {
        &mut self.batch
    }

    fn filled(&mut self) -> bool {
        if self.abort.load(Ordering::Relaxed) {
            return false;
        }
        self.worker.observe(&self.batch);
        self.done
            .fetch_add(self.batch.len() as u64, Ordering::Relaxed);
        true
    }
}

/// One worker per part of `parts`, each reading its own part; partials merged in order.
fn run_parts<P: Chunked>(
    parts: &FileSegments,
    plan: &P,
    on_progress: impl FnMut(u64),
) -> Result<Option<P::Partial>> {
    let n = parts.count();
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let (tx, rx) = unbounded::<(usize, Result<P::Partial>)>();
    std::thread::scope(|s| {
        for i in 0..n {
            let tx = tx.clone();
            let (done, abort) = (&done, &abort);
            s.spawn(move || {
                let result = (|| {
                    let mut worker = plan.worker(parts.start(i));
                    let mut reader = parts.open()?;
                    let mut feed = Feed {
                        worker: &mut worker,
                        batch: Batch::new(),
                        done,
                        abort,
                    };
                    parts.read(&mut reader, i, &mut feed)?;
                    Ok(plan.seal(worker))
                })();
                if result.is_err() {
                    abort.store(true, Ordering::Relaxed);
                }
                let _ = tx.send((i, result));
            });
        }
        drop(tx);
        merge_in_order(plan, &rx, n, &done, &abort, on_progress)
    })
}

/// Receives `n` numbered partials and merges them in number order as they become available.
fn merge_in_order<P: Chunked>(
    plan: &P,
    rx: &Receiver<(usize, Result<P::Partial>)>,
    n: usize,
    done: &AtomicU64,
    abort: &AtomicBool,
    mut on_progress: impl FnMut(u64),
) -> Result<Option<P::Partial>> {
    let mut waiting: Vec<Option<P::Partial>> = (0..n).map(|_| None).collect();
    let mut next = 0;
    let mut acc: Option<P::Partial> = None;
    let mut first_error: Option<(usize, Error)> = None;
    let mut received = 0;
    while received < n {
        let (i, result) = match rx.recv_timeout(PROGRESS_EVERY) {
            Ok(m) => m,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                on_progress(done.load(Ordering::Relaxed));
                continue;
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        };
        received += 1;
        match result {
            Ok(p) => waiting[i] = Some(p),
            Err(e) => {
                abort.store(true, Ordering::Relaxed);
                // Report the error of the earliest chunk, as a sequential pass would.
                if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                    first_error = Some((i, e));
                }
            }
        }
        if first_error.is_some() {
            continue;
        }
        while next < n {
            let Some(p) = waiting[next].take() else { break };
            match acc.as_mut() {
                None => acc = Some(p),
                Some(a) => plan.merge(a, p),
            }
            next += 1;
        }
        on_progress(done.load(Ordering::Relaxed));
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    Ok(acc)
}
