//! Reading the record stream of cachescope's Valgrind tool (`crates/cachescope-valgrind`).
//!
//! The tool writes little-endian 64-bit words (the layout is in `docs/recording.md`):
//!
//! ```text
//!  bits  0-47  address (sign-extended from bit 47: amd64 canonical addresses)
//!  bits 48-57  size in bytes
//!  bits 58-59  kind: 0 load, 1 store, 2 modify, 3 instruction
//!  bits 60-63  tag: 0 for a reference, otherwise an escape whose bits 0-47 are its argument
//! ```
//!
//! Escapes: the header (first word: the version), a thread switch, an event (allocation, free
//! or mapping, with payload words after it), an `execve` mark (or its failure), and the end
//! record (last word: how many words came before it since the header). After an `execve` mark
//! a new header may follow: the exec'd program, followed with `--trace-children`. [`ToolReader`] decodes references straight into [`Batch`]
//! columns, giving data references the pc of the instruction record before them as the lackey
//! reader does, and sends each event on a channel with its position in the stream. A stream
//! without its end record was cut off (Valgrind killed, or the tool failed) and is an error,
//! unless it stopped at an `execve` (the program replaced itself: exec'd programs are not
//! followed).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use crate::attribution::events::{Event, EventKind, Mapping};
use crate::batch::{BATCH_LEN, Batch, NO_PC};
use crate::error::{Error, Result, Source, corrupt, truncated};
use crate::record::sentinel::EventCounts;
use crate::record::tool_decode::{TAG_RUN, ToolItems, address, decode_run};
use crate::trace::native::InstrRuns;
use crate::trace::{AccessReader, Diagnostics, native};

/// Version of the record stream this reader understands.
pub const VERSION: u64 = 2;

const TAG_THREAD: u64 = 0x1;
const TAG_EVENT: u64 = 0x2;
const TAG_EXEC: u64 = 0x3;
const TAG_RUNDEF: u64 = 0x8;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const ARG_MASK: u64 = (1 << 48) - 1;

const EV_ALLOC: u64 = 1;
const EV_FREE: u64 = 2;
const EV_MAP: u64 = 3;

/// Bytes read from the pipe at a time. The tool writes 1 MiB chunks, but reading 32 KiB at a
/// time keeps the staging buffer in L1 beside the batch being filled (~10% more records/s in
/// the `tool_decode` bench than 1 MiB; a read costs far less than decoding 4,096 records).
const READ_CHUNK: usize = 1 << 15;

/// Where the stream stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the header word.
    Start,
    /// Between the header and the end record.
    Open,
    /// After the end record.
    Ended,
}

/// An [`AccessReader`] over the tool's record stream.
pub struct ToolReader<R> {
    input: R,
    source: Source,
    /// Bytes read; `buf[pos..len]` not yet decoded.
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    state: State,
    pc: u64,
    /// Words decoded so far (checked against the end record).
    words: u64,
    /// References decoded so far: the position of the next event.
    records: u64,
    thread: u32,
    threads: u32,
    exec_seen: bool,
    /// Programs followed across an exec.
    execs: u32,
    /// The word where the current program's stream began (its header).
    instance_start: u64,
    events: Option<crossbeam_channel::Sender<Event>>,
    counts: EventCounts,
    shared: Option<Arc<Mutex<EventCounts>>>,
    /// The runs of instructions the current program's stream has defined.
    runs: InstrRuns,
}

impl<R: Read + Send> ToolReader<R> {
    /// A reader of the stream on `input`; `source` names it in errors. Events are dropped
    /// unless [`ToolReader::with_events`] gives a channel.
    pub fn new(input: R, source: Source) -> Self {
        ToolReader {
            input,
            source,
            buf: vec![0; READ_CHUNK + 8],
            pos: 0,
            len: 0,
            eof: false,
            state: State::Start,
            pc: NO_PC,
            words: 0,
            records: 0,
            thread: 1,
            threads: 1,
            exec_seen: false,
            execs: 0,
            instance_start: 0,
            events: None,
            counts: EventCounts::default(),
            shared: None,
            runs: InstrRuns::default(),
        }
    }

    /// Sends every event, in stream order and before the batch holding its position is
    /// returned, on `tx`.
    pub fn with_events(mut self, tx: crossbeam_channel::Sender<Event>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Keeps `shared` up to date with the events counted (`brackets` = all events, `kept` =
    /// references), after every batch.
    pub fn with_shared_counts(mut self, shared: Arc<Mutex<EventCounts>>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Events and references so far (`brackets` counts every event).
    pub fn counts(&self) -> EventCounts {
        EventCounts {
            brackets: self.counts.allocs + self.counts.frees + self.counts.maps,
            kept: self.records,
            ..self.counts.clone()
        }
    }

    /// The highest thread id seen (1 for a single-threaded program).
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// Words available to decode.
    #[inline]
    fn available(&self) -> usize {
        (self.len - self.pos) / 8
    }

    /// Reads until at least `want` words are available or the input ends; returns whether
    /// they are.
    fn fill(&mut self, want: usize) -> Result<bool> {
        if self.available() >= want {
            return Ok(true);
        }
        // Keep the undecoded tail at the front, then read after it.
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        if self.buf.len() < want * 8 + 8 {
            self.buf.resize(want * 8 + 8, 0);
        }
        while !self.eof && self.available() < want {
            match self.input.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.source, e)),
            }
        }
        Ok(self.available() >= want)
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        let at = self.pos + 8 * i;
        u64::from_le_bytes(self.buf[at..at + 8].try_into().expect("8 bytes"))
    }

    /// Handles the escape at `pos`.
    fn escape(&mut self, w: u64) -> Result<()> {
        let arg = w & ARG_MASK;
        match w >> 60 {
            TAG_HEADER if self.exec_seen && arg & 0xFFFF == VERSION => {
                // The program the recorded process exec'd, followed (--trace-children): its
                // tool's stream continues this one.
                self.exec_seen = false;
                self.execs += 1;
                self.instance_start = self.words;
                // The new program numbers its runs from 0.
                self.runs.clear();
            }
            TAG_HEADER => {
                return Err(corrupt(
                    &self.source,
                    format!("a second stream header at word {}", self.words),
                ));
            }
            TAG_THREAD => {
                let tid = arg as u32;
                if tid > self.threads {
                    self.threads = tid;
                }
                self.thread = tid;
            }
            TAG_EXEC => self.exec_seen = arg == 0,
            TAG_END => {
                let words = self.words - self.instance_start;
                if arg != words & ARG_MASK {
                    return Err(corrupt(
                        &self.source,
                        format!("the end record counts {arg} words before it, but {words} arrived"),
                    ));
                }
                self.state = State::Ended;
            }
            TAG_EVENT => return self.event(arg),
            TAG_RUNDEF => return self.run_definition(arg),
            TAG_RUN => {
                return Err(corrupt(
                    &self.source,
                    format!(
                        "run {arg} is used at word {} before it is defined",
                        self.words
                    ),
                ));
            }
            tag => {
                return Err(corrupt(
                    &self.source,
                    format!("unknown record tag {tag:#x} at word {}", self.words),
                ));
            }
        }
        self.pos += 8;
        self.words += 1;
        Ok(())
    }

    /// The event escape at `pos` with its payload.
    fn event(&mut self, arg: u64) -> Result<()> {
        let n = (arg & 0xFFFF) as usize;
        let kind = (arg >> 16) & 0xFF;
        if !self.fill(1 + n)? {
            return Err(truncated(
                &self.source,
                format!("an event of {n} words is cut off at word {}", self.words),
            ));
        }
        let p: Vec<u64> = (1..=n).map(|i| self.word(i)).collect();
        let bad = |what: &str| corrupt(&self.source, format!("{what} at word {}", self.words));
        let event = match kind {
            EV_ALLOC if n >= 2 => {
                self.counts.allocs += 1;
                EventKind::Alloc {
                    addr: p[0],
                    size: p[1],
                    stack: p[2..].to_vec(),
                }
            }
            EV_FREE if n == 1 => {
                self.counts.frees += 1;
                EventKind::Free { addr: p[0] }
            }
            EV_MAP if n >= 5 => {
                self.counts.maps += 1;
                let name_len = p[4] as usize;
                if name_len.div_ceil(8) != n - 5 {
                    return Err(bad("a mapping whose name length does not match its size"));
                }
                let mut name: Vec<u8> = p[5..].iter().flat_map(|w| w.to_le_bytes()).collect();
                name.truncate(name_len);
                EventKind::Map(Mapping {
                    start: p[0],
                    end: p[1],
                    offset: p[2],
                    perms: String::from_utf8_lossy(&p[3].to_le_bytes()[..4]).into_owned(),
                    path: String::from_utf8_lossy(&name).into_owned(),
                })
            }
            _ => return Err(bad(&format!("an event of kind {kind} with {n} words"))),
        };
        if let Some(tx) = &self.events {
            let position = self.records;
            // A closed channel means nobody wants the events any more.
            let _ = tx.send(Event {
                position,
                kind: event,
            });
        }
        self.pos += 8 * (1 + n);
        self.words += 1 + n as u64;
        Ok(())
    }

    /// The run definition at `pos` with its payload: the run's id, then its instruction
    /// records.
    fn run_definition(&mut self, arg: u64) -> Result<()> {
        let n = (arg & 0xFFFF) as usize;
        if !self.fill(1 + n)? {
            return Err(truncated(
                &self.source,
                format!(
                    "a run definition of {n} words is cut off at word {}",
                    self.words
                ),
            ));
        }
        let bad = |what: String| corrupt(&self.source, format!("{what} at word {}", self.words));
        if n < 2 {
            return Err(bad(format!("a run definition of {n} words")));
        }
        let id = self.word(1);
        if id != self.runs.len() as u64 {
            return Err(bad(format!(
                "run {id} defined where run {} was expected",
                self.runs.len()
            )));
        }
        // Each payload word must be an instruction record of 1-255 bytes (the templates keep
        // sizes in a byte).
        let mut fetches = Vec::with_capacity(n - 1);
        for w in (2..=n).map(|i| self.word(i)) {
            let size = ((w >> 48) & 0x3FF) as u32;
            if w >> 58 != 3 || !(1..=255).contains(&size) {
                return Err(bad(format!(
                    "a run holding {w:#018x}, not an instruction record"
                )));
            }
            fetches.push((address(w), size));
        }
        self.runs.push(fetches);
        self.pos += 8 * (1 + n);
        self.words += 1 + n as u64;
        Ok(())
    }

    /// Reads and checks the stream's header (blocks until the tool writes its first chunk or
    /// exits). Called by the first [`AccessReader::read_batch`] if not before.
    pub fn start(&mut self) -> Result<()> {
        if self.state != State::Start {
            return Ok(());
        }
        if !self.fill(1)? {
            return Err(Error::Empty(self.source.clone()));
        }
        let w = self.word(0);
        if w >> 60 != TAG_HEADER || (w & 0xFFFF) != VERSION {
            return Err(corrupt(
                &self.source,
                format!("not a cachescope tool stream of version {VERSION} (first word {w:#018x})"),
            ));
        }
        self.pos += 8;
        self.words += 1;
        self.state = State::Open;
        Ok(())
    }
}

/// Where [`ToolReader::read_into`] puts the references it decodes.
trait RunSink {
    /// How many more references it takes now.
    fn room(&self) -> usize;
    /// Takes the references at the start of `words` (whole words), runs of instructions
    /// expanded from `runs`, up to the first other escape (or its room); `pc` is the last
    /// instruction record's address, updated. Returns how many words and references.
    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)>;
}

impl RunSink for Batch {
    fn room(&self) -> usize {
        BATCH_LEN - self.len()
    }

    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)> {
        let before = self.len();
        let room = self.room();
        let done = decode_run(words, pc, runs, self, room);
        Ok((done, (self.len() - before) as u64))
    }
}

/// Encodes references straight into a native trace's blocks, about `left` at a time.
struct NativeSink<'a, W: Write> {
    writer: &'a mut native::Writer<W>,
    left: usize,
}

impl<W: Write> RunSink for NativeSink<'_, W> {
    fn room(&self) -> usize {
        self.left
    }

    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)> {
        let mut items = ToolItems::new(words, pc, runs);
        self.writer.write_items(&mut items)?;
        let (words, records) = items.taken();
        self.left = self.left.saturating_sub(records as usize);
        Ok((words, records))
    }
}

impl<R: Read + Send> ToolReader<R> {
    /// Decodes references into `sink` until it is full or the stream ends; returns whether
    /// the stream ended. Escapes are handled on the way (events sent, runs defined, thread
    /// switches and the end record checked).
    fn read_into(&mut self, sink: &mut impl RunSink) -> Result<bool> {
        self.start()?;
        while sink.room() > 0 {
            if self.state == State::Ended {
                if self.fill(1)? {
                    return Err(corrupt(&self.source, "words after the end record"));
                }
                return Ok(true);
            }
            if !self.fill(1)? {
                if self.len > self.pos {
                    return Err(truncated(&self.source, "the stream ends inside a record"));
                }
                if self.exec_seen {
                    return Ok(true);
                }
                return Err(truncated(
                    &self.source,
                    "the record stream ended without its end record (Valgrind was killed or \
                     failed); the references before the cut are incomplete",
                ));
            }
            let n = self.available();
            let bytes = &self.buf[self.pos..self.pos + 8 * n];
            let (done, records) = sink.take_run(bytes, &mut self.pc, &self.runs)?;
            self.pos += 8 * done;
            self.words += done as u64;
            self.records += records;
            if done < n && sink.room() > 0 {
                let w = self.word(0);
                if w >> 60 == TAG_RUN && self.runs.get(w & ARG_MASK).is_some() {
                    // A run longer than the room left: the sink is full for now.
                    return Ok(false);
                }
                self.escape(w)?;
            }
        }
        Ok(false)
    }

    /// Publishes the counts to the shared copy, if any.
    fn share_counts(&self) {
        if let Some(shared) = &self.shared {
            if let Ok(mut c) = shared.lock() {
                *c = self.counts();
            }
        }
    }

    /// Writes the rest of the stream into `writer`, each reference encoded straight from the
    /// tool's word into the writer's block: `record`'s path, which skips the batch columns
    /// every other reader fills (docs/recording.md). `progress` is told the references so
    /// far about every million. Stops with [`Error::Interrupted`] as a pass does.
    pub fn write_native<W: Write>(
        &mut self,
        writer: &mut native::Writer<W>,
        mut progress: impl FnMut(u64),
    ) -> Result<u64> {
        loop {
            crate::interrupt::check()?;
            let mut sink = NativeSink {
                writer: &mut *writer,
                left: 1 << 20,
            };
            let ended = self.read_into(&mut sink)?;
            self.share_counts();
            progress(self.records);
            if ended {
                return Ok(self.records);
            }
        }
    }

    /// Names the stream in errors and messages.
    pub fn source(&self) -> &Source {
        &self.source
    }
}

impl<R: Read + Send> AccessReader for ToolReader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        self.read_into(batch)?;
        self.share_counts();
        Ok(batch.len())
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::default();
        if self.exec_seen && self.state != State::Ended {
            d.notes
                .push("the program called execve: the new program it became was not traced".into());
        }
        d
    }
}
