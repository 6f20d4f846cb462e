//! Bodies of the fuzz targets in `fuzz/` (cargo-fuzz, nightly) and of the corpus replay test
//! (`tests/reliability_corpus.rs`, stable): each feeds arbitrary bytes to one parser and
//! consumes everything it yields. A parser may reject the bytes with an [`Error`](crate::Error);
//! it must never panic, hang or allocate without bound. Not a stable API.

use std::io::Cursor;

use crate::batch::Batch;
use crate::error::Source;
use crate::trace::{self, Format, FormatChoice, OpenOptions, Radix};

/// Stop reading after this many accesses: a few KiB of compressed input can expand to
/// gigabytes, and reading that proves nothing a shorter read does not.
const MAX_ACCESSES: u64 = 1 << 20;

/// The fuzz targets, by the name of their directory under `fuzz/corpus/`.
pub const TARGETS: [&str; 10] = [
    "lackey",
    "plain",
    "din",
    "binary",
    "champsim",
    "native",
    "open",
    "native_index",
    "profile",
    "events",
];

/// What one run of a target read, so that a replay can show it parsed something: the items
/// it yielded (accesses, events, a profile's samples) and whether it ended on an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Accesses, events or samples read before the end or the error.
    pub items: u64,
    /// The input was refused, at once or part way.
    pub error: bool,
}

impl Outcome {
    fn of(items: u64, error: bool) -> Outcome {
        Outcome { items, error }
    }
}

/// Runs the body of the fuzz target `name` (one of [`TARGETS`]) on `data`.
///
/// # Panics
///
/// On an unknown target name (and, of course, on any bug the input finds).
pub fn run(name: &str, data: &[u8]) {
    let _ = replay(name, data);
}

/// [`run`], saying what the target read: for `plain`, the hexadecimal reading's; for the
/// readers, the strict reading's (each is also read skipping bad lines).
///
/// # Panics
///
/// As [`run`].
pub fn replay(name: &str, data: &[u8]) -> Outcome {
    match name {
        "lackey" => reader(Format::Lackey, data),
        "plain" => {
            let hex = reader(Format::Plain(Radix::Hex), data);
            reader(Format::Plain(Radix::Decimal), data);
            hex
        }
        "din" => reader(Format::Din, data),
        "binary" => reader(Format::Binary, data),
        "champsim" => reader(Format::Champsim, data),
        "native" => reader(Format::Native, data),
        "open" => open(data),
        "native_index" => native_index(data),
        "profile" => profile(data),
        "events" => events(data),
        _ => panic!("no fuzz target named {name:?}"),
    }
}

/// One format's reader, strict and skipping bad lines, fed `data` as is (no detection); the
/// strict reading's outcome.
pub fn reader(format: Format, data: &[u8]) -> Outcome {
    let mut strict = None;
    for skip_bad_lines in [false, true] {
        let opts = OpenOptions {
            format: FormatChoice::Exactly(format),
            skip_bad_lines,
        };
        let outcome = match trace::Trace::from_read(
            Cursor::new(data.to_vec()),
            Source::Memory,
            None,
            &opts,
        ) {
            Ok(trace) => drain(trace),
            Err(_) => Outcome::of(0, true),
        };
        strict.get_or_insert(outcome);
    }
    strict.unwrap_or_default()
}

/// Compression and format detection ([`trace::Trace::from_read`]), then the detected reader.
pub fn open(data: &[u8]) -> Outcome {
    let opts = OpenOptions::default();
    match trace::Trace::from_read(
        Cursor::new(data.to_vec()),
        Source::Memory,
        Some(data.len() as u64),
        &opts,
    ) {
        Ok(trace) => {
            let _ = trace.format_name();
            drain(trace)
        }
        Err(_) => Outcome::of(0, true),
    }
}

/// The native format's random access path: the index from the trailer, then every block.
pub fn native_index(data: &[u8]) -> Outcome {
    let mut file = Cursor::new(data);
    let Ok((_, index)) = trace::native::read_index(&mut file, &Source::Memory) else {
        return Outcome::of(0, true);
    };
    let mut decoder = trace::native::BlockDecoder::new();
    let mut batch = Batch::new();
    let mut total = 0u64;
    for entry in &index.blocks {
        match decoder.read_block(&mut file, &Source::Memory, entry, &mut batch) {
            Ok(n) => total += n as u64,
            Err(_) => return Outcome::of(total, true),
        }
        if total > MAX_ACCESSES {
            break;
        }
    }
    Outcome::of(total, false)
}

/// The sampling profile format ([`crate::sampling::Profile::read`]) and what is derived from it.
pub fn profile(data: &[u8]) -> Outcome {
    match crate::sampling::Profile::read(data, &Source::Memory) {
        Ok(p) => {
            let _ = (p.histogram(), p.slot_histograms(), p.dangling_fraction());
            Outcome::of(p.samples().len() as u64, false)
        }
        Err(_) => Outcome::of(0, true),
    }
}

/// The attribution event log ([`crate::attribution::events::EventReader`]).
pub fn events(data: &[u8]) -> Outcome {
    let Ok(reader) = crate::attribution::events::EventReader::new(data, Source::Memory) else {
        return Outcome::of(0, true);
    };
    let mut read = 0u64;
    for event in reader {
        if event.is_err() {
            return Outcome::of(read, true);
        }
        read += 1;
        if read > MAX_ACCESSES {
            break;
        }
    }
    Outcome::of(read, false)
}

fn drain(mut trace: trace::Trace) -> Outcome {
    let mut batch = Batch::new();
    let mut total = 0u64;
    let mut error = false;
    loop {
        match trace.read_batch(&mut batch) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(_) => {
                error = true;
                break;
            }
        }
        if total > MAX_ACCESSES {
            break;
        }
    }
    let _ = trace.diagnostics();
    Outcome::of(total, error)
}
