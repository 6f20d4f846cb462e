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
use crate::trace::{Compression, Format, Trace, open_text_range};

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
    if threads > 1
        && let Some((path, format, len)) = text_file(trace)
    {
        let parts = (len / MIN_TEXT_PART).clamp(1, threads as u64);
        if parts > 1 {
            let ranges = line_ranges(&path, trace.source(), len, parts)?;
            let source = trace.source().clone();
            let acc = run_text_ranges(&path, &source, format, &ranges, plan, on_progress)?;
            return Ok(plan.finish(match acc {
                Some(acc) => acc,
                None => plan.seal(plan.worker(0)),
            }));
        }
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
    let blocks = index_range(path, range)?;
    let ranges = split_blocks(&blocks, threads);
    run_block_ranges(path, &blocks, &ranges, plan, |_| {})
}

/// The index entries of blocks `range` of the native trace at `path`.
pub(super) fn index_range(path: &Path, range: Range<usize>) -> Result<Vec<BlockEntry>> {
    let source = Source::File(path.to_owned());
    let file = File::open(path).map_err(|e| Error::io(&source, e))?;
    let (_, mut index) = read_index(BufReader::new(file), &source)?;
    if range.start > range.end || range.end > index.blocks.len() {
        return Err(Error::InvalidParameter {
            name: "block range",
            message: format!(
                "blocks {range:?} are not in a trace of {} blocks",
                index.blocks.len()
            ),
        });
    }
    Ok(index.blocks.drain(range).collect())
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
    run_workers(
        ranges.len(),
        plan,
        |i| blocks[ranges[i].clone()].first().map_or(0, |b| b.first),
        |i, sink| {
            let mut file = BufReader::new(File::open(path).map_err(|e| Error::io(&source, e))?);
            let mut decoder = BlockDecoder::new();
            let mut batch = Batch::new();
            for entry in &blocks[ranges[i].clone()] {
                decoder.read_block(&mut file, &source, entry, &mut batch)?;
                if !sink(&batch) {
                    break;
                }
            }
            Ok(())
        },
        on_progress,
    )
}

/// Feeds one part of the trace to a sink, batch by batch, until the sink returns false.
type Feed<'a> = dyn FnMut(&Batch) -> bool + 'a;

/// One worker per part `0..n`: `read(i, sink)` feeds part `i` (whose first access has index
/// `start(i)`, or any positive number for a later part when unknown) to its worker; partials
/// merged in order.
fn run_workers<P: Chunked>(
    n: usize,
    plan: &P,
    start: impl Fn(usize) -> u64 + Sync,
    read: impl Fn(usize, &mut Feed<'_>) -> Result<()> + Sync,
    on_progress: impl FnMut(u64),
) -> Result<Option<P::Partial>> {
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let (tx, rx) = unbounded::<(usize, Result<P::Partial>)>();
    std::thread::scope(|s| {
        for i in 0..n {
            let tx = tx.clone();
            let (done, abort, start, read) = (&done, &abort, &start, &read);
            s.spawn(move || {
                let result = (|| {
                    let mut worker = plan.worker(start(i));
                    read(i, &mut |batch: &Batch| {
                        if abort.load(Ordering::Relaxed) {
                            return false;
                        }
                        worker.observe(batch);
                        done.fetch_add(batch.len() as u64, Ordering::Relaxed);
                        true
                    })?;
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

/// Bytes below which a part of a text trace is not worth a thread of its own.
const MIN_TEXT_PART: u64 = 1 << 16;

/// The file, format and length of `trace` when it is an uncompressed text trace (lackey,
/// plain, din) in a regular file that can be cut at line boundaries; not when bad lines are
/// skipped (their count and first one are reported by the trace's own reader).
pub(super) fn text_file(trace: &Trace) -> Option<(std::path::PathBuf, Format, u64)> {
    let format = trace.format()?;
    if !matches!(format, Format::Lackey | Format::Plain(_) | Format::Din)
        || trace.compression() != Compression::None
        || trace.skips_bad_lines()
    {
        return None;
    }
    let Source::File(path) = trace.source() else {
        return None;
    };
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (path.clone(), format, meta.len()))
}

/// Cuts the `len` bytes of the file at `path` into at most `parts` ranges of about equal size,
/// each starting at the start of a line (just after a newline) and ending where the next one
/// starts; empty ranges dropped.
pub(super) fn line_ranges(
    path: &Path,
    source: &Source,
    len: u64,
    parts: u64,
) -> Result<Vec<Range<u64>>> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e| Error::io(source, e);
    let mut file = File::open(path).map_err(io)?;
    let mut cuts = vec![0u64];
    let mut buf = vec![0u8; 1 << 12];
    for k in 1..parts.max(1) {
        let nominal = (u128::from(len) * u128::from(k) / u128::from(parts)) as u64;
        let mut at = nominal.max(*cuts.last().expect("non-empty")).max(1) - 1;
        // The first newline at or after `at`: the line after it starts the range.
        let cut = loop {
            if at >= len {
                break len;
            }
            file.seek(SeekFrom::Start(at)).map_err(io)?;
            let got = file.read(&mut buf).map_err(io)?;
            if got == 0 {
                break len;
            }
            match memchr::memchr(b'\n', &buf[..got]) {
                Some(i) => break at + i as u64 + 1,
                None => at += got as u64,
            }
        };
        cuts.push(cut.max(*cuts.last().expect("non-empty")));
    }
    cuts.push(len);
    Ok(cuts
        .windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| w[0]..w[1])
        .collect())
}

/// `e` with its line number made absolute, for a reader of a range starting at byte `start`
/// of `path`, whose lines it numbered from 1: adds the newlines before `start`. Only a parse
/// error names a line; any other error is returned as it is.
pub(super) fn absolute_line(e: Error, path: &Path, start: u64) -> Error {
    use std::io::Read;
    let Error::Parse {
        source_name,
        line,
        text,
        message,
    } = e
    else {
        return e;
    };
    let before = (|| -> std::io::Result<u64> {
        let mut file = File::open(path)?.take(start);
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        loop {
            let got = file.read(&mut buf)?;
            if got == 0 {
                return Ok(n);
            }
            n += memchr::memchr_iter(b'\n', &buf[..got]).count() as u64;
        }
    })();
    match before {
        Ok(before) => Error::Parse {
            source_name,
            line: line + before,
            text,
            message,
        },
        Err(err) => Error::Io { source_name, err },
    }
}

/// One worker per byte range of the text trace at `path`, each parsing its own lines.
fn run_text_ranges<P: Chunked>(
    path: &Path,
    source: &Source,
    format: Format,
    ranges: &[Range<u64>],
    plan: &P,
    on_progress: impl FnMut(u64),
) -> Result<Option<P::Partial>> {
    run_workers(
        ranges.len(),
        plan,
        // The access index of a later range is not known; the byte offset is positive.
        |i| ranges[i].start,
        |i, sink| {
            let r = ranges[i].clone();
            let fed = (|| {
                let mut reader = open_text_range(path, source, format, r.clone())?;
                let mut batch = Batch::new();
                while reader.read_batch(&mut batch)? > 0 {
                    crate::interrupt::check()?;
                    if !sink(&batch) {
                        break;
                    }
                }
                Ok(())
            })();
            fed.map_err(|e| absolute_line(e, path, r.start))
        },
        on_progress,
    )
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
