//! Checking merges: a plan run over chunks cut wherever the caller puts them.

use super::Chunked;
use crate::analysis::Analysis;
use crate::batch::Batch;

/// Runs `plan` on explicitly given chunks (each a list of batches, in trace order), every
/// chunk through its own worker, and merges them: the chunk boundaries are wherever the caller
/// puts them (tests place them adversarially). Sequential; for checking merges.
pub fn run_chunks<P: Chunked>(plan: &P, chunks: &[Vec<Batch>]) -> P::Output {
    let mut start = 0u64;
    let mut acc: Option<P::Partial> = None;
    for chunk in chunks {
        let mut worker = plan.worker(start);
        for b in chunk {
            worker.observe(b);
            start += b.len() as u64;
        }
        let p = plan.seal(worker);
        match acc.as_mut() {
            None => acc = Some(p),
            Some(a) => plan.merge(a, p),
        }
    }
    plan.finish(acc.unwrap_or_else(|| plan.seal(plan.worker(0))))
}
