//! StatCache sampling ([`crate::sampling::Sampler`]) by chunks, with exactly the samples of one
//! sequential pass.
//!
//! Two things cross a chunk boundary. *Where the samples fall*: sampled positions count data
//! references (unless instruction fetches are included), and a chunk of a native trace does not
//! know how many precede it, since the block index counts every access. *Watchpoints*: a sample
//! whose line is not referenced again in its own chunk fires at the first reference to the line
//! in a later chunk.
//!
//! So the trace is cut into segments of about [`SEGMENT_MAX`] accesses, dealt to the workers in
//! turn, and each segment goes through three steps, with the coordinator (the caller's thread)
//! in between:
//! 1. the worker decodes the segment into memory and counts its references; the coordinator
//!    adds up the counts in segment order and moves the sample cursor (one draw per sample) to
//!    the segment's first position;
//! 2. the worker samples the segment from there, with the positions a sequential pass samples;
//!    samples that fire inside the segment are final, the others come back as watchpoints;
//! 3. once every earlier segment is sampled, the worker looks up, in the segment still in
//!    memory, the first reference to each line watched at the end of an earlier segment (a
//!    superset of those still watched: the coordinator sends the lines it knows of without
//!    waiting for the merges), with the watchpoint filter, as cheaply as sampling.
//!
//! The coordinator merges the segments in order: an earlier watchpoint fires at its line's
//! first reference in the segment, then the segment's own watchpoints join. The result is
//! [`Sampler::finish`]'s, sample for sample. Memory: each worker holds one decoded segment
//! (about 21 bytes per access), and the samples and watchpoints a sequential sampler holds.

use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{RecvTimeoutError, Sender, unbounded};
use hashbrown::HashMap;

use super::PROGRESS_EVERY;
use super::segments::{MemorySegments, SegmentBuf, Segments};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::sampling::{
    NextUse, Profile, Sample, SampleCursor, Sampler, SamplerOptions, SamplerParts,
};

/// Most accesses of one segment: a worker holds one decoded segment (about 21 bytes per
/// access, 5.5 MiB at this size), which it reads three times (count, sample, look up), so
/// it should stay in the cache. Measured on a 20 M-reference zipf trace over 2^20 lines, 2
/// threads (CPU seconds, loaded machine): 2^20 accesses 0.34 s, 2^18 0.29 s, 2^16 0.28 s, one
/// sequential pass 0.19 s; smaller segments add a coordination round trip per 2^16 accesses.
pub const SEGMENT_MAX: u64 = 1 << 18;

/// Samples the trace made of `chunks` (each a list of batches, in order), every chunk a
/// segment, on `threads` workers: the profile equals one sequential pass's, wherever the
/// chunks are cut. For checking the merge.
pub fn sample_chunks(
    options: SamplerOptions,
    chunks: &[Vec<Batch>],
    threads: usize,
) -> Result<Profile> {
    options.validate()?;
    run_segments(&MemorySegments(chunks), options, threads.max(1), |_| {})
}

/// What the coordinator sends a worker about its current segment.
enum Job {
    /// Sample from this many counted references, with this cursor.
    Start(u64, SampleCursor),
    /// Find the first references to these lines.
    Resolve(Vec<u64>),
}

/// What a worker reports about segment `.0`.
enum Report {
    /// Its counted references.
    Counted(usize, u64),
    /// Its samples, and its accesses.
    Sampled(usize, SamplerParts, u64),
    /// The first reference to each line asked about that it holds: `(line, position)`.
    Resolved(usize, Vec<(u64, u64)>),
    /// Reading failed.
    Failed(usize, Error),
}

/// The coordinator's view of one segment.
#[derive(Default)]
struct Seg {
    counted: Option<u64>,
    sampled: bool,
    parts: Option<SamplerParts>,
    firsts: Option<Vec<(u64, u64)>>,
}

/// Runs the three steps of the [module documentation](self) over `segments`.
pub(crate) fn run_segments<S: Segments>(
    segments: &S,
    options: SamplerOptions,
    threads: usize,
    mut on_progress: impl FnMut(u64),
) -> Result<Profile> {
    let n = segments.count();
    let threads = threads.clamp(1, n.max(1));
    let abort = AtomicBool::new(false);
    let (report_tx, report_rx) = unbounded::<Report>();
    std::thread::scope(|s| {
        let mut jobs: Vec<Sender<Job>> = Vec::with_capacity(threads);
        for t in 0..threads {
            let (job_tx, job_rx) = unbounded::<Job>();
            jobs.push(job_tx);
            let (tx, abort) = (report_tx.clone(), &abort);
            s.spawn(move || {
                let mut reader = match segments.open() {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Report::Failed(t, e));
                        return;
                    }
                };
                let mut buf = SegmentBuf::default();
                for i in (t..n).step_by(threads) {
                    if abort.load(Ordering::Relaxed) {
                        return;
                    }
                    buf.clear();
                    if let Err(e) = segments.read(&mut reader, i, &mut buf) {
                        let _ = tx.send(Report::Failed(i, e));
                        return;
                    }
                    let counted: u64 = buf
                        .batches()
                        .iter()
                        .map(|b| counted_refs(b, options.include_instructions))
                        .sum();
                    let _ = tx.send(Report::Counted(i, counted));
                    let Ok(Job::Start(offset, cursor)) = job_rx.recv() else {
                        return;
                    };
                    let mut sampler = Sampler::resume(options, offset, cursor);
                    let mut accesses = 0;
                    for b in buf.batches() {
                        sampler.observe(b);
                        accesses += b.len() as u64;
                    }
                    let _ = tx.send(Report::Sampled(i, sampler.into_parts(), accesses));
                    let Ok(Job::Resolve(lines)) = job_rx.recv() else {
                        return;
                    };
                    let firsts = Sampler::first_references(options, offset, &lines, buf.batches());
                    let _ = tx.send(Report::Resolved(i, firsts));
                }
            });
        }
        drop(report_tx);
        let result = coordinate(n, options, &jobs, &report_rx, &mut on_progress);
        // Stop the workers: those waiting for a job see their channel close.
        abort.store(true, Ordering::Relaxed);
        drop(jobs);
        result
    })
}

/// References of `b` the sampler counts.
pub(super) fn counted_refs(b: &Batch, include_instructions: bool) -> u64 {
    if include_instructions {
        b.len() as u64
    } else {
        b.kinds.iter().filter(|&&k| k != AccessKind::Instr).count() as u64
    }
}

/// The coordinator: hands out starts and lookups as soon as their inputs are known, merges
/// the segments in order. On a read error, finishes the segments before it (a later error
/// could hide an earlier one) and returns the earliest.
fn coordinate(
    n: usize,
    options: SamplerOptions,
    jobs: &[Sender<Job>],
    reports: &crossbeam_channel::Receiver<Report>,
    on_progress: &mut impl FnMut(u64),
) -> Result<Profile> {
    let threads = jobs.len();
    let mut segs: Vec<Seg> = (0..n).map(|_| Seg::default()).collect();
    let mut limit = n;
    let mut error: Option<Error> = None;
    let mut cursor = SampleCursor::new(&options);
    let (mut next_start, mut offset) = (0usize, 0u64);
    let (mut sampled, mut next_resolve, mut merged) = (0usize, 0usize, 0usize);
    let mut merge = MergeInOrder::default();
    let mut accesses = 0u64;
    while merged < limit {
        let report = match reports.recv_timeout(PROGRESS_EVERY) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                on_progress(accesses);
                continue;
            }
            // Every worker gone with segments left: only after an error they reported.
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match report {
            Report::Counted(i, c) => segs[i].counted = Some(c),
            Report::Sampled(i, parts, a) => {
                segs[i].sampled = true;
                segs[i].parts = Some(parts);
                accesses += a;
                on_progress(accesses);
            }
            Report::Resolved(i, firsts) => segs[i].firsts = Some(firsts),
            Report::Failed(i, e) => {
                if i < limit {
                    limit = i;
                    error = Some(e);
                }
            }
        }
        while next_start < limit
            && let Some(c) = segs[next_start].counted
        {
            cursor.skip_to(offset);
            let _ = jobs[next_start % threads].send(Job::Start(offset, cursor.clone()));
            offset += c;
            next_start += 1;
        }
        while sampled < limit && segs[sampled].sampled {
            sampled += 1;
        }
        while next_resolve < next_start.min(limit) && next_resolve <= sampled {
            // Lines watched at the segment's start are among these: the watchpoints left by
            // the merged segments and those of every later one before it.
            let mut lines: Vec<u64> = merge.active_lines().collect();
            for seg in &segs[merged..next_resolve] {
                let parts = seg.parts.as_ref().expect("sampled before");
                lines.extend(parts.active.iter().map(|&(l, _)| l));
            }
            lines.sort_unstable();
            lines.dedup();
            let _ = jobs[next_resolve % threads].send(Job::Resolve(lines));
            next_resolve += 1;
        }
        while merged < limit && segs[merged].parts.is_some() && segs[merged].firsts.is_some() {
            let seg = &mut segs[merged];
            let firsts = seg.firsts.take().expect("checked");
            merge.absorb(&firsts, seg.parts.take().expect("checked"));
            merged += 1;
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    if merged < n {
        // Workers gone without a report: only when one panicked.
        return Err(Error::InvalidParameter {
            name: "sampling workers",
            message: "a worker stopped before its segment was merged".into(),
        });
    }
    on_progress(accesses);
    Ok(merge.finish(options, offset))
}

/// Merges the samples of consecutive parts of a trace, in order.
#[derive(Default)]
pub(super) struct MergeInOrder {
    /// Watchpoints left by the parts merged: line → sampled position.
    active: HashMap<u64, u64, foldhash::fast::RandomState>,
    done: Vec<Sample>,
}

impl MergeInOrder {
    /// The lines watched at the end of the parts merged so far.
    pub fn active_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.active.keys().copied()
    }

    /// Appends the next part: `firsts`, the first reference `(line, position)` in it to (at
    /// least) every line watched so far, and its own samples.
    pub fn absorb(&mut self, firsts: &[(u64, u64)], parts: SamplerParts) {
        for &(line, i) in firsts {
            if let Some(j) = self.active.remove(&line) {
                self.done.push(Sample {
                    position: j,
                    next: NextUse::Reuse {
                        distance: i - j - 1,
                    },
                });
            }
        }
        self.done.extend(parts.done);
        self.active.extend(parts.active);
    }

    /// The profile of a trace of `refs` counted references: what is still watched dangles.
    pub fn finish(mut self, options: SamplerOptions, refs: u64) -> Profile {
        self.done
            .extend(self.active.into_iter().map(|(_, j)| Sample {
                position: j,
                next: NextUse::Dangling { age: refs - j },
            }));
        self.done.sort_unstable_by_key(|s| s.position);
        // Thinned as one sampler's would be, so that the profile does not depend on the chunks.
        Profile::from_sampler(options, refs, self.done).thinned(crate::sampling::MAX_SAMPLES)
    }
}
