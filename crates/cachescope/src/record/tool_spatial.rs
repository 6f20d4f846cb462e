//! Reading the spatially sampled record stream of cachescope's Valgrind tool
//! (`--cs-spatial=yes`, `crates/cachescope-valgrind/tool/cs_spatial.c`; the format is in
//! `docs/recording.md`, "Spatial sampling").
//!
//! The tool writes only the references to sampled lines (a hash of the line below the
//! threshold), each as a *sample* record: its pc, the reference word of a full stream, and
//! its distance from the previous sample in data references and instructions; *position*
//! records give the counts themselves (before each event, an exec and the end, and where a
//! distance would not fit). So every sampled reference knows where it sits in the full
//! stream: the data references and instructions before it (a data reference's own
//! instruction comes before it, as in a full stream). Events keep the full stream's rule:
//! their position is the records (data references and instructions) before them, so a
//! recorded trace's event log and a sampled run's agree. With the reuse sampler on too
//! (header bit 17, `cs_sample.c`), its reuse and count records come in the same stream and
//! are kept for the reuse profile ([`Ending::profile`]).
//!
//! [`SpatialReader`] decodes the stream into [`SampledRefs`]: a [`Batch`] of the samples, with
//! their threads, and their positions beside it.

use std::io::Read;

use crate::access::ThreadId;
use crate::attribution::events::Event;
use crate::batch::{BATCH_LEN, Batch};
use crate::error::{Error, Result, Source, corrupt, truncated};
use crate::record::tool::escape::decode_event;
use crate::record::tool_decode::address;
use crate::record::tool_sampled::{Stream, rebuild};
use crate::sampling::{Profile, SamplerOptions};

const TAG_THREAD: u64 = 0x1;
const TAG_EVENT: u64 = 0x2;
const TAG_EXEC: u64 = 0x3;
const TAG_REUSE: u64 = 0x4;
const TAG_COUNT: u64 = 0x5;
const TAG_SAMPLE: u64 = 0x9;
const TAG_POSITION: u64 = 0xA;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const ARG_MASK: u64 = (1 << 48) - 1;
/// The header's flags: the reuse sampler's records, the spatial sampler's.
const REUSE_SAMPLING: u64 = 1 << 17;
const SPATIAL: u64 = 1 << 18;

/// Sampled references and where each sits in the full stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampledRefs {
    /// The references, with their threads and pcs.
    pub batch: Batch,
    /// Per reference: the data references before it in the full stream.
    pub data_before: Vec<u64>,
    /// Per reference: the instructions before it in the full stream.
    pub instrs_before: Vec<u64>,
}

impl SampledRefs {
    /// Empties it, keeping its memory.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.data_before.clear();
        self.instrs_before.clear();
    }

    /// How many references it holds.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }
}

/// How the stream ended: the full stream's counts and the reuse sampler's records.
#[derive(Debug)]
pub struct Ending {
    /// Data references of the whole run (the full stream's).
    pub data: u64,
    /// Instructions of the whole run.
    pub instrs: u64,
    /// The stream stopped at an exec that was not followed.
    pub exec: bool,
    /// The reuse sampler's records, when it ran too.
    reuse: Option<Stream>,
    source: Source,
}

impl Ending {
    /// The reuse sampler's profile of the run (`options` as the tool was started with), when
    /// it ran: equal to sampling the run's full trace with the same options.
    pub fn profile(&self, options: SamplerOptions) -> Result<Option<Profile>> {
        self.reuse
            .as_ref()
            .map(|r| {
                rebuild(options, r, &self.source).map(|p| p.with_source(self.source.to_string()))
            })
            .transpose()
    }
}

/// Decodes a spatially sampled stream; see the [module documentation](self).
pub struct SpatialReader<R> {
    input: R,
    source: Source,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    started: bool,
    ended: bool,
    /// Words since the current program's header (checked against its end record).
    words: u64,
    thread: ThreadId,
    threads: ThreadId,
    /// The counts at the last sample or position record, this program's.
    data: u64,
    instrs: u64,
    /// The counts of the programs before an exec followed (`--trace-children`).
    base_data: u64,
    base_instrs: u64,
    exec_seen: bool,
    reuse: Option<Stream>,
    events: Option<crossbeam_channel::Sender<Event>>,
}

impl<R: Read> SpatialReader<R> {
    /// A reader of the stream on `input`; `source` names it in errors.
    pub fn new(input: R, source: Source) -> Self {
        SpatialReader {
            input,
            source,
            buf: vec![0; 1 << 15],
            pos: 0,
            len: 0,
            eof: false,
            started: false,
            ended: false,
            words: 0,
            thread: 1,
            threads: 1,
            data: 0,
            instrs: 0,
            base_data: 0,
            base_instrs: 0,
            exec_seen: false,
            reuse: None,
            events: None,
        }
    }

    /// Sends every event, in stream order, positioned in the full stream, before the batch
    /// holding the next sample is returned.
    pub fn with_events(mut self, tx: crossbeam_channel::Sender<Event>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Names the stream in errors.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The highest thread id seen (1 for a single-threaded program).
    pub fn threads(&self) -> ThreadId {
        self.threads
    }

    /// The full stream's data references and instructions up to the last record read.
    pub fn counts(&self) -> (u64, u64) {
        (self.base_data + self.data, self.base_instrs + self.instrs)
    }

    /// The next `n` words, reading as needed; `None` if the input ends before them.
    fn take(&mut self, n: usize) -> Result<Option<&[u8]>> {
        let want = 8 * n;
        if self.len - self.pos < want {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            while !self.eof && self.len < want {
                match self.input.read(&mut self.buf[self.len..]) {
                    Ok(0) => self.eof = true,
                    Ok(k) => self.len += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Error::io(&self.source, e)),
                }
            }
            if self.len < want {
                if self.len % 8 != 0 {
                    return Err(truncated(&self.source, "the stream ends inside a word"));
                }
                return Ok(None);
            }
        }
        let at = self.pos;
        self.pos += want;
        self.words += n as u64;
        Ok(Some(&self.buf[at..at + want]))
    }

    fn words_of(&mut self, n: usize, what: &str) -> Result<Vec<u64>> {
        let words = self.words;
        match self.take(n)? {
            Some(b) => Ok(b
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()),
            None => Err(truncated(
                &self.source,
                format!("{what} is cut off at word {words}"),
            )),
        }
    }

    /// Reads and checks a header word.
    fn header(&mut self, w: u64) -> Result<()> {
        let version = super::tool::VERSION;
        if w >> 60 != TAG_HEADER || w & 0xFFFF != version || w & SPATIAL == 0 {
            return Err(corrupt(
                &self.source,
                format!(
                    "not a spatially sampled stream of cachescope's tool, version {version} (word {w:#018x})"
                ),
            ));
        }
        if w & REUSE_SAMPLING != 0 && self.reuse.is_none() {
            self.reuse = Some(Stream::default());
        }
        Ok(())
    }

    /// Reads and checks the stream's header (blocks until the tool hands over its first
    /// buffer or exits). Called by the first [`SpatialReader::read`] if not before.
    pub fn start(&mut self) -> Result<()> {
        if self.started {
            return Ok(());
        }
        let Some(b) = self.take(1)? else {
            return Err(Error::Empty(self.source.clone()));
        };
        let w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        self.header(w)?;
        self.started = true;
        Ok(())
    }

    /// Reads samples into `out` (cleared first) until it is full or the stream ends; returns
    /// how many. Events met on the way are sent first.
    pub fn read(&mut self, out: &mut SampledRefs) -> Result<usize> {
        out.clear();
        self.start()?;
        out.batch.set_thread(self.thread);
        while out.len() < BATCH_LEN && !self.ended {
            let before = self.words;
            let Some(b) = self.take(1)? else {
                if self.exec_seen {
                    // The program became another, not followed: complete up to the exec.
                    self.ended = true;
                    break;
                }
                return Err(truncated(
                    &self.source,
                    "the sampled stream ended without its end record (Valgrind was killed or \
                     failed); no results of a partial run are made",
                ));
            };
            let w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            let arg = w & ARG_MASK;
            match w >> 60 {
                TAG_SAMPLE => {
                    let p = self.words_of(2, "a sample")?;
                    let (word, delta) = (p[0], p[1]);
                    if word >> 60 != 0 {
                        return Err(corrupt(
                            &self.source,
                            format!("a sample holding {word:#018x} at word {before}"),
                        ));
                    }
                    self.data += delta >> 32;
                    self.instrs += delta & 0xFFFF_FFFF;
                    let kind = crate::record::tool_decode::kind_of((word >> 58) & 3);
                    out.batch
                        .push_raw(address(word), ((word >> 48) & 0x3FF) as u32, kind, arg);
                    out.data_before.push(self.base_data + self.data);
                    out.instrs_before.push(self.base_instrs + self.instrs);
                }
                TAG_POSITION => {
                    let p = self.words_of(2, "a position record")?;
                    if p[0] < self.data || p[1] < self.instrs {
                        return Err(corrupt(
                            &self.source,
                            format!("a position going back at word {before}"),
                        ));
                    }
                    (self.data, self.instrs) = (p[0], p[1]);
                }
                TAG_THREAD => {
                    self.thread = arg as ThreadId;
                    self.threads = self.threads.max(self.thread);
                    out.batch.set_thread(self.thread);
                }
                TAG_EVENT => {
                    let n = (arg & 0xFFFF) as usize;
                    let p = self.words_of(n, "an event")?;
                    let kind = decode_event((arg >> 16) & 0xFF, &p).map_err(|what| {
                        corrupt(&self.source, format!("{what} at word {before}"))
                    })?;
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
                TAG_HEADER if self.exec_seen => {
                    // The program the recorded process exec'd, followed: it counts from 0.
                    self.header(w)?;
                    self.exec_seen = false;
                    self.base_data += self.data;
                    self.base_instrs += self.instrs;
                    (self.data, self.instrs) = (0, 0);
                    self.words = 1;
                }
                TAG_REUSE | TAG_COUNT if self.reuse.is_some() => {
                    let n = if w >> 60 == TAG_REUSE { 2 } else { 1 };
                    let p = self.words_of(n, "a reuse sampler's record")?;
                    let reuse = self.reuse.as_mut().expect("checked");
                    if n == 2 {
                        reuse.reuses.push((p[0], p[1]));
                    } else {
                        reuse.count = p[0];
                    }
                }
                TAG_END if arg == before & ARG_MASK => self.ended = true,
                TAG_END => {
                    return Err(corrupt(
                        &self.source,
                        format!(
                            "the end record counts {arg} words before it, but {before} arrived"
                        ),
                    ));
                }
                tag => {
                    return Err(corrupt(
                        &self.source,
                        format!("unexpected record tag {tag:#x} at word {before}"),
                    ));
                }
            }
        }
        Ok(out.len())
    }

    /// After the last [`SpatialReader::read`]: the run's counts and the reuse sampler's
    /// records. Errors if the stream did not end.
    pub fn finish(mut self) -> Result<Ending> {
        if !self.ended {
            return Err(corrupt(
                &self.source,
                "the sampled stream was not read to its end",
            ));
        }
        if self.take(1)?.is_some() {
            return Err(corrupt(&self.source, "words after the end record"));
        }
        let (data, instrs) = self.counts();
        let mut reuse = self.reuse.take();
        if let Some(r) = &mut reuse {
            r.exec = self.exec_seen;
        }
        Ok(Ending {
            data,
            instrs,
            exec: self.exec_seen,
            reuse,
            source: self.source,
        })
    }
}

#[cfg(test)]
mod tests;
