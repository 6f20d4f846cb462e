//! The kept version-1 sample, `tests/fixtures/native-v1.cst`, must decode to exactly the
//! accesses below, forever: a change to the format or the decoder that breaks reading old files
//! fails here. Never regenerate the file; a new format version adds a sample next to it, as
//! version 2 added `native-v2.cst` (the same accesses by three threads, see [`thread_of`]) and
//! version 3 `native-v3.cst` (runs of fetches as run rows, `native_fixture_v3.rs`).
//!
//! The file was written once by `write_fixture` (ignored; run it only to create a fixture for a
//! new version) with 100-access blocks, so it has four blocks and every encoding path: fetch and
//! per-operand prediction slots, all pc modes, explicit pcs at block starts, escaped sizes,
//! deltas that wrap around 0, zstd blocks and a stored one.

use std::fs::File;
use std::path::PathBuf;

use cachescope::trace::AccessReader;
use cachescope::trace::native::{
    BlockDecoder, Counts, Header, MAGIC, Reader, VERSION, Writer, WriterOptions, read_index,
};
use cachescope::{Access, AccessKind, Batch, Source};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native-v1.cst")
}

/// A data access of the loop: kind, base address, size.
type Operand = (AccessKind, u64, u32);

/// The fixture's accesses, computed independently of any encoder.
fn expected() -> Vec<Access> {
    let mut v = Vec::new();
    // Thirty passes over a small loop, lackey style: each fetch is its own pc, and its data
    // accesses carry it. Per instruction: pc, length, data accesses.
    let body: [(u64, u32, &[Operand]); 5] = [
        (0x40_1000, 3, &[(AccessKind::Load, 0x7ffd_f000, 8)]),
        (
            0x40_1003,
            7,
            &[
                (AccessKind::Load, 0x5555_0000, 4),
                (AccessKind::Store, 0x5556_0000, 4),
            ],
        ),
        (0x40_100a, 1, &[]),
        (0x40_100b, 15, &[(AccessKind::Modify, 0x7ffd_f008, 2)]),
        (0x40_101a, 2, &[]),
    ];
    for iter in 0..30u64 {
        for &(pc, size, data) in &body {
            v.push(Access {
                addr: pc,
                size,
                kind: AccessKind::Instr,
                pc: Some(pc),
            });
            for &(kind, base, size) in data {
                let stride = if base >> 28 == 7 { 0 } else { u64::from(size) };
                let addr = base + iter * stride;
                v.push(Access {
                    addr,
                    size,
                    kind,
                    pc: Some(pc),
                });
            }
        }
    }
    // Edge cases: extreme addresses and sizes, pcs that are absent, explicit or extreme.
    let sizes = [0, 1, 3, 16, 255, 256, 100_000, u32::MAX];
    let addrs = [
        0,
        u64::MAX,
        1,
        u64::MAX - 7,
        0x8000_0000_0000_0000,
        0x7fff_ffff_ffff_ffff,
    ];
    for i in 0..30u64 {
        let kind = AccessKind::ALL[(i % 4) as usize];
        let addr = addrs[(i % 6) as usize].wrapping_add(i / 6);
        let pc = match i % 5 {
            0 => None,
            1 => Some(u64::MAX - i),
            2 => Some(0x40_2000 + 4 * i),
            _ if kind == AccessKind::Instr => Some(addr),
            _ => None,
        };
        v.push(Access {
            addr,
            size: sizes[(i % 8) as usize],
            kind,
            pc,
        });
    }
    // A block of noise, which zstd cannot shrink: stored as is (codec 0).
    for i in 0..100u64 {
        let r = splitmix64(i);
        let pc = (r % 3 != 0).then(|| splitmix64(r));
        let kind = AccessKind::ALL[(r >> 60) as usize % 4];
        v.push(Access {
            addr: splitmix64(r ^ 1),
            size: (r >> 8) as u32,
            kind,
            pc,
        });
    }
    v
}

/// A fixed 64-bit mixer (SplitMix64's output function), so the noise is defined here.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const BLOCK_LEN: usize = 100;

fn expected_header() -> Header {
    Header::new()
        .with_metadata("source", "fixture")
        .with_metadata("source_format", "synthetic")
        .with_metadata("tool", "cachescope tests/native_fixture.rs")
        .with_metadata("note", "größe ✓")
}

/// Writes the fixture. Run only to create the sample of a new version:
/// `cargo test -p cachescope --test native_fixture -- --ignored write_fixture`.
#[test]
#[ignore = "writes tests/fixtures/native-v1.cst, which must never change"]
fn write_fixture() {
    let out = File::create(fixture()).unwrap();
    let opts = WriterOptions {
        block_len: BLOCK_LEN,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(out, expected_header(), opts).unwrap();
    w.write_batch(&expected().into_iter().collect()).unwrap();
    w.finish_and_patch_header().unwrap();
}

/// Today's writer still makes the fixture byte for byte: blocks compressed on the writer's
/// helper thread come out in order and the same as compressed inline. (The fixture itself
/// never changes; if the encoder's choices ever do, this test may go, the decoding ones stay.)
#[test]
fn writer_reproduces_the_fixture() {
    let opts = WriterOptions {
        block_len: BLOCK_LEN,
        ..WriterOptions::default()
    };
    let mut w =
        Writer::with_options(std::io::Cursor::new(Vec::new()), expected_header(), opts).unwrap();
    for chunk in expected().chunks(37) {
        w.write_batch(&chunk.iter().copied().collect()).unwrap();
    }
    let (out, counts) = w.finish_and_patch_header().unwrap();
    assert_eq!(counts, count(&expected()));
    // The writer writes version 3, whose blocks without run rows and of one thread are
    // version 1's: everything after the header is the same.
    let (ours, kept) = (out.into_inner(), std::fs::read(fixture()).unwrap());
    let header_len = |b: &[u8]| u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    assert_eq!(u32::from_le_bytes(ours[8..12].try_into().unwrap()), VERSION);
    assert_eq!(header_len(&ours), header_len(&kept));
    assert!(ours[header_len(&ours)..] == kept[header_len(&kept)..]);
}

fn count(accesses: &[Access]) -> Counts {
    let mut c = Counts::default();
    accesses.iter().for_each(|a| c.add(a.kind));
    c
}

#[test]
fn fixture_decodes_exactly() {
    let bytes = std::fs::read(fixture()).unwrap();
    assert!(bytes.starts_with(&MAGIC));
    // The kept bytes: a different length means the file was regenerated, which must not be.
    assert_eq!(bytes.len(), 2967);
    let expected = expected();
    assert_eq!(expected.len(), 400);

    let source = Source::File(fixture());
    let mut r = Reader::new(File::open(fixture()).unwrap(), source.clone()).unwrap();
    let header = r.header().clone();
    assert_eq!(header.version, 1);
    assert_eq!(header.line_size, 64);
    assert_eq!(header.metadata, expected_header().metadata);
    assert_eq!(header.counts, Some(count(&expected)));

    let (mut got, mut lens) = (Vec::new(), Vec::new());
    let mut b = Batch::new();
    while r.read_batch(&mut b).unwrap() > 0 {
        // Version 1 has no threads: every access is the main thread's.
        assert_eq!(b.single_thread(), Some(cachescope::MAIN_THREAD));
        lens.push(b.len());
        got.extend(b.iter());
    }
    assert_eq!(lens, [100, 100, 100, 100]);
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "access {i}");
    }
    assert_eq!(got.len(), expected.len());
    assert_eq!(r.counts(), Some(count(&expected)));
}

#[test]
fn fixture_index_agrees() {
    let source = Source::File(fixture());
    let mut file = File::open(fixture()).unwrap();
    let (header, index) = read_index(&mut file, &source).unwrap();
    assert_eq!(header.counts, Some(index.counts));
    let firsts: Vec<u64> = index.blocks.iter().map(|b| b.first).collect();
    assert_eq!(firsts, [0, 100, 200, 300]);
    // Byte 16 of a block header is its codec: zstd (1) for the first three, stored (0) for the
    // noise.
    let bytes = std::fs::read(fixture()).unwrap();
    let codecs: Vec<u8> = index
        .blocks
        .iter()
        .map(|b| bytes[b.offset as usize + 16])
        .collect();
    assert_eq!(codecs, [1, 1, 1, 0]);

    // Blocks decode independently, in any order.
    let expected = expected();
    let mut dec = BlockDecoder::new();
    let mut b = Batch::new();
    for e in index.blocks.iter().rev() {
        let n = dec.read_block(&mut file, &source, e, &mut b).unwrap();
        let first = e.first as usize;
        assert_eq!(b.iter().collect::<Vec<_>>(), expected[first..first + n]);
    }
}

fn fixture_v2() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native-v2.cst")
}

/// The thread of access `i` in `native-v2.cst`: runs that start inside blocks and span block
/// boundaries, a return to the main thread, and a block that starts in another thread's run.
fn thread_of(i: usize) -> u32 {
    match i {
        0..50 => 1,
        50..130 => 2,
        130..220 => 1,
        220..300 => 3,
        _ => 2,
    }
}

fn threaded_batch() -> Batch {
    let mut b = Batch::new();
    for (i, a) in expected().into_iter().enumerate() {
        b.set_thread(thread_of(i));
        b.push(a);
    }
    b
}

/// Writes the version-2 fixture. Run only to create it:
/// `cargo test -p cachescope --test native_fixture -- --ignored write_fixture_v2`.
#[test]
#[ignore = "writes tests/fixtures/native-v2.cst, which must never change"]
fn write_fixture_v2() {
    let out = File::create(fixture_v2()).unwrap();
    let opts = WriterOptions {
        block_len: BLOCK_LEN,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(out, expected_header(), opts).unwrap();
    w.write_batch(&threaded_batch()).unwrap();
    w.finish_and_patch_header().unwrap();
}

#[test]
fn fixture_v2_decodes_exactly_with_its_threads() {
    let bytes = std::fs::read(fixture_v2()).unwrap();
    assert_eq!(bytes.len(), 2989);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
    let source = Source::File(fixture_v2());
    let mut r = Reader::new(File::open(fixture_v2()).unwrap(), source.clone()).unwrap();
    let mut got = Vec::new();
    let mut b = Batch::new();
    while r.read_batch(&mut b).unwrap() > 0 {
        got.extend(b.iter_threaded());
    }
    let want: Vec<(u32, Access)> = threaded_batch().iter_threaded().collect();
    assert_eq!(got, want);
    // Each block alone, through the index, knows whose accesses it starts with.
    let mut file = File::open(fixture_v2()).unwrap();
    let (_, index) = read_index(&mut file, &source).unwrap();
    let mut dec = BlockDecoder::new();
    for e in &index.blocks {
        dec.read_block(&mut file, &source, e, &mut b).unwrap();
        assert_eq!(
            b.thread_at(0),
            thread_of(e.first as usize),
            "block at {}",
            e.first
        );
    }
}
