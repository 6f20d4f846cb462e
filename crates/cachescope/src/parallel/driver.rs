//! Cutting a trace into chunks, running a [`Chunked`] plan's workers on threads, and merging
//! their partials in trace order.

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::Chunked;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::trace::native::{BlockDecoder, BlockEntry, read_index};
use crate::trace::{Compression, Format, Trace};

/// How a trace is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunking {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Accesses per chunk when the trace is read sequentially (rounded up to whole batches).
    /// The merge costs about two stack operations per distinct line of each chunk, so chunks
    /// of a few million accesses keep it small; default 2^22.
    pub segment: u64,
}

impl Default for Chunking {
    fn default() -> Self {
        Chunking {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            segment: 1 << 22,
        }
    }
}

impl Chunking {
    /// `threads` workers, default segments.
    pub fn threads(threads: usize) -> Chunking {
        Chunking {
            threads: threads.max(1),
            ..Chunking::default()
        }
    }
}

/// How often the caller's progress callback runs while workers are busy.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Runs `plan` over `trace` on `chunking.threads` threads and returns the merged result;
/// `on_progress` is called now and then on the caller's thread with the accesses analysed so
/// far. A native trace in a plain file is split by its block index (each worker decodes its own
/// blocks); anything else is read on one thread and handed out in segments. With one thread the
/// plan still runs through its worker, seal and merge.
pub fn run<P: Chunked>(
    trace: &mut Trace,
    plan: &P,
    chunking: &Chunking,
    on_progress: impl FnMut(u64),
) -> Result<P::Output> {
    let threads = chunking.threads.max(1);
    if let Some((path, blocks)) = indexed(trace) {
        let ranges = split_blocks(&blocks, threads);
        let acc = run_block_ranges(path.as_path(), &blocks, &ranges, plan, on_progress)?;
        return Ok(plan.finish(match acc {
            Some(acc) => acc,
            None => plan.seal(plan.worker(0)),
        }));
    }
    run_stream(trace, plan, threads, chunking.segment.max(1), on_progress)
}

/// The file and block index of `trace` when it is a native trace that can be read block by
/// block: a plain file, no outer compression, and an index that reads.
pub(super) fn indexed(trace: &Trace) -> Option<(std::path::PathBuf, Vec<BlockEntry>)> {
    if trace.format() != Some(Format::Native) || trace.compression() != Compression::None {
        return None;
    }
    let Source::File(path) = trace.source() else {
        return None;
    };
    let file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    // An index that does not read (a file cut short, damaged) falls back to the streaming
    // reader, which reports the damage where it meets it.
    let (_, index) = read_index(BufReader::new(file), trace.source()).ok()?;
    Some((path.clone(), index.blocks))
}

/// Splits `blocks` into at most `parts` consecutive runs of about equal access counts (each
/// run non-empty; fewer runs when there are fewer blocks).
pub fn split_blocks(blocks: &[BlockEntry], parts: usize) -> Vec<Range<usize>> {
    let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
    let parts = parts.clamp(1, blocks.len().max(1));
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut seen = 0u64;
    for (i, b) in blocks.iter().enumerate() {
        seen += u64::from(b.count);
        let k = ranges.len() as u64 + 1;
        // Close run k once it holds its share k/parts of the accesses, or when every block
        // left is needed to give each remaining run one.
        let short = (blocks.len() - i - 1) as u64 == parts as u64 - k;
        if k < parts as u64 && (seen * parts as u64 >= total * k || short) {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < blocks.len() {
        ranges.push(start..blocks.len());
    }
    ranges
}

/// Analyses the blocks `range` of the native trace at `path` on `threads` threads, and returns
/// the merged, unfinished partial (`None` for an empty range). One MPI rank's share.
pub fn run_indexed_range<P: Chunked>(
    path: &Path,
    range: Range<usize>,
    plan: &P,
    threads: usize,
) -> Result<Option<P::Partial>> {
    let source = Source::File(path.to_owned());
    let file = File::open(path).map_err(|e| Error::io(&source, e))?;
    let (_, index) = read_index(BufReader::new(file), &source)?;
    let blocks = index
        .blocks
        .get(range.clone())
        .ok_or_else(|| Error::InvalidParameter {
            name: "block range",
            message: format!(
                "blocks {range:?} are not in a trace of {} blocks",
                index.blocks.len()
            ),
        })?;
    let ranges = split_blocks(blocks, threads);
    run_block_ranges(path, blocks, &ranges, plan, |_| {})
}

/// One worker per range of `blocks`, each decoding its own blocks from `path`; partials merged
/// in order.
fn run_block_ranges<P: Chunked>(
    path: &Path,
    blocks: &[BlockEntry],
    ranges: &[Range<usize>],
    plan: &P,
    on_progress: impl FnMut(u64),
) -> Result<Option<P::Partial>> {
    let source = Source::File(path.to_owned());
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let (tx, rx) = unbounded::<(usize, Result<P::Partial>)>();
    std::thread::scope(|s| {
        for (i, range) in ranges.iter().enumerate() {
            let tx = tx.clone();
            let (source, done, abort) = (&source, &done, &abort);
            let blocks = &blocks[range.clone()];
            s.spawn(move || {
                let result = (|| {
                    let start = blocks.first().map_or(0, |b| b.first);
                    let mut worker = plan.worker(start);
                    let mut file =
                        BufReader::new(File::open(path).map_err(|e| Error::io(source, e))?);
                    let mut decoder = BlockDecoder::new();
                    let mut batch = Batch::new();
                    for entry in blocks {
                        if abort.load(Ordering::Relaxed) {
                            break;
                        }
                        decoder.read_block(&mut file, source, entry, &mut batch)?;
                        worker.observe(&batch);
                        done.fetch_add(batch.len() as u64, Ordering::Relaxed);
                    }
                    Ok(plan.seal(worker))
                })();
                if result.is_err() {
                    abort.store(true, Ordering::Relaxed);
                }
                let _ = tx.send((i, result));
            });
        }
        drop(tx);
        merge_in_order(plan, &rx, ranges.len(), &done, &abort, on_progress)
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

/// What the reading thread sends a worker.
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
fn run_stream<P: Chunked>(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(counts: &[u32]) -> Vec<BlockEntry> {
        let mut first = 0;
        counts
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                let e = BlockEntry {
                    offset: i as u64 * 100,
                    comp_len: 10,
                    first,
                    count,
                };
                first += u64::from(count);
                e
            })
            .collect()
    }

    #[test]
    fn split_blocks_tiles_the_blocks_in_balanced_runs() {
        for counts in [
            vec![10; 8],
            vec![1, 1, 1, 100],
            vec![100, 1, 1, 1],
            vec![5],
            vec![],
            vec![3, 9, 27, 81, 243, 7, 7],
        ] {
            let b = blocks(&counts);
            for parts in 1..=10 {
                let r = split_blocks(&b, parts);
                // Consecutive, non-empty, covering every block, at most `parts` runs.
                assert!(r.len() <= parts.max(1));
                let mut at = 0;
                for x in &r {
                    assert_eq!(x.start, at);
                    assert!(x.end > x.start);
                    at = x.end;
                }
                assert_eq!(at, b.len());
                if counts.len() >= parts {
                    assert_eq!(r.len(), parts, "{counts:?} into {parts}");
                }
            }
        }
        // Equal blocks split evenly.
        let r = split_blocks(&blocks(&[10; 8]), 4);
        assert_eq!(r, vec![0..2, 2..4, 4..6, 6..8]);
    }
}
