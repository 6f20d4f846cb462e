//! Analyses that read the trace in order on one thread: the caller's runs them, the others
//! decode. A trace file that can be cut into segments (an uncompressed native or text trace) is
//! decoded by every thread at once, segments handed over in order ([`decode_in_parallel`]); any
//! other trace is read on its own thread one or two batches ahead, so decoding and analysis
//! overlap (a compressed trace adds a third, decompressing thread). Results do not depend on
//! the thread count: the analyses see the same batches in the same order either way.

use crossbeam_channel::bounded;

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::parallel::decode_in_parallel;
use crate::trace::Trace;

/// Batches in flight between the reader thread and the analyses.
const IN_FLIGHT: usize = 3;

/// Reads `trace` to its end, feeding every batch to each of `analyses`; `on_progress` is called
/// after each batch with the number of accesses seen so far. `threads` ≥ 2 decodes on that many
/// threads (or one, for a trace that cannot be cut) beside the caller's, which runs the
/// analyses; 1 does everything on the caller's thread.
pub(super) fn run(
    trace: &mut Trace,
    analyses: &mut [&mut dyn Analysis],
    threads: usize,
    mut on_progress: impl FnMut(u64),
) -> Result<u64> {
    let mut seen = 0u64;
    // A trace file that threads can decode on their own already reads ahead on `threads`
    // threads: analyse on this one.
    if threads <= 1 || decode_in_parallel(trace, threads)? {
        let mut batch = Batch::new();
        while trace.read_batch(&mut batch)? > 0 {
            if analyses.len() > 1 && batch.data_addrs().is_none() {
                // Once here rather than in every analysis that counts data references.
                batch.index_data();
            }
            for a in analyses.iter_mut() {
                a.observe(&batch);
            }
            seen += batch.len() as u64;
            on_progress(seen);
        }
        return Ok(seen);
    }
    let many = analyses.len() > 1;
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
                if trace.read_batch(&mut batch)? == 0 {
                    break;
                }
                if many && batch.data_addrs().is_none() {
                    batch.index_data();
                }
                if full_tx.send(batch).is_err() {
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
