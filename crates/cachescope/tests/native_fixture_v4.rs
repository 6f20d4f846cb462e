//! Call events from the tool's stream to a batch and through a native trace, and the kept
//! version-4 sample, `tests/fixtures/native-v4.cst`, which must decode to exactly the accesses
//! and call events below, forever (versions 1 to 3: `native_fixture.rs`,
//! `native_fixture_v3.rs`). The sample is written from a tool stream of two threads whose
//! functions are entered (by calls, a jump, a PLT stub, a signal, as roots) and left (one
//! frame, several), in 64-access blocks, so events fall on block boundaries, after a block's
//! last access and at thread switches.

use std::fs::File;
use std::path::PathBuf;

use cachescope::batch::{CallEvent, CallOp, EnterKind};
use cachescope::record::tool::{ToolReader, VERSION};
use cachescope::trace::AccessReader;
use cachescope::trace::native::{Header, Reader, Writer, WriterOptions};
use cachescope::{AccessKind, Batch, Source};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native-v4.cst")
}

/// The stream's header: instruction records and call events on.
const STREAM_HEADER: u64 = (0xE << 60) | VERSION | (1 << 16) | (1 << 19);

/// What a stream stands for: (thread, address, size, kind, pc) per access, and each call
/// event with the number of accesses before it.
type Expected = (
    Vec<(u32, u64, u32, AccessKind, u64)>,
    Vec<(u64, u32, CallOp)>,
);

fn enter(key: u64, kind: u64) -> u64 {
    (0x9 << 60) | (kind << 48) | key
}

/// The tool stream and, from the same loop, what it stands for.
fn stream() -> (Vec<u8>, Expected) {
    let mut words = vec![STREAM_HEADER];
    let (mut accesses, mut calls) = (Vec::new(), Vec::new());
    let mut thread = 1u32;
    let mut call = |words: &mut Vec<u64>, accesses: &Vec<_>, thread: u32, w: u64, op| {
        words.push(w);
        calls.push((accesses.len() as u64, thread, op));
    };
    let root = |key| CallOp::Enter {
        key,
        kind: EnterKind::Root,
    };
    call(
        &mut words,
        &accesses,
        1,
        enter(0x40_0000, 3),
        root(0x40_0000),
    );
    for i in 0..60u64 {
        if i == 30 {
            words.push((0x1 << 60) | 2);
            thread = 2;
            call(
                &mut words,
                &accesses,
                2,
                enter(0x40_0100, 3),
                root(0x40_0100),
            );
        }
        let pc = 0x40_1000 + 16 * (i % 7);
        words.push(pc | 5 << 48 | 3 << 58);
        accesses.push((thread, pc, 5, AccessKind::Instr, pc));
        let data = 0x7ffc_0000 + 8 * i;
        words.push(data | 8 << 48 | (i % 3) << 58);
        accesses.push((thread, data, 8, AccessKind::ALL[(i % 3) as usize], pc));
        let (key, kind, enter_kind) = match i % 5 {
            0 => (0x40_2000 + i, 0, EnterKind::Call),
            1 => (0x7f12_3456_7000, 1, EnterKind::Jump),
            2 => (0x40_1030, 4, EnterKind::Plt),
            3 => (10, 2, EnterKind::Signal),
            _ => {
                // Leave what this round entered: two frames, then two more.
                call(
                    &mut words,
                    &accesses,
                    thread,
                    (0xA << 60) | 2,
                    CallOp::Leave { frames: 2 },
                );
                call(
                    &mut words,
                    &accesses,
                    thread,
                    (0xA << 60) | 2,
                    CallOp::Leave { frames: 2 },
                );
                continue;
            }
        };
        call(
            &mut words,
            &accesses,
            thread,
            enter(key, kind),
            CallOp::Enter {
                key,
                kind: enter_kind,
            },
        );
    }
    call(&mut words, &accesses, thread, 0xA << 60, CallOp::Reset);
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    (
        words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        (accesses, calls),
    )
}

/// Everything `reader` gives, in the form of [`Expected`].
fn read_all(reader: &mut dyn AccessReader) -> Expected {
    let (mut accesses, mut calls, mut b) = (Vec::new(), Vec::new(), Batch::new());
    while reader.read_batch(&mut b).unwrap() > 0 {
        let base = accesses.len() as u64;
        calls.extend(
            b.calls()
                .iter()
                .map(|e: &CallEvent| (base + u64::from(e.at), e.thread, e.op)),
        );
        accesses.extend(
            (0..b.len()).map(|i| (b.thread_at(i), b.addrs[i], b.sizes[i], b.kinds[i], b.pcs[i])),
        );
    }
    (accesses, calls)
}

#[test]
fn the_tool_streams_call_events_reach_the_batches() {
    let (bytes, expected) = stream();
    let mut r = ToolReader::new(&bytes[..], Source::Memory);
    assert_eq!(read_all(&mut r), expected);
    assert!(r.has_calls());
}

fn header() -> Header {
    Header::new()
        .with_metadata("source", "fixture")
        .with_metadata("tool", "cachescope tests/native_fixture_v4.rs")
}

/// Writes the fixture as `record` writes a trace. Run only to create it:
/// `cargo test -p cachescope --test native_fixture_v4 -- --ignored write_fixture`.
#[test]
#[ignore = "writes tests/fixtures/native-v4.cst, which must never change"]
fn write_fixture() {
    let opts = WriterOptions {
        block_len: 64,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(File::create(fixture()).unwrap(), header(), opts).unwrap();
    let (bytes, _) = stream();
    ToolReader::new(&bytes[..], Source::Memory)
        .write_native(&mut w, |_| {})
        .unwrap();
    w.finish_and_patch_header().unwrap();
}

#[test]
fn fixture_v4_decodes_exactly() {
    let bytes = std::fs::read(fixture()).unwrap();
    // The kept bytes: a different length means the file was regenerated, which must not be.
    assert_eq!(bytes.len(), FIXTURE_LEN);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 4);
    let (_, expected) = stream();
    assert_eq!((expected.0.len(), expected.1.len()), (120, 75));
    let mut r = Reader::new(File::open(fixture()).unwrap(), Source::File(fixture())).unwrap();
    assert_eq!(read_all(&mut r), expected);
}

/// The fixture's length in bytes.
const FIXTURE_LEN: usize = 675;
