//! The push side of the pipeline: analyses observe batches; [`run`] drives one pass.
//!
//! ## Execution model
//! One decode of the trace feeds every analysis: [`run`] reads batches from a [`Trace`] and
//! hands each batch to every [`Analysis`] in turn. With two or more threads, a trace file that
//! can be cut into segments (an uncompressed native or text trace) is decoded by that many
//! threads at once, segments handed over in order ([`crate::parallel::decode_in_parallel`]);
//! any other trace is read on its own thread one or two batches ahead, so decoding and analysis
//! overlap (a compressed trace adds a third, decompressing thread). Results do not depend on the thread count: analyses see
//! the same batches in the same order either way. Each analysis has its own `finish`-style
//! method returning its own result type, called after `run`.

use crossbeam_channel::bounded;

use crate::batch::Batch;
use crate::error::Result;
use crate::trace::Trace;

/// Something computed over a trace in one streaming pass.
pub trait Analysis {
    /// Observes the next batch of accesses, in trace order.
    fn observe(&mut self, batch: &Batch);
}

impl<A: Analysis + ?Sized> Analysis for &mut A {
    fn observe(&mut self, batch: &Batch) {
        (**self).observe(batch)
    }
}

impl<A: Analysis + ?Sized> Analysis for Box<A> {
    fn observe(&mut self, batch: &Batch) {
        (**self).observe(batch)
    }
}

/// Batches in flight between the reader thread and the analyses.
const IN_FLIGHT: usize = 3;

/// Reads `trace` to its end, feeding every batch to each of `analyses`; `on_progress` is called
/// after each batch with the number of accesses seen so far. `threads` ≥ 2 decodes on that many
/// threads (or one, for a trace that cannot be cut) beside the caller's, which runs the
/// analyses; 1 does everything on the caller's thread.
pub fn run(
    trace: &mut Trace,
    analyses: &mut [&mut dyn Analysis],
    threads: usize,
    mut on_progress: impl FnMut(u64),
) -> Result<u64> {
    let mut seen = 0u64;
    // A trace file that threads can decode on their own already reads ahead on `threads`
    // threads: analyse on this one.
    if threads <= 1 || crate::parallel::decode_in_parallel(trace, threads)? {
        let mut batch = Batch::new();
        while trace.read_batch(&mut batch)? > 0 {
            for a in analyses.iter_mut() {
                a.observe(&batch);
            }
            seen += batch.len() as u64;
            on_progress(seen);
        }
        return Ok(seen);
    }
    std::thread::scope(|s| {
        let (full_tx, full_rx) = bounded::<Batch>(IN_FLIGHT);
        let (empty_tx, empty_rx) = bounded::<Batch>(IN_FLIGHT + 1);
        for _ in 0..=IN_FLIGHT {
            empty_tx
                .send(Batch::new())
                .expect("the channel has room for every batch");
        }
        let reader = s.spawn(move || -> Result<()> {
            while let Ok(mut batch) = empty_rx.recv() {
                if trace.read_batch(&mut batch)? == 0 || full_tx.send(batch).is_err() {
                    break;
                }
            }
            Ok(())
        });
        for batch in full_rx {
            for a in analyses.iter_mut() {
                a.observe(&batch);
            }
            seen += batch.len() as u64;
            on_progress(seen);
            // The reader may have finished and dropped its end: nothing to recycle then.
            let _ = empty_tx.send(batch);
        }
        match reader.join() {
            Ok(r) => r.map(|()| seen),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
