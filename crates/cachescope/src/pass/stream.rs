//! A [`Chunked`] plan over a trace that cannot be cut into parts (compressed files, pipes,
//! workloads, running programs): the caller's thread reads it and deals segments of accesses to
//! the workers in turn; a thread of its own merges the partials in order.

use crossbeam_channel::{Sender, bounded, unbounded};

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::parallel::Chunked;
use crate::trace::Trace;

/// What the reading thread sends a worker.
// Nearly every message is a batch: boxing it would allocate once per batch to shrink the rare
// others.
#[allow(clippy::large_enum_variant)]
enum Msg {
    /// A new chunk starts at this access index.
    Start(usize, u64),
    /// The chunk's next batch.
    Batch(Batch),
    /// The chunk is complete.
    End,
}

/// Batches in flight per worker.
const IN_FLIGHT: usize = 4;

/// Reads `trace` on the caller's thread and deals segments of `segment` accesses to
/// `threads` workers in turn; merges on a thread of its own.
pub(super) fn run<P: Chunked>(
    trace: &mut Trace,
    plan: &P,
    threads: usize,
    segment: u64,
    mut on_progress: impl FnMut(u64),
) -> Result<P::Output> {
    if threads == 1 {
        // One worker, one chunk: no thread needed.
        let mut worker = plan.worker(0);
        let mut batch = Batch::new();
        let mut seen = 0;
        while trace.read_batch(&mut batch)? > 0 {
            worker.observe(&batch);
            seen += batch.len() as u64;
            on_progress(seen);
        }
        return Ok(plan.finish(plan.seal(worker)));
    }
    let (empty_tx, empty_rx) = bounded::<Batch>(threads * (IN_FLIGHT + 1));
    for _ in 0..threads * (IN_FLIGHT + 1) {
        empty_tx.send(Batch::new()).expect("room for every batch");
    }
    let (part_tx, part_rx) = unbounded::<(usize, Result<P::Partial>)>();
    std::thread::scope(|s| {
        let mut to_workers: Vec<Sender<Msg>> = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (tx, rx) = bounded::<Msg>(IN_FLIGHT);
            to_workers.push(tx);
            let (part_tx, empty_tx) = (part_tx.clone(), empty_tx.clone());
            s.spawn(move || {
                let mut current: Option<(usize, P::Worker)> = None;
                for msg in rx {
                    match msg {
                        Msg::Start(i, start) => current = Some((i, plan.worker(start))),
                        Msg::Batch(b) => {
                            if let Some((_, w)) = current.as_mut() {
                                w.observe(&b);
                            }
                            let _ = empty_tx.send(b);
                        }
                        Msg::End => {
                            if let Some((i, w)) = current.take() {
                                let _ = part_tx.send((i, Ok(plan.seal(w))));
                            }
                        }
                    }
                }
            });
        }
        drop(part_tx);
        // The merge runs beside the reader, so chunk k's merge overlaps later chunks' work.
        let merger = s.spawn(move || -> Result<Option<P::Partial>> {
            let mut waiting = std::collections::BTreeMap::new();
            let mut next = 0;
            let mut acc: Option<P::Partial> = None;
            for (i, p) in part_rx {
                waiting.insert(i, p?);
                while let Some(p) = waiting.remove(&next) {
                    match acc.as_mut() {
                        None => acc = Some(p),
                        Some(a) => plan.merge(a, p),
                    }
                    next += 1;
                }
            }
            Ok(acc)
        });
        let read = (|| -> Result<()> {
            let mut seen = 0u64;
            let mut chunk = 0usize;
            let mut in_chunk = 0u64;
            loop {
                let mut batch = empty_rx.recv().expect("workers hand batches back");
                if trace.read_batch(&mut batch)? == 0 {
                    break;
                }
                let w = &to_workers[chunk % threads];
                if in_chunk == 0 {
                    let _ = w.send(Msg::Start(chunk, seen));
                }
                let n = batch.len() as u64;
                let _ = w.send(Msg::Batch(batch));
                seen += n;
                in_chunk += n;
                on_progress(seen);
                if in_chunk >= segment {
                    let _ = w.send(Msg::End);
                    chunk += 1;
                    in_chunk = 0;
                }
            }
            if in_chunk > 0 {
                let _ = to_workers[chunk % threads].send(Msg::End);
            }
            Ok(())
        })();
        drop(to_workers);
        let merged = merger
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        read?;
        Ok(plan.finish(match merged? {
            Some(acc) => acc,
            None => plan.seal(plan.worker(0)),
        }))
    })
}
