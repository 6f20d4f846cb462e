//! Exact LRU stack distances (PARDA's merge) and reuse times over chunks.
//!
//! Both merges are associative: a partial describes a run of consecutive chunks by what the
//! chunks after it need (its lines in order of first reference, and its lines' last
//! references) and what the chunks before it must still resolve (its first references). So
//! threads merge their chunks, and MPI ranks then merge the threads' partials, in any grouping.

use super::Chunked;
use crate::access::LineAddr;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::histogram::LogHistogram;
use crate::reuse::{Options, ReuseTime, ReuseTimes, StackDistance, StackDistances, for_each_chunk};

/// Stack distances by chunks; the result equals [`crate::reuse::StackDistanceAnalysis`]'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct StackDistancePlan {
    /// Which references count, and the histogram layout.
    pub options: Options,
}

/// Observes one chunk: distances of reuses inside it, and its unresolved first references.
#[derive(Debug)]
pub struct StackDistanceWorker {
    options: Options,
    start: u64,
    stack: StackDistance,
    part: StackDistancePartial,
}

/// The mergeable state of a run of consecutive chunks.
#[derive(Clone, Debug)]
pub struct StackDistancePartial {
    /// References counted.
    pub refs: u64,
    /// Distances resolved so far.
    pub histogram: LogHistogram,
    /// Lines in order of their first reference in the run: not resolved against earlier
    /// chunks (cold misses, once the run starts the trace).
    pub firsts: Vec<u64>,
    /// The run's lines, least recently referenced first; empty while `stack` holds them.
    pub recency: Vec<u64>,
    /// The live stack at the end of the run, when this process has it.
    stack: Option<StackDistance>,
    /// Lines to replay into `stack` before it is used (the last merged chunk's recency).
    pending: Vec<u64>,
}

impl StackDistancePartial {
    /// A partial from its parts (as received from another process).
    pub fn from_parts(
        refs: u64,
        histogram: LogHistogram,
        firsts: Vec<u64>,
        recency: Vec<u64>,
    ) -> StackDistancePartial {
        StackDistancePartial {
            refs,
            histogram,
            firsts,
            recency,
            stack: None,
            pending: Vec::new(),
        }
    }

    /// Makes `recency` describe the run (replaying what is pending, reading the stack), and
    /// drops the live stack: the form sent to another process.
    pub fn detach(&mut self) {
        if let Some(mut stack) = self.stack.take() {
            replay(&mut stack, &std::mem::take(&mut self.pending));
            self.recency = stack.lines_by_recency();
        }
    }

    /// The live stack, built from `recency` if need be, with pending lines replayed.
    fn stack_mut(&mut self) -> &mut StackDistance {
        let pending = std::mem::take(&mut self.pending);
        let recency = std::mem::take(&mut self.recency);
        let stack = self.stack.get_or_insert_with(|| {
            let mut s = StackDistance::new();
            replay(&mut s, &recency);
            s
        });
        replay(stack, &pending);
        stack
    }
}

/// References `lines` in `stack`, ignoring their distances.
fn replay(stack: &mut StackDistance, lines: &[u64]) {
    for part in lines.chunks(32) {
        stack.warm_slots(part);
        stack.warm_live(part);
        for &l in part {
            stack.access(LineAddr(l));
        }
    }
}

impl Analysis for StackDistanceWorker {
    fn observe(&mut self, batch: &Batch) {
        let options = self.options;
        let (stack, part) = (&mut self.stack, &mut self.part);
        for_each_chunk(batch, &options, |chunk| {
            stack.warm_slots(chunk);
            stack.warm_live(chunk);
            part.refs += chunk.len() as u64;
            for &l in chunk {
                match stack.access(LineAddr(l)) {
                    Some(sd) => part.histogram.record(sd),
                    None => part.firsts.push(l),
                }
            }
        });
    }
}

impl Chunked for StackDistancePlan {
    type Worker = StackDistanceWorker;
    type Partial = StackDistancePartial;
    type Output = StackDistances;

    fn worker(&self, start: u64) -> StackDistanceWorker {
        StackDistanceWorker {
            options: self.options,
            start,
            stack: StackDistance::new(),
            part: StackDistancePartial::from_parts(
                0,
                LogHistogram::new(self.options.layout),
                Vec::new(),
                Vec::new(),
            ),
        }
    }

    fn seal(&self, w: StackDistanceWorker) -> StackDistancePartial {
        // The first chunk keeps its live stack: the next chunk merges into it. Any other
        // chunk is merged into an earlier one, which needs its lines in recency order: sorted
        // here, on the worker's thread, not in the sequential merge.
        let mut part = w.part;
        part.stack = Some(w.stack);
        if w.start > 0 {
            part.detach();
        }
        part
    }

    fn merge(&self, acc: &mut StackDistancePartial, mut next: StackDistancePartial) {
        next.detach();
        let mut unresolved = Vec::new();
        let mut histogram =
            std::mem::replace(&mut acc.histogram, LogHistogram::new(self.options.layout));
        {
            let stack = acc.stack_mut();
            // PARDA: the next run's first references, in order, against everything before it.
            for part in next.firsts.chunks(32) {
                stack.warm_slots(part);
                stack.warm_live(part);
                for &l in part {
                    match stack.access(LineAddr(l)) {
                        Some(sd) => histogram.record(sd),
                        None => unresolved.push(l),
                    }
                }
            }
        }
        acc.firsts.extend(unresolved);
        histogram.merge(&next.histogram);
        acc.histogram = histogram;
        acc.refs += next.refs;
        // Put the next run's lines on top in its own order, when (if) the stack is used again.
        acc.pending = next.recency;
    }

    fn finish(&self, acc: StackDistancePartial) -> StackDistances {
        StackDistances {
            line_size: self.options.line_size.bytes(),
            refs: acc.refs,
            cold: acc.firsts.len() as u64,
            histogram: acc.histogram,
        }
    }
}

/// Reuse times (with first and last positions) by chunks; the result equals
/// [`crate::reuse::ReuseTimeAnalysis`]'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReuseTimePlan {
    /// Which references count, and the histogram layout.
    pub options: Options,
}

/// Observes one chunk.
#[derive(Debug)]
pub struct ReuseTimeWorker {
    options: Options,
    part: ReuseTimePartial,
}

/// The mergeable state of a run of consecutive chunks; positions are 1-based within the run.
#[derive(Clone, Debug)]
pub struct ReuseTimePartial {
    /// Line → position of its last reference in the run; the run's length.
    pub(crate) times: ReuseTime,
    /// Reuse times resolved so far.
    pub(crate) reuse_time: LogHistogram,
    /// `(line, position)` of each line's first reference in the run, in order.
    pub(crate) firsts: Vec<(u64, u64)>,
}

impl Analysis for ReuseTimeWorker {
    fn observe(&mut self, batch: &Batch) {
        let p = &mut self.part;
        for_each_chunk(batch, &self.options, |chunk| {
            p.times.warm(chunk);
            for &l in chunk {
                match p.times.access(LineAddr(l)) {
                    Some(rt) => p.reuse_time.record(rt),
                    None => p.firsts.push((l, p.times.position())),
                }
            }
        });
    }
}

impl Chunked for ReuseTimePlan {
    type Worker = ReuseTimeWorker;
    type Partial = ReuseTimePartial;
    type Output = ReuseTimes;

    fn worker(&self, _start: u64) -> ReuseTimeWorker {
        ReuseTimeWorker {
            options: self.options,
            part: ReuseTimePartial {
                times: ReuseTime::new(),
                reuse_time: LogHistogram::new(self.options.layout),
                firsts: Vec::new(),
            },
        }
    }

    fn seal(&self, w: ReuseTimeWorker) -> ReuseTimePartial {
        w.part
    }

    fn merge(&self, acc: &mut ReuseTimePartial, next: ReuseTimePartial) {
        let off = acc.times.position();
        // Prefetch each group's slots first: the lines come in first-reference order,
        // scattered over the table, and this merge is sequential.
        let mut lines = [0u64; 32];
        for group in next.firsts.chunks(32) {
            for (x, &(l, _)) in lines.iter_mut().zip(group) {
                *x = l;
            }
            acc.times.warm(&lines[..group.len()]);
            for &(l, f) in group {
                match acc.times.set_last(l, off + f) {
                    Some(p) => acc.reuse_time.record(off + f - p),
                    None => acc.firsts.push((l, off + f)),
                }
            }
        }
        for (l, p) in next.times.last_references() {
            acc.times.set_last(l, off + p);
        }
        acc.times.advance(next.times.position());
        acc.reuse_time.merge(&next.reuse_time);
    }

    fn finish(&self, acc: ReuseTimePartial) -> ReuseTimes {
        let layout = self.options.layout;
        let n = acc.times.position();
        let mut first = LogHistogram::new(layout);
        for &(_, f) in &acc.firsts {
            first.record(f);
        }
        let mut last = LogHistogram::new(layout);
        for p in acc.times.last_positions() {
            last.record(n + 1 - p);
        }
        ReuseTimes {
            line_size: self.options.line_size.bytes(),
            refs: n,
            distinct_lines: acc.times.distinct_lines(),
            reuse_time: acc.reuse_time,
            first,
            last,
        }
    }
}
