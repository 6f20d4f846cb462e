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

/// Runs the body of the fuzz target `name` (one of [`TARGETS`]) on `data`.
///
/// # Panics
///
/// On an unknown target name (and, of course, on any bug the input finds).
pub fn run(name: &str, data: &[u8]) {
    match name {
        "lackey" => reader(Format::Lackey, data),
        "plain" => {
            reader(Format::Plain(Radix::Hex), data);
            reader(Format::Plain(Radix::Decimal), data);
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

/// One format's reader, strict and skipping bad lines, fed `data` as is (no detection).
pub fn reader(format: Format, data: &[u8]) {
    for skip_bad_lines in [false, true] {
        let opts = OpenOptions {
            format: FormatChoice::Exactly(format),
            skip_bad_lines,
        };
        if let Ok(trace) =
            trace::Trace::from_read(Cursor::new(data.to_vec()), Source::Memory, None, &opts)
        {
            drain(trace);
        }
    }
}

/// Compression and format detection ([`trace::Trace::from_read`]), then the detected reader.
pub fn open(data: &[u8]) {
    let opts = OpenOptions::default();
    if let Ok(trace) = trace::Trace::from_read(
        Cursor::new(data.to_vec()),
        Source::Memory,
        Some(data.len() as u64),
        &opts,
    ) {
        let _ = trace.format_name();
        drain(trace);
    }
}

/// The native format's random access path: the index from the trailer, then every block.
pub fn native_index(data: &[u8]) {
    let mut file = Cursor::new(data);
    let Ok((_, index)) = trace::native::read_index(&mut file, &Source::Memory) else {
        return;
    };
    let mut decoder = trace::native::BlockDecoder::new();
    let mut batch = Batch::new();
    let mut total = 0u64;
    for entry in &index.blocks {
        match decoder.read_block(&mut file, &Source::Memory, entry, &mut batch) {
            Ok(n) => total += n as u64,
            Err(_) => break,
        }
        if total > MAX_ACCESSES {
            break;
        }
    }
}

/// The sampling profile format ([`crate::sampling::Profile::read`]) and what is derived from it.
pub fn profile(data: &[u8]) {
    if let Ok(p) = crate::sampling::Profile::read(data, &Source::Memory) {
        let _ = (p.histogram(), p.slot_histograms(), p.dangling_fraction());
    }
}

/// The attribution event log ([`crate::attribution::events::EventReader`]).
pub fn events(data: &[u8]) {
    if let Ok(reader) = crate::attribution::events::EventReader::new(data, Source::Memory) {
        for (i, event) in reader.enumerate() {
            if event.is_err() || i as u64 > MAX_ACCESSES {
                break;
            }
        }
    }
}

fn drain(mut trace: trace::Trace) {
    let mut batch = Batch::new();
    let mut total = 0u64;
    while let Ok(n) = trace.read_batch(&mut batch) {
        if n == 0 || total > MAX_ACCESSES {
            break;
        }
        total += n as u64;
    }
    let _ = trace.diagnostics();
}
