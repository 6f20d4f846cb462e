//! Reading the spatially sampled record stream of cachescope's Valgrind tool
//! (`--cs-spatial=yes`, `crates/cachescope-valgrind/tool/cs_spatial.c`; the format is in
//! `docs/recording.md`, "Spatial sampling"), as the sampled stream of docs/sampled.md.
//!
//! The tool writes only the data references to sampled lines (keyed hash at most its limit),
//! each as a *sample* record: its pc, the reference word of a full stream, and the loads,
//! stores, modifies and instructions of the full stream since the previous record. *Position*
//! records give the four counts themselves: before each event, thread switch, exec and the
//! end, and where a distance would not fit. So every count is known at every record, and the
//! counts between two records are one thread's (a switch is always preceded by a position):
//! the spans of docs/sampled.md, exact wherever a batch ends.
//!
//! [`SpatialReader`] applies [`SpatialFilter`] again to what the tool sent: the tool's limit
//! lags the filter's (it reads the published limit only when it hands over a buffer), so it
//! sends a superset, and the filter's outcome depends only on the lines' hashes in the order of
//! their first references. Batches end where [`Trace::sampled`](crate::trace::Trace::sampled)
//! ends them (just before a sample the limit admits once half a batch is kept), so the run
//! gives the very batches that sampling its full trace gives. After each batch the filter's
//! limit is published to the tool (the ring's header, which the tool reads). Events are
//! positioned as in a full stream (the records before them), so a recorded trace's event log
//! and a sampled run's agree. With the reuse sampler on too (header bit 17, `cs_sample.c`), its
//! records come in the same stream and
//! [`AccessReader::reuse_profile`](crate::trace::AccessReader::reuse_profile) gives its
//! profile at the end. Call events (header bit 19) are read in `tool_spatial/calls.rs`.

use std::io::Read;

use super::tool_sampled::{Stream, rebuild};
use crate::access::ThreadId;
use crate::attribution::events::Event;
use crate::batch::{Batch, ThreadSpan};
use crate::error::{Error, Result, Source};
use crate::record::tool::escape::decode_event;
use crate::record::tool_decode::{address, kind_of};
use crate::sampling::ThreadReuses;
use crate::sampling::{Profile, SamplerOptions};
use crate::spatial::{SpatialFilter, SpatialOptions};

mod calls;
mod promoted;
mod reading;
mod records;
mod words;
use words::Words;

const TAG_THREAD: u64 = 0x1;
const TAG_EVENT: u64 = 0x2;
const TAG_EXEC: u64 = 0x3;
const TAG_REUSE: u64 = 0x4;
const TAG_COUNT: u64 = 0x5;
const TAG_SAMPLE: u64 = 0xB;
const TAG_POSITION: u64 = 0xC;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const ARG_MASK: u64 = (1 << 48) - 1;
/// The header's flags: the reuse sampler's records, the spatial sampler's.
const REUSE_SAMPLING: u64 = 1 << 17;
const SPATIAL: u64 = 1 << 18;
/// A sample the limit admits ends the batch once it holds this many accesses (as
/// [`Trace::sampled`](crate::trace::Trace::sampled) ends them).
const FULL: usize = crate::trace::SAMPLED_BATCH;

/// A sample the limit admits, held for the next batch.
#[derive(Clone, Copy, Debug)]
struct Pending {
    pc: u64,
    word: u64,
    hash: u64,
    thread: ThreadId,
    data: u64,
    instrs: u64,
    /// A promoted line's reference (`promoted.rs`), not the filter's.
    promoted: bool,
}

/// Where the published limit goes (the ring's header), or nowhere.
pub(super) type Publish = Box<dyn Fn(u64) + Send>;

/// A reader of the tool's spatially sampled stream; see the [module documentation](self).
pub struct SpatialReader<R> {
    words: Words<R>,
    options: SpatialOptions,
    filter: SpatialFilter,
    publish: Option<Publish>,
    started: bool,
    ended: bool,
    thread: ThreadId,
    /// Loads, stores, modifies and instructions before the last record (this program's).
    counts: [u64; 4],
    /// The counts up to which the batch's spans hold the running thread's references: the
    /// span grows at a thread switch, a call, an exec and the batch's end, not per sample.
    spanned: [u64; 4],
    /// The counts of the programs before an exec followed (`--trace-children`).
    base: [u64; 4],
    pending: Option<Pending>,
    exec_seen: bool,
    /// Accesses kept so far.
    kept: u64,
    reuse: Option<(SamplerOptions, Stream)>,
    /// StatCache's sampler was dropped at a followed exec: the new program's tool counts from
    /// 0 again and takes positions drawn for the old one's count, so its reuses cannot be
    /// placed (a profile rebuilt from them would be wrong).
    reuse_dropped: bool,
    /// Whether the header says the reuse sampler's records come too.
    reuse_records: bool,
    profile: Option<Profile>,
    /// The promoted lines' records (`promoted.rs`).
    promotions: promoted::Promotions,
    /// The per-thread sampler's records (`cs_sample.c`), whether asked for or not; `None`
    /// once an exec was followed (its threads count from 1 again).
    threads: Option<ThreadReuses>,
    events: Option<crossbeam_channel::Sender<Event>>,
    calls: Option<crate::trace::CallPlaces>, // with call events: each thread's counts, fetch
    /// No filter reads the batches again
    /// ([`AccessReader::sample_itself`](crate::trace::AccessReader::sample_itself)): what the
    /// filter does not keep is left out rather than passed on.
    last: bool,
}

impl<R: Read + Send> SpatialReader<R> {
    /// A reader of the stream on `input`, filtered with `options` (the tool's hash key and
    /// starting limit must be theirs); `source` names it in errors. With `reuse`, the stream
    /// must carry the reuse sampler's records too (made with those options).
    pub fn new(
        input: R,
        source: Source,
        options: SpatialOptions,
        reuse: Option<SamplerOptions>,
    ) -> Result<Self> {
        Ok(SpatialReader {
            words: Words::new(input, source),
            filter: SpatialFilter::new(&options)?,
            options,
            publish: None,
            started: false,
            ended: false,
            thread: 1,
            counts: [0; 4],
            spanned: [0; 4],
            base: [0; 4],
            pending: None,
            exec_seen: false,
            kept: 0,
            reuse: reuse.map(|r| (r, Stream::floored(crate::sampling::REPORT_FLOOR))),
            reuse_dropped: false,
            reuse_records: false,
            profile: None,
            promotions: promoted::Promotions::default(),
            threads: Some(ThreadReuses::default()),
            events: None,
            calls: None,
            last: false,
        })
    }

    /// Sends every event, in stream order, positioned in the full stream, before the batch
    /// that follows it is returned.
    pub fn with_events(mut self, tx: crossbeam_channel::Sender<Event>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Calls `publish` with the filter's limit after each batch (the ring's header, which the
    /// tool reads).
    pub(super) fn with_limit(mut self, publish: Publish) -> Self {
        self.publish = Some(publish);
        self
    }

    /// Names the stream in errors.
    pub fn source(&self) -> &Source {
        self.words.source()
    }

    /// The full stream's data references and instructions up to the last record read.
    pub fn counts(&self) -> (u64, u64) {
        // Called for every sample: no allocation.
        let c = |k: usize| self.base[k] + self.counts[k];
        (c(0) + c(1) + c(2), c(3))
    }

    /// Reads and checks the stream's header (blocks until the tool hands over its first
    /// buffer or exits). Called by the first read if not before.
    pub fn start(&mut self) -> Result<()> {
        if self.started {
            return Ok(());
        }
        let Some(w) = self.words.next()? else {
            return Err(Error::Empty(self.source().clone()));
        };
        self.header(w)?;
        self.started = true;
        Ok(())
    }

    fn header(&mut self, w: u64) -> Result<()> {
        let version = super::tool::VERSION;
        let reuse = w & REUSE_SAMPLING != 0;
        if w >> 60 != TAG_HEADER || w & 0xFFFF != version || w & SPATIAL == 0 {
            return Err(self.words.corrupt(format!(
                "not a spatially sampled stream of cachescope's tool, version {version} (header {w:#018x})"
            )));
        }
        if self.reuse.is_some() && !reuse {
            return Err(self
                .words
                .corrupt("no reuse sampler's records, which were asked for".into()));
        }
        self.reuse_records = reuse;
        self.promotions.on = w & promoted::PROMOTION != 0;
        calls::header(w, &mut self.calls);
        Ok(())
    }

    /// The counts reach `c` on the running thread (in the batch's span at the next
    /// [`SpatialReader::span`]).
    fn advance(&mut self, c: [u64; 4]) -> Result<()> {
        if c.iter().zip(&self.counts).any(|(new, old)| new < old) {
            return Err(self.words.corrupt("a position going back".into()));
        }
        self.counts = c;
        Ok(())
    }

    /// Adds the running thread's references since the last call to the batch's span: before
    /// the thread changes, a call event, an exec's new count, and at the batch's end.
    pub(super) fn span(&mut self, out: &mut Batch) {
        let d = |k: usize| self.counts[k] - self.spanned[k];
        let span = ThreadSpan {
            thread: self.thread,
            loads: d(0),
            stores: d(1),
            modifies: d(2),
            instrs: d(3),
        };
        if span.data() + span.instrs > 0 {
            let sampling = out.sampling_mut().expect("started sampled");
            sampling.span_mut(self.thread).add(&span);
            calls::count(&mut self.calls, &span);
        }
        self.spanned = self.counts;
    }

    /// A sample record (after its tag word, whose argument is `pc`); true when it ends the
    /// batch (held for the next).
    fn sample(&mut self, pc: u64, out: &mut Batch) -> Result<bool> {
        let [word, delta] = self.words.array("a sample")?;
        if word >> 60 != 0 && self.promotions.on {
            return self.promotion_record(pc, word, delta, out);
        }
        if word >> 60 != 0 || (word >> 58) & 3 == 3 {
            return Err(self.words.corrupt(format!("a sample holding {word:#018x}")));
        }
        self.add_delta(delta);
        let line = address(word) >> self.options.line_size.shift();
        let hash = self.filter.hash().of(line);
        if self.promotions.on {
            self.promotions.reached(line, self.counts().0);
        }
        if !self.filter.limit().admits(hash) {
            return Ok(self.outside(pc, word, out));
        }
        let (data, instrs) = self.counts();
        let sample = Pending {
            pc,
            word,
            hash,
            thread: self.thread,
            data,
            instrs,
            promoted: false,
        };
        if out.len() >= FULL {
            self.pending = Some(sample);
            return Ok(true);
        }
        self.keep(sample, out);
        Ok(false)
    }

    /// A sample the limit admitted: into `out`, through the filter. One it keeps is under the
    /// limit after it (a new line that evicts lowers the limit at its own index); one it does
    /// not keep (a new line above every sampled one when the sample is full) is passed on too,
    /// under the limit it came under, and lowers the limit from the next access on: a reader
    /// filtering again sees every reference that changes the filter. With no reader after it
    /// (`last`), one it does not keep only lowers the limit there, as that reader would.
    fn keep(&mut self, s: Pending, out: &mut Batch) {
        let (size, kind) = ((s.word >> 48) & 0x3FF, kind_of((s.word >> 58) & 3));
        if s.promoted {
            out.set_thread(s.thread);
            out.push_sampled(address(s.word), size as u32, kind, s.pc, s.data, s.instrs);
            return;
        }
        let before = self.filter.limit();
        let kept = self.filter.keep_hashed(s.hash);
        let lowered = self.filter.limit() != before;
        if self.last && !kept {
            if lowered {
                out.lower_limit(self.filter.limit());
            }
            return;
        }
        if lowered && kept {
            out.lower_limit(self.filter.limit());
        }
        out.set_thread(s.thread);
        out.push_sampled(address(s.word), size as u32, kind, s.pc, s.data, s.instrs);
        if lowered && !kept {
            out.lower_limit(self.filter.limit());
        }
    }

    /// Adds a sample's distances to the counts (that only grow: no check, as a position
    /// record's needs).
    fn add_delta(&mut self, delta: u64) {
        for (k, c) in self.counts.iter_mut().enumerate() {
            *c += (delta >> (16 * k)) & 0xFFFF;
        }
    }

    /// The record whose first word is `w`; true when the batch should end here.
    fn record(&mut self, w: u64, out: &mut Batch) -> Result<bool> {
        let arg = w & ARG_MASK;
        match w >> 60 {
            TAG_SAMPLE => return self.sample(arg, out),
            TAG_POSITION => {
                let c = self.words.array("a position record")?;
                self.advance(c)?;
            }
            TAG_THREAD => {
                self.span(out);
                self.thread = arg as ThreadId;
            }
            calls::TAG_ENTER | calls::TAG_LEAVE if self.calls.is_some() => {
                self.span(out);
                self.call(w, out)?;
            }
            TAG_EVENT => {
                let n = (arg & 0xFFFF) as usize;
                let p = self.words.take(n, "an event")?;
                let kind =
                    decode_event((arg >> 16) & 0xFF, &p).map_err(|e| self.words.corrupt(e))?;
                if let Some(tx) = &self.events {
                    let (d, i) = self.counts();
                    // A closed channel means nobody wants the events any more.
                    let _ = tx.send(Event {
                        position: d + i,
                        kind,
                    });
                }
            }
            TAG_EXEC => self.exec_seen = arg == 0,
            TAG_HEADER if self.exec_seen => self.exec_followed(w, out)?,
            TAG_REUSE | TAG_COUNT if self.reuse_records => self.reuse_record(w)?,
            TAG_END => {
                self.words.end(arg)?;
                self.ended = true;
                self.finish(out.len())?;
                return Ok(true);
            }
            tag => {
                return Err(self
                    .words
                    .corrupt(format!("unexpected record tag {tag:#x}")));
            }
        }
        Ok(false)
    }

    /// At the end of the stream, `in_batch` accesses in the last batch: checks it, and makes
    /// the reuse sampler's profile.
    fn finish(&mut self, in_batch: usize) -> Result<()> {
        if self.words.next()?.is_some() {
            return Err(self.words.corrupt("words after the end record".into()));
        }
        // As the stage's check (`trace/sampled.rs`): fetches alone, kept nowhere, would be lost.
        let (data, instrs) = self.counts();
        if self.kept + in_batch as u64 == 0 && data + instrs > 0 {
            return Err(crate::trace::no_line_sampled(
                self.source(),
                data,
                &self.options,
            ));
        }
        self.promotions_end();
        if let Some((options, stream)) = &mut self.reuse {
            stream.exec = self.exec_seen;
            let source = self.words.source().clone();
            self.profile =
                Some(rebuild(*options, stream, &source)?.with_source(source.to_string()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
