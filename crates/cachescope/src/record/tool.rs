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
//! a new header may follow: the exec'd program, followed with `--trace-children`.
//! [`ToolReader`] decodes references straight into [`Batch`] columns, giving data references
//! the pc of the instruction record before them as the lackey reader does, and sends each
//! event on a channel with its position in the stream. A stream without its end record was
//! cut off (Valgrind killed, or the tool failed) and is an error, unless it stopped at an
//! `execve` (the program replaced itself: exec'd programs are not followed).

use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};

use crate::attribution::events::Event;
use crate::batch::{BATCH_LEN, Batch, NO_PC};
use crate::error::{Error, Result, Source, corrupt, truncated};
use crate::record::sentinel::EventCounts;
use crate::record::tool_decode::{PREFETCH_AHEAD, decode_run};
use crate::trace::{AccessReader, Diagnostics};

mod event;

/// Version of the record stream this reader understands.
pub const VERSION: u64 = 1;

const TAG_THREAD: u64 = 0x1;
const TAG_EVENT: u64 = 0x2;
const TAG_EXEC: u64 = 0x3;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const ARG_MASK: u64 = (1 << 48) - 1;

const EV_ALLOC: u64 = 1;
const EV_FREE: u64 = 2;
const EV_MAP: u64 = 3;

/// Bytes read from the pipe at a time ([`ToolReader::new`]'s buffer). The tool writes 1 MiB
/// chunks, but reading 32 KiB at a time keeps the buffer in L1 beside the batch being filled
/// (~10% more records/s in the `tool_decode` bench than 1 MiB; a read costs far less than
/// decoding 4,096 records).
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
///
/// References are decoded straight out of the input's own buffer ([`BufRead::fill_buf`]): the
/// 32 KiB a pipe read filled ([`ToolReader::new`]), or the whole stream when it is already in
/// memory ([`ToolReader::from_bytes`], no copy at all). Only escapes, and the rare word split
/// across two reads, are first gathered into a small buffer of their own.
pub struct ToolReader<R> {
    input: R,
    source: Source,
    /// Words gathered out of the input: `carry[pos..]` not yet decoded (empty but for an
    /// escape with its payload, or a word split across two of the input's reads).
    carry: Vec<u8>,
    pos: usize,
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
}

impl<R: Read + Send> ToolReader<BufReader<R>> {
    /// A reader of the stream on `input` (a pipe, a file), read 32 KiB at a time; `source`
    /// names it in errors. Events are dropped unless [`ToolReader::with_events`] gives a
    /// channel.
    pub fn new(input: R, source: Source) -> Self {
        ToolReader::from_buf_read(BufReader::with_capacity(READ_CHUNK, input), source)
    }
}

impl<'a> ToolReader<&'a [u8]> {
    /// A reader of a stream already in memory, decoded in place.
    pub fn from_bytes(bytes: &'a [u8], source: Source) -> Self {
        ToolReader::from_buf_read(bytes, source)
    }
}

impl<R: BufRead + Send> ToolReader<R> {
    /// A reader of the stream on `input`, decoded out of its buffer.
    pub fn from_buf_read(input: R, source: Source) -> Self {
        ToolReader {
            input,
            source,
            carry: Vec::new(),
            pos: 0,
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

    /// Bytes gathered and not yet decoded.
    #[inline]
    fn carried(&self) -> usize {
        self.carry.len() - self.pos
    }

    /// Moves bytes from the input into `carry` until it holds `want` whole words, taking no
    /// more than those; returns false if the input ends first.
    fn gather(&mut self, want: usize) -> Result<bool> {
        if self.carried() >= 8 * want {
            return Ok(true);
        }
        self.carry.drain(..self.pos);
        self.pos = 0;
        while self.carry.len() < 8 * want {
            let need = 8 * want - self.carry.len();
            let window = window(&mut self.input, &self.source)?;
            if window.is_empty() {
                return Ok(false);
            }
            let take = need.min(window.len());
            self.carry.extend_from_slice(&window[..take]);
            self.input.consume(take);
        }
        Ok(true)
    }

    /// Word `i` of the gathered words.
    #[inline]
    fn word(&self, i: usize) -> u64 {
        let at = self.pos + 8 * i;
        u64::from_le_bytes(self.carry[at..at + 8].try_into().expect("8 bytes"))
    }

    /// True when no byte is left, gathered or in the input.
    fn at_end(&mut self) -> Result<bool> {
        Ok(self.carried() == 0 && window(&mut self.input, &self.source)?.is_empty())
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

    /// Reads and checks the stream's header (blocks until the tool writes its first chunk or
    /// exits). Called by the first [`AccessReader::read_batch`] if not before.
    pub fn start(&mut self) -> Result<()> {
        if self.state != State::Start {
            return Ok(());
        }
        if !self.gather(1)? {
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

/// `input`'s buffered bytes, reading more if it has none (empty at its end); a function of
/// the field alone, so the caller may write other fields while it holds them.
fn window<'a, R: BufRead>(input: &'a mut R, source: &Source) -> Result<&'a [u8]> {
    while let Err(e) = input.fill_buf() {
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::io(source, e));
        }
    }
    input.fill_buf().map_err(|e| Error::io(source, e))
}

impl<R: BufRead + Send> AccessReader for ToolReader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        self.start()?;
        while batch.len() < BATCH_LEN {
            if self.state == State::Ended {
                if self.gather(1)? {
                    return Err(corrupt(&self.source, "words after the end record"));
                }
                break;
            }
            let room = BATCH_LEN - batch.len();
            // Decode from the gathered words while there are any, else in place from the
            // input's buffer; a word split across two reads is gathered first.
            let (n, done) = if self.carried() >= 8 {
                let n = (self.carried() / 8).min(room);
                let bytes = &self.carry[self.pos..self.pos + 8 * n];
                let done = decode_run::<0>(bytes, &mut self.pc, batch);
                self.pos += 8 * done;
                (n, done)
            } else if self.carried() == 0 && window(&mut self.input, &self.source)?.len() >= 8 {
                let window = window(&mut self.input, &self.source)?;
                let n = (window.len() / 8).min(room);
                let bytes = &window[..8 * n];
                // A window larger than a read buffer is a stream in memory, not just read into
                // cache: prefetch it ahead of the decoder (docs/recording.md, the decoder bench).
                let done = if window.len() > 2 * READ_CHUNK {
                    decode_run::<PREFETCH_AHEAD>(bytes, &mut self.pc, batch)
                } else {
                    decode_run::<0>(bytes, &mut self.pc, batch)
                };
                self.input.consume(8 * done);
                (n, done)
            } else if self.gather(1)? {
                continue;
            } else {
                if !self.at_end()? {
                    return Err(truncated(&self.source, "the stream ends inside a record"));
                }
                if self.exec_seen {
                    break;
                }
                return Err(truncated(
                    &self.source,
                    "the record stream ended without its end record (Valgrind was killed or \
                     failed); the references before the cut are incomplete",
                ));
            };
            self.words += done as u64;
            self.records += done as u64;
            if done < n {
                // An escape is next: gathered (if it was in the input's buffer) and handled.
                self.gather(1)?;
                let w = self.word(0);
                self.escape(w)?;
            }
        }
        if let Some(shared) = &self.shared {
            if let Ok(mut c) = shared.lock() {
                *c = self.counts();
            }
        }
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

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
