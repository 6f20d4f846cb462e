//! Analyses that do not split in time, run side by side: one decode, each thread its share.

use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam_channel::bounded;

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::trace::Trace;

/// Batches in flight to each thread.
const IN_FLIGHT: usize = 4;

/// Reads `trace` once on the caller's thread and feeds every batch to every one of `analyses`,
/// the analyses dealt over `threads` threads (each analysis stays on one thread and sees every
/// batch in order, so its result is what one thread feeding them all gives). For independent
/// analyses such as several cache configurations; returns the accesses read.
pub(super) fn run(
    trace: &mut Trace,
    analyses: &mut [&mut (dyn Analysis + Send)],
    threads: usize,
    mut on_progress: impl FnMut(u64),
) -> Result<u64> {
    let threads = threads.clamp(1, analyses.len().max(1));
    if threads == 1 {
        let mut plain: Vec<&mut dyn Analysis> = analyses
            .iter_mut()
            .map(|a| &mut **a as &mut dyn Analysis)
            .collect();
        return super::in_order::run(trace, &mut plain, 2, on_progress);
    }
    crate::parallel::decode_in_parallel(trace, threads)?;
    let per = analyses.len().div_ceil(threads);
    std::thread::scope(|s| {
        let mut senders = Vec::new();
        for group in analyses.chunks_mut(per) {
            let (tx, rx) = bounded::<Arc<Batch>>(IN_FLIGHT);
            senders.push(tx);
            s.spawn(move || {
                for batch in rx {
                    for a in group.iter_mut() {
                        a.observe(&batch);
                    }
                }
            });
        }
        // Reuse a batch once every thread is done with it; allocate while they are behind.
        let mut recent: VecDeque<Arc<Batch>> = VecDeque::new();
        let mut seen = 0u64;
        loop {
            let mut batch = match recent.front_mut().and_then(Arc::get_mut) {
                Some(_) => recent
                    .pop_front()
                    .and_then(Arc::into_inner)
                    .unwrap_or_default(),
                None => Batch::new(),
            };
            if trace.read_batch(&mut batch)? == 0 {
                break;
            }
            seen += batch.len() as u64;
            let batch = Arc::new(batch);
            for tx in &senders {
                // A thread only stops when its channel closes, so sending cannot fail.
                let _ = tx.send(batch.clone());
            }
            recent.push_back(batch);
            if recent.len() > (IN_FLIGHT + 2) * 2 {
                recent.pop_front();
            }
            on_progress(seen);
        }
        Ok(seen)
    })
}
