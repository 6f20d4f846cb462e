//! The kept version-3 sample, `tests/fixtures/native-v3.cst`, must decode to exactly the
//! accesses below, forever (see `native_fixture.rs` for versions 1 and 2). Version 3 writes
//! the runs of instruction fetches of cachescope's Valgrind tool as run rows, named in each
//! block's run dictionary; the sample is written from a tool stream of three runs (one with a
//! jump inside), their data references and two thread switches, in 100-access blocks, so
//! runs are split across blocks and blocks start inside other threads' runs.

use std::fs::File;
use std::path::PathBuf;

use cachescope::record::tool::ToolReader;
use cachescope::trace::AccessReader;
use cachescope::trace::native::{BlockDecoder, Header, Reader, Writer, WriterOptions, read_index};
use cachescope::{AccessKind, Batch, Source};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native-v3.cst")
}

/// The tool stream's header word (the current stream version, one thread to start).
const STREAM_HEADER: u64 = (0xE << 60) | cachescope::record::tool::VERSION | (1 << 16);

/// An access as the tests compare them: (thread, address, size, kind, pc).
type Expected = (u32, u64, u32, AccessKind, u64);

/// The runs: fetches as (address, size).
fn runs() -> [Vec<(u64, u64)>; 3] {
    [
        vec![(0x40_1000, 3), (0x40_1003, 7), (0x40_100a, 1)],
        vec![(0x40_2000, 2), (0x40_3000, 15)],
        vec![(0x40_100b, 4)],
    ]
}

/// The tool stream of the sample and, computed from the same loop independently of any
/// decoder, the accesses it stands for.
fn stream() -> (Vec<u8>, Vec<Expected>) {
    let mut words = vec![STREAM_HEADER];
    let mut expect = Vec::new();
    let runs = runs();
    let mut defined = [false; 3];
    let mut thread = 1;
    for iter in 0..40u64 {
        let switch = match iter {
            20 => Some(2),
            30 => Some(1),
            _ => None,
        };
        if let Some(t) = switch {
            words.push((0x1 << 60) | t);
            thread = t as u32;
        }
        // Per run: its data references as (kind, address, size).
        let data: [Vec<(u64, u64, u64)>; 3] = [
            vec![(0, 0x5555_0000 + 8 * iter, 8), (2, 0x7ffd_f000, 4)],
            vec![(1, 0x5556_0000 + 64 * iter, 2)],
            vec![],
        ];
        for (id, fetches) in runs.iter().enumerate() {
            if !defined[id] {
                words.push((0x8 << 60) | (1 + fetches.len() as u64));
                words.push(id as u64);
                words.extend(fetches.iter().map(|&(a, s)| a | s << 48 | 3 << 58));
                defined[id] = true;
            }
            words.push((0x7 << 60) | id as u64);
            for &(a, s) in fetches {
                expect.push((thread, a, s as u32, AccessKind::Instr, a));
            }
            let pc = fetches.last().unwrap().0;
            for &(kind, addr, size) in &data[id] {
                words.push(addr | size << 48 | kind << 58);
                expect.push((
                    thread,
                    addr,
                    size as u32,
                    AccessKind::ALL[kind as usize],
                    pc,
                ));
            }
        }
    }
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    (words.iter().flat_map(|w| w.to_le_bytes()).collect(), expect)
}

fn header() -> Header {
    Header::new()
        .with_metadata("source", "fixture")
        .with_metadata("tool", "cachescope tests/native_fixture_v3.rs")
}

/// Writes the fixture as `record` writes a trace. Run only to create it:
/// `cargo test -p cachescope --test native_fixture_v3 -- --ignored write_fixture`.
#[test]
#[ignore = "writes tests/fixtures/native-v3.cst, which must never change"]
fn write_fixture() {
    let opts = WriterOptions {
        block_len: 100,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(File::create(fixture()).unwrap(), header(), opts).unwrap();
    let (bytes, _) = stream();
    ToolReader::new(&bytes[..], Source::Memory)
        .write_native(&mut w, |_| {})
        .unwrap();
    w.finish_and_patch_header().unwrap();
}

fn accesses(b: &Batch) -> impl Iterator<Item = Expected> + '_ {
    (0..b.len()).map(|i| (b.thread_at(i), b.addrs[i], b.sizes[i], b.kinds[i], b.pcs[i]))
}

#[test]
fn fixture_v3_decodes_exactly() {
    let bytes = std::fs::read(fixture()).unwrap();
    // The kept bytes: a different length means the file was regenerated, which must not be.
    assert_eq!(bytes.len(), FIXTURE_LEN);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    let (_, expected) = stream();
    assert_eq!(expected.len(), 360);

    let source = Source::File(fixture());
    let mut r = Reader::new(File::open(fixture()).unwrap(), source.clone()).unwrap();
    let (mut got, mut b) = (Vec::new(), Batch::new());
    while r.read_batch(&mut b).unwrap() > 0 {
        got.extend(accesses(&b));
    }
    assert_eq!(got, expected);

    // Every block has run rows (byte 17 of its header), and decodes alone, in any order.
    let mut file = File::open(fixture()).unwrap();
    let (_, index) = read_index(&mut file, &source).unwrap();
    assert_eq!(index.blocks.len(), 4);
    let mut dec = BlockDecoder::new();
    for e in index.blocks.iter().rev() {
        assert_eq!(bytes[e.offset as usize + 17], 1, "block at {}", e.first);
        let n = dec.read_block(&mut file, &source, e, &mut b).unwrap();
        let first = e.first as usize;
        assert_eq!(accesses(&b).collect::<Vec<_>>(), expected[first..first + n]);
    }
}

/// The fixture's length in bytes.
const FIXTURE_LEN: usize = 1087;
