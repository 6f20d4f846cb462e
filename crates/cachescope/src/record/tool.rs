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
//! or mapping, with payload words after it), an `execve` mark (or its failure), call events
//! (a function entered, frames left: [`CallEvent`](crate::batch::CallEvent)s of the batch),
//! and the end record (last word: how many words came before it since the header). After an `execve` mark
//! a new header may follow: the exec'd program, followed with `--trace-children`.
//! [`ToolReader`] decodes references straight into [`Batch`](crate::batch::Batch) columns,
//! giving data references the pc of the instruction record before them as the lackey reader
//! does, and sends each event on a channel with its position in the stream. A stream
//! without its end record was cut off (Valgrind killed, or the tool failed) and is an error,
//! unless it stopped at an `execve` (the program replaced itself: exec'd programs are not
//! followed).
//!
//! Files: this one holds [`ToolReader`], its input buffer and the header; `tool/escape.rs`
//! the escapes (events, run definitions, threads, exec, end); `tool/read.rs` the loop decoding
//! references into a batch or straight into a native trace.

use std::io::Read;
use std::sync::{Arc, Mutex};

use crate::attribution::events::Event;
use crate::batch::NO_PC;
use crate::error::{Error, Result, Source, corrupt};
use crate::record::sentinel::EventCounts;
use crate::trace::native::InstrRuns;

pub(in crate::record) mod escape;
mod fork;
mod read;

/// Version of the record stream this reader understands.
pub const VERSION: u64 = 5;

/// The note on a recording cut at an exec that was not followed: most often a wrapper (a shell
/// script ending in `exec`, a pyenv shim) whose real program was left out.
pub const EXEC_NOT_FOLLOWED: &str = "the program exec'd another program, which was not \
    recorded (a wrapper, such as a shell script ending in exec or a pyenv shim?): give \
    --trace-children to follow it";

const TAG_THREAD: u64 = 0x1;
const TAG_EVENT: u64 = 0x2;
const TAG_EXEC: u64 = 0x3;
const TAG_RUNDEF: u64 = 0x8;
const TAG_FORK: u64 = 0xD;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const ARG_MASK: u64 = (1 << 48) - 1;
/// The header's bit saying the stream has call events.
const HEADER_CALLS: u64 = 1 << 19;

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

/// An [`AccessReader`](crate::trace::AccessReader) over the tool's record stream.
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
    /// Whether Valgrind was asked to follow execs (`--trace-children`).
    follows_exec: bool,
    /// Programs followed across an exec.
    execs: u32,
    /// The word where the current program's stream began (its header).
    instance_start: u64,
    events: Option<crossbeam_channel::Sender<Event>>,
    counts: EventCounts,
    shared: Option<Arc<Mutex<EventCounts>>>,
    /// The runs of instructions the current program's stream has defined.
    runs: InstrRuns,
    /// Whether the tool records call events (the header's bit 19).
    calls: bool,
    /// Runs defined over the whole recording: the next run's key.
    run_keys: u32,
    /// Parents waiting for the forked child that writes the stream (`tool/fork.rs`).
    forks: Vec<fork::Parent>,
    /// Added to the thread ids of the process writing: a forked child's threads come after
    /// every thread seen before it.
    thread_base: u32,
    /// A fork mark was read: the child's header comes next.
    child_header: bool,
    /// The child's end record was read: its parent goes on next.
    child_ended: bool,
    /// Forked children followed.
    followed_children: u32,
    /// What following children noticed.
    fork_notes: Vec<String>,
    /// Where the children that were not recorded are named (the tool appends to it).
    children_file: Option<std::path::PathBuf>,
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
            follows_exec: false,
            execs: 0,
            instance_start: 0,
            events: None,
            counts: EventCounts::default(),
            shared: None,
            runs: InstrRuns::default(),
            calls: false,
            run_keys: 0,
            forks: Vec::new(),
            thread_base: 0,
            child_header: false,
            child_ended: false,
            followed_children: 0,
            fork_notes: Vec::new(),
            children_file: None,
        }
    }

    /// Names, when the stream ends, the programs forked children ran that were not recorded,
    /// from `path` (one per line, appended by the tool in each such child before its exec).
    pub fn with_children_file(mut self, path: std::path::PathBuf) -> Self {
        self.children_file = Some(path);
        self
    }

    /// Reads the list of children not recorded into the notes (once, at the stream's end).
    fn read_children(&mut self) {
        let Some(path) = self.children_file.take() else {
            return;
        };
        let Some(ran) = children_not_recorded(&path) else {
            return;
        };
        self.fork_notes.push(if self.follows_exec {
            format!(
                "the program started {ran} while the recording followed another child (one \
                 process is followed at a time, the first the program forks while it holds the \
                 recording): not recorded"
            )
        } else {
            format!(
                "the program started {ran}, not recorded: give --trace-children to follow a \
                 child the program waits for"
            )
        });
    }

    /// Sends every event, in stream order and before the batch holding its position is
    /// returned, on `tx`.
    pub fn with_events(mut self, tx: crossbeam_channel::Sender<Event>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Says the run follows execs (Valgrind's `--trace-children=yes`): an exec the stream
    /// still stops at is then one Valgrind could not follow, not one it was not asked to.
    pub fn following_exec(mut self, yes: bool) -> Self {
        self.follows_exec = yes;
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

    /// Reads and checks the stream's header (blocks until the tool writes its first chunk or
    /// exits). Called by the first
    /// [`AccessReader::read_batch`](crate::trace::AccessReader::read_batch) if not before.
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
        self.calls = w & HEADER_CALLS != 0;
        self.pos += 8;
        self.words += 1;
        self.state = State::Open;
        Ok(())
    }

    /// Whether the stream has call events (the tool ran with `--cs-calls=yes`).
    pub fn has_calls(&self) -> bool {
        self.calls
    }

    /// Names the stream in errors and messages.
    pub fn source(&self) -> &Source {
        &self.source
    }
}

/// "a child process that ran P" (or "child processes that ran P, Q … and N more") from the
/// file in which the tool names, one per line, the programs forked children exec'd without
/// being recorded; `None` when there were none.
pub(super) fn children_not_recorded(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut names: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let shown: Vec<&str> = names.iter().take(5).copied().collect();
    let more = if names.len() > 5 {
        format!(" and {} more", names.len() - 5)
    } else {
        String::new()
    };
    let what = if names.len() == 1 {
        "a child process that ran"
    } else {
        "child processes that ran"
    };
    Some(format!("{what} {}{more}", shown.join(", ")))
}
