//! The attribution event log: a program's memory map and its heap allocations and frees, each
//! placed at its exact position in the reference stream.
//!
//! Stored beside a trace as `TRACE.events` (for `t.cst`, `t.cst.events`): a zstd-compressed
//! stream of JSON lines. The first line is the header, `{"cachescope_events": 1, ...}`, with the
//! recording's run id, which the trace's header carries too ([`super::run_id`]); every other
//! line is one [`Event`]. Events are in stream order (non-decreasing `position`).
//!
//! `position` is the number of trace records (every kind, instruction fetches included, as
//! stored in the trace the log belongs to) that come *before* the event: an allocation at
//! position 10 is live for record 10 onwards; a free at position 20 ends it before record 20.
//! A realloc is a `free` followed by an `alloc` at the same position.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, Source};

/// Version of the event log format written by this library.
pub const EVENTS_VERSION: u32 = 1;

/// One mapped region of the program's address space (a line of `/proc/PID/maps`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// First byte of the region.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Offset of `start` in the mapped file (0 for anonymous regions).
    pub offset: u64,
    /// Permissions as `/proc/PID/maps` prints them, e.g. `r-xp`.
    pub perms: String,
    /// The mapped file, or a pseudo-name such as `[stack]` or `[heap]`; empty when anonymous.
    pub path: String,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A region is mapped (the whole map is logged at start-up and again at exit, so regions
    /// loaded with `dlopen` are known too).
    Map(Mapping),
    /// A heap block was allocated (malloc, calloc, realloc, memalign, aligned_alloc,
    /// posix_memalign).
    Alloc {
        /// Address of the block.
        addr: u64,
        /// Size requested, in bytes.
        size: u64,
        /// Return addresses of the call path, innermost first (the allocator's caller first;
        /// the interposer's own frames removed).
        stack: Vec<u64>,
    },
    /// A heap block was freed.
    Free {
        /// Address of the block.
        addr: u64,
    },
    /// At exit, the bytes of a region backed by transparent huge pages (`AnonHugePages` of
    /// `/proc/PID/smaps`): how many, not which addresses (docs/tlb.md). Written by the tool.
    HugePages {
        /// First byte of the region.
        start: u64,
        /// One past the last byte.
        end: u64,
        /// Its bytes in huge pages.
        bytes: u64,
    },
}

/// One event and where it falls in the reference stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Number of trace records before the event.
    pub position: u64,
    /// The event.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The header line of an event log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Format version ([`EVENTS_VERSION`]).
    pub cachescope_events: u32,
    /// The program recorded, as a command line (informational).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub program: String,
    /// The recording's run id, also in its trace's header: the two name each other (empty in
    /// logs written before run ids).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run: String,
}

/// The side-car path of a trace's event log: `TRACE.events`.
pub fn sidecar_path(trace: &Path) -> PathBuf {
    let mut name = trace.as_os_str().to_owned();
    name.push(".events");
    PathBuf::from(name)
}

/// Writes an event log: the header, then one event per call to [`EventWriter::write`].
pub struct EventWriter<W: Write> {
    out: zstd::stream::write::Encoder<'static, W>,
    source: Source,
    last_position: u64,
    /// A line, serialized whole before it enters the encoder: serde_json writes a line in a
    /// dozen pieces, each of which was a call into zstd's stream.
    buf: Vec<u8>,
}

impl<W: Write> EventWriter<W> {
    /// Starts a log on `out` (`source` names it in errors).
    pub fn new(out: W, source: Source, header: &Header) -> Result<Self> {
        // Level 1: a live report writes the log as the program runs, beside it on a shared
        // core; level 3 took twice the CPU for a log 13 % smaller (sqlite3's 20 MB of events).
        let out = zstd::stream::write::Encoder::new(out, 1).map_err(|e| Error::io(&source, e))?;
        let mut w = EventWriter {
            out,
            source,
            last_position: 0,
            buf: Vec::new(),
        };
        w.line(header)?;
        Ok(w)
    }

    /// Appends one event; positions must not decrease.
    pub fn write(&mut self, event: &Event) -> Result<()> {
        if event.position < self.last_position {
            return Err(Error::InvalidParameter {
                name: "event position",
                message: format!(
                    "events must be written in stream order: {} after {}",
                    event.position, self.last_position
                ),
            });
        }
        self.last_position = event.position;
        self.line(event)
    }

    fn line<T: Serialize>(&mut self, value: &T) -> Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, value)
            .map_err(|e| Error::io(&self.source, std::io::Error::other(e)))?;
        self.buf.push(b'\n');
        self.out
            .write_all(&self.buf)
            .map_err(|e| Error::io(&self.source, e))
    }

    /// Ends the compressed stream and returns the output.
    pub fn finish(self) -> Result<W> {
        self.out.finish().map_err(|e| Error::io(&self.source, e))
    }
}

/// Reads an event log as a stream of events (memory does not grow with the log's length).
pub struct EventReader<R: Read> {
    lines: std::io::Lines<BufReader<zstd::stream::read::Decoder<'static, BufReader<R>>>>,
    source: Source,
    line: u64,
    last_position: u64,
    /// The log's header.
    pub header: Header,
}

impl EventReader<File> {
    /// Opens the event log at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let source = Source::File(path.to_owned());
        let file = File::open(path).map_err(|e| Error::io(&source, e))?;
        EventReader::new(file, source)
    }
}

impl<R: Read> EventReader<R> {
    /// Reads the header from `input`; `source` names it in errors.
    pub fn new(input: R, source: Source) -> Result<Self> {
        let decoder = zstd::stream::read::Decoder::new(input).map_err(|e| Error::io(&source, e))?;
        let mut lines = BufReader::new(decoder).lines();
        let first = match lines.next() {
            None => return Err(Error::Empty(source)),
            Some(line) => line.map_err(|e| corrupt_or_io(&source, e))?,
        };
        let header: Header = serde_json::from_str(&first).map_err(|e| Error::Parse {
            source_name: source.clone(),
            line: 1,
            text: cut(&first),
            message: format!("not a cachescope event log header ({e})"),
        })?;
        if header.cachescope_events != EVENTS_VERSION {
            return Err(Error::Corrupt {
                source_name: source,
                message: format!(
                    "event log version {} (this build reads version {EVENTS_VERSION})",
                    header.cachescope_events
                ),
            });
        }
        Ok(EventReader {
            lines,
            source,
            line: 1,
            last_position: 0,
            header,
        })
    }
}

impl<R: Read> Iterator for EventReader<R> {
    type Item = Result<Event>;

    fn next(&mut self) -> Option<Result<Event>> {
        let text = match self.lines.next()? {
            Ok(text) => text,
            Err(e) => return Some(Err(corrupt_or_io(&self.source, e))),
        };
        self.line += 1;
        let parsed = serde_json::from_str::<Event>(&text).map_err(|e| Error::Parse {
            source_name: self.source.clone(),
            line: self.line,
            text: cut(&text),
            message: format!("not an event ({e})"),
        });
        Some(parsed.and_then(|event| {
            if event.position < self.last_position {
                return Err(Error::Parse {
                    source_name: self.source.clone(),
                    line: self.line,
                    text: cut(&text),
                    message: format!(
                        "event out of order: position {} after {}",
                        event.position, self.last_position
                    ),
                });
            }
            self.last_position = event.position;
            Ok(event)
        }))
    }
}

fn corrupt_or_io(source: &Source, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::Truncated {
            source_name: source.clone(),
            message: "the compressed event log ends early".into(),
        },
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::Other => Error::Corrupt {
            source_name: source.clone(),
            message: format!("bad compressed event log: {e}"),
        },
        _ => Error::io(source, e),
    }
}

fn cut(text: &str) -> String {
    text.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Event> {
        vec![
            Event {
                position: 0,
                kind: EventKind::Map(Mapping {
                    start: 0x40_0000,
                    end: 0x40_1000,
                    offset: 0,
                    perms: "r-xp".into(),
                    path: "/bin/prog".into(),
                }),
            },
            Event {
                position: 7,
                kind: EventKind::Alloc {
                    addr: 0x5000,
                    size: 24,
                    stack: vec![0x40_0123, 0x40_0456],
                },
            },
            Event {
                position: 9,
                kind: EventKind::Free { addr: 0x5000 },
            },
        ]
    }

    #[test]
    fn round_trip() {
        let header = Header {
            cachescope_events: EVENTS_VERSION,
            program: "prog".into(),
            run: "0123abcd".into(),
        };
        let mut w = EventWriter::new(Vec::new(), Source::Memory, &header).unwrap();
        for e in sample() {
            w.write(&e).unwrap();
        }
        let bytes = w.finish().unwrap();
        let r = EventReader::new(&bytes[..], Source::Memory).unwrap();
        assert_eq!(r.header, header);
        let back: Vec<Event> = r.map(Result::unwrap).collect();
        assert_eq!(back, sample());
    }

    #[test]
    fn json_shape_is_stable() {
        let e = &sample()[1];
        assert_eq!(
            serde_json::to_string(e).unwrap(),
            r#"{"position":7,"alloc":{"addr":20480,"size":24,"stack":[4194595,4195414]}}"#
        );
    }

    #[test]
    fn out_of_order_and_garbage_are_errors_with_line_numbers() {
        let header = Header {
            cachescope_events: EVENTS_VERSION,
            program: String::new(),
            run: String::new(),
        };
        let mut w = EventWriter::new(Vec::new(), Source::Memory, &header).unwrap();
        w.write(&sample()[2]).unwrap();
        assert!(w.write(&sample()[1]).is_err());

        let text = b"{\"cachescope_events\":1}\n{\"position\":3,\"free\":{\"addr\":1}}\nnonsense\n";
        let bytes = zstd::encode_all(&text[..], 1).unwrap();
        let mut r = EventReader::new(&bytes[..], Source::Memory).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err().to_string();
        assert!(err.contains(":3:"), "{err}");
        assert!(EventReader::new(&b"not zstd"[..], Source::Memory).is_err());
    }
}
