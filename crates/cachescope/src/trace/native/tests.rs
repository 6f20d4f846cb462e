//! Round trips, damage detection and index agreement for the native format.

use std::io::Cursor;

use proptest::prelude::*;

use super::decode::{BLOCK_HEADER_LEN, CODEC_STORED};
use super::*;
use crate::access::{Access, AccessKind};
use crate::batch::Batch;
use crate::error::{Error, Source};
use crate::trace::AccessReader;

fn opts(block_len: usize) -> WriterOptions {
    WriterOptions {
        block_len,
        ..WriterOptions::default()
    }
}

/// Encodes `accesses`, handing them to the writer in batches of `batch_len`.
pub(super) fn encode(accesses: &[Access], block_len: usize, batch_len: usize) -> Vec<u8> {
    let header = Header::new().with_metadata("tool", "test");
    let mut w = Writer::with_options(Vec::new(), header, opts(block_len)).unwrap();
    for chunk in accesses.chunks(batch_len.max(1)) {
        w.write_batch(&chunk.iter().copied().collect()).unwrap();
    }
    let (bytes, counts) = w.finish().unwrap();
    assert_eq!(counts, count(accesses));
    bytes
}

fn count(accesses: &[Access]) -> Counts {
    let mut c = Counts::default();
    accesses.iter().for_each(|a| c.add(a.kind));
    c
}

/// Every batch of a streaming read.
pub(super) fn stream(bytes: &[u8]) -> Result<Vec<Batch>, Error> {
    let mut r = Reader::new(bytes, Source::File("t.cst".into()))?;
    let mut batches = Vec::new();
    let mut b = Batch::new();
    while r.read_batch(&mut b)? > 0 {
        assert!(b.len() <= MAX_BLOCK_LEN);
        batches.push(b.clone());
    }
    assert_eq!(r.read_batch(&mut b)?, 0, "the end is sticky");
    Ok(batches)
}

/// Every block through the index.
pub(super) fn indexed(bytes: &[u8]) -> Result<(Header, BlockIndex, Vec<Batch>), Error> {
    let source = Source::File("t.cst".into());
    let mut file = Cursor::new(bytes);
    let (header, index) = read_index(&mut file, &source)?;
    let mut dec = BlockDecoder::new();
    let mut batches = Vec::new();
    for e in &index.blocks {
        let mut b = Batch::new();
        assert_eq!(
            dec.read_block(&mut file, &source, e, &mut b)?,
            e.count as usize
        );
        batches.push(b);
    }
    Ok((header, index, batches))
}

pub(super) fn flatten(batches: &[Batch]) -> Vec<Access> {
    batches.iter().flat_map(|b| b.iter()).collect()
}

/// How a generated access gets its pc.
#[derive(Clone, Copy, Debug)]
enum Pc {
    None,
    LastInstr,
    Explicit(u64),
}

fn addr() -> impl Strategy<Value = u64> {
    prop_oneof![
        0..4096u64,
        (u64::MAX - 4096)..=u64::MAX,
        any::<u64>(),
        0x40_0000..0x40_1000u64
    ]
}

/// An access whose pc is explicit with relative weight `explicit` (against 10 for none and 10
/// for the last fetch), so traces range from rare to dominant explicit pcs.
fn access(explicit: u32) -> impl Strategy<Value = (AccessKind, u64, u32, Pc)> {
    let kind = prop::sample::select(AccessKind::ALL.to_vec());
    let size = prop_oneof![
        4 => prop::sample::select(vec![1u32, 2, 4, 8]),
        1 => prop::sample::select(vec![0u32, 3, 100, 255, 256, 100_000, u32::MAX]),
        1 => any::<u32>(),
    ];
    let pc = prop_oneof![
        10 => Just(Pc::None),
        10 => Just(Pc::LastInstr),
        explicit => addr().prop_map(Pc::Explicit),
    ];
    (kind, addr(), size, pc)
}

/// Turns generated tuples into accesses, resolving [`Pc::LastInstr`] as lackey does.
fn resolve(raw: &[(AccessKind, u64, u32, Pc)]) -> Vec<Access> {
    let mut last = 0;
    raw.iter()
        .map(|&(kind, addr, size, pc)| {
            if kind == AccessKind::Instr {
                last = addr;
            }
            let pc = match pc {
                Pc::None => 0,
                Pc::LastInstr => last,
                Pc::Explicit(p) => p,
            };
            Access {
                addr,
                size,
                kind,
                pc: (pc != 0).then_some(pc),
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_traces_round_trip(
        raw in (1..60u32).prop_flat_map(|w| prop::collection::vec(access(w), 0..600)),
        block_len in 1..300usize,
        batch_len in 1..700usize,
    ) {
        let accesses = resolve(&raw);
        let bytes = encode(&accesses, block_len, batch_len);
        let batches = stream(&bytes).unwrap();
        prop_assert_eq!(flatten(&batches), accesses.clone());
        // One batch per block: all full but the last.
        let lens: Vec<usize> = batches.iter().map(Batch::len).collect();
        let expected: Vec<usize> = accesses.chunks(block_len).map(<[Access]>::len).collect();
        prop_assert_eq!(lens, expected);

        let (header, index, blocks) = indexed(&bytes).unwrap();
        prop_assert_eq!(header.get("tool"), Some("test"));
        prop_assert_eq!(index.counts, count(&accesses));
        prop_assert_eq!(blocks, batches);
    }

    /// Every access keeps its thread, however blocks and batches cut the runs, and a block
    /// decodes alone (its first accesses' thread is in it).
    #[test]
    fn threads_round_trip(
        raw in prop::collection::vec((access(5), prop_oneof![6 => Just(None), 1 => (1..5u32).prop_map(Some)]), 0..400),
        block_len in 1..120usize,
        batch_len in 1..300usize,
    ) {
        let accesses = resolve(&raw.iter().map(|r| r.0).collect::<Vec<_>>());
        let mut thread = crate::MAIN_THREAD;
        let threaded: Vec<(u32, Access)> = raw.iter().zip(&accesses).map(|(r, &a)| {
            thread = r.1.unwrap_or(thread);
            (thread, a)
        }).collect();
        let mut w = Writer::with_options(Vec::new(), Header::new(), opts(block_len)).unwrap();
        for chunk in threaded.chunks(batch_len) {
            let mut b = Batch::new();
            for &(t, a) in chunk {
                b.set_thread(t);
                b.push(a);
            }
            w.write_batch(&b).unwrap();
        }
        let (bytes, _) = w.finish().unwrap();
        let batches = stream(&bytes).unwrap();
        let read: Vec<(u32, Access)> = batches.iter().flat_map(|b| b.iter_threaded()).collect();
        prop_assert_eq!(&read, &threaded);
        let (_, _, blocks) = indexed(&bytes).unwrap();
        prop_assert_eq!(blocks, batches);
    }

    /// Arbitrary column bytes under a valid checksum must never panic the decoder.
    #[test]
    fn garbage_columns_never_panic(
        n in 1..40usize,
        dir in [0..80u32, 0..8u32, 0..8u32, 0..40u32],
        fill in prop::collection::vec(any::<u8>(), 1..64),
        plausible_meta: bool,
        directory_sums: bool,
    ) {
        let cols = 3 * n + (dir[0] + 4 * dir[1] + dir[2] + dir[3]) as usize;
        let mut raw: Vec<u8> = dir.iter().flat_map(|d| d.to_le_bytes()).collect();
        raw.extend(fill.iter().cycle().take(cols));
        if plausible_meta {
            for m in &mut raw[16..16 + n] {
                *m = ((*m & 15) % 9) | (*m & 0x30) | (((*m >> 6) % 3) << 6);
            }
        }
        if !directory_sums {
            raw[0] ^= 1;
        }
        let bytes = stored_block_file(n, &raw);
        let _ = stream(&bytes);
    }
}

/// A file holding one stored (uncompressed) block with columns `raw`, checksums valid.
pub(super) fn stored_block_file(n: usize, raw: &[u8]) -> Vec<u8> {
    stored_block_file_with(n, raw, 0)
}

/// [`stored_block_file`] with block header flags `flags`.
pub(super) fn stored_block_file_with(n: usize, raw: &[u8], flags: u8) -> Vec<u8> {
    let mut bytes = encode(&[], 1, 1);
    let tail = bytes.split_off(bytes.len() - (index::INDEX_FIXED_LEN + 4 + index::TRAILER_LEN));
    drop(tail);
    let at = bytes.len() as u64;
    let mut head = [0u8; BLOCK_HEADER_LEN];
    head[..4].copy_from_slice(&BLOCK_TAG);
    head[4..8].copy_from_slice(&(n as u32).to_le_bytes());
    head[8..12].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    head[12..16].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    head[16] = CODEC_STORED;
    head[17] = flags;
    let crc = crc32(&[&head[..20], raw]);
    head[20..].copy_from_slice(&crc.to_le_bytes());
    bytes.extend_from_slice(&head);
    bytes.extend_from_slice(raw);
    let entry = BlockEntry {
        offset: at,
        comp_len: raw.len() as u32,
        first: 0,
        count: n as u32,
    };
    let counts = Counts {
        accesses: n as u64,
        loads: n as u64,
        ..Counts::default()
    };
    let index_at = bytes.len() as u64;
    bytes.extend_from_slice(&index::encode(&[entry], &counts, index_at));
    bytes
}

/// A small trace touching every encoding path: both classes, all pc modes, escaped sizes,
/// addresses that wrap.
fn sample() -> Vec<Access> {
    let mut v = Vec::new();
    let mut pc = 0x40_1000u64;
    for i in 0..300u64 {
        pc += 1 + i % 7;
        v.push(Access {
            addr: pc,
            size: 1 + (i % 15) as u32,
            kind: AccessKind::Instr,
            pc: Some(pc),
        });
        let kind = AccessKind::ALL[(i % 3) as usize];
        let addr = if i % 5 == 0 {
            u64::MAX - 8 * i
        } else {
            0x7ff0_0000 + 64 * i
        };
        let size = [4, 8, 3, 100_000, 0][(i % 5) as usize];
        let pc = match i % 4 {
            0 => None,
            1 => Some(0x1234_5678 + i),
            _ => Some(pc),
        };
        v.push(Access {
            addr,
            size,
            kind,
            pc,
        });
    }
    v
}

#[test]
fn multi_block_trace_with_default_blocks() {
    let base = sample();
    let accesses: Vec<Access> = (0..500).flat_map(|_| base.iter().copied()).collect();
    let bytes = encode(&accesses, MAX_BLOCK_LEN, 10_000);
    let batches = stream(&bytes).unwrap();
    assert_eq!(batches.len(), accesses.len().div_ceil(MAX_BLOCK_LEN));
    assert_eq!(flatten(&batches), accesses);
    let (_, index, blocks) = indexed(&bytes).unwrap();
    assert_eq!(index.blocks.len(), batches.len());
    assert_eq!(index.blocks[1].first, MAX_BLOCK_LEN as u64);
    assert_eq!(blocks, batches);
}

#[test]
fn empty_trace_is_valid() {
    let bytes = encode(&[], MAX_BLOCK_LEN, 1);
    assert!(stream(&bytes).unwrap().is_empty());
    let (_, index, _) = indexed(&bytes).unwrap();
    assert_eq!(index, BlockIndex::default());
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = encode(&sample()[..100], 30, 7);
    for cut in 0..bytes.len() {
        let part = &bytes[..cut];
        let e = stream(part).expect_err("a cut stream must not read as complete");
        assert!(matches!(e, Error::Truncated { .. }), "cut at {cut}: {e}");
        assert!(e.to_string().starts_with("t.cst: truncated"), "{e}");
        assert!(indexed(part).is_err(), "cut at {cut}");
    }
}

#[test]
fn every_flipped_byte_is_an_error() {
    let bytes = encode(&sample()[..100], 30, 7);
    for at in 0..bytes.len() {
        for flip in [0x01, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= flip;
            assert!(
                stream(&damaged).is_err(),
                "flip {flip:#x} at {at} went unnoticed"
            );
            assert!(
                indexed(&damaged).is_err(),
                "flip {flip:#x} at {at} went unnoticed"
            );
        }
    }
}

#[test]
fn trailing_bytes_are_an_error() {
    let mut bytes = encode(&sample(), 100, 100);
    bytes.push(0);
    let e = stream(&bytes).unwrap_err();
    assert!(e.to_string().contains("after the end"), "{e}");
}

#[test]
fn header_counts_are_patched_in_place() {
    let accesses = sample();
    // The trace starts after 5 bytes of something else, as inside a container.
    let mut out = Cursor::new(b"junk!".to_vec());
    out.set_position(5);
    let header = Header::new().with_metadata("source", "naïve ✓");
    let mut w = Writer::with_options(out, header, opts(64)).unwrap();
    w.write_batch(&accesses.iter().copied().collect()).unwrap();
    let (out, counts) = w.finish_and_patch_header().unwrap();
    assert_eq!(counts, count(&accesses));
    assert_eq!(out.position(), out.get_ref().len() as u64);
    let bytes = &out.get_ref()[5..];
    let r = Reader::new(bytes, Source::Memory).unwrap();
    assert_eq!(r.header().counts, Some(counts));
    assert_eq!(r.header().get("source"), Some("naïve ✓"));
    assert_eq!(flatten(&stream(bytes).unwrap()), accesses);

    let mut file = out.clone();
    file.set_position(5);
    let (header, index) = read_index(&mut file, &Source::Memory).unwrap();
    assert_eq!(header.counts, Some(counts));
    let header_len = header::encode(&header, None).unwrap().len() as u64;
    assert_eq!(
        index.blocks[0].offset,
        5 + header_len,
        "the first block follows the header"
    );
    let mut b = Batch::new();
    read_block(&mut file, &Source::Memory, &index.blocks[1], &mut b).unwrap();
    assert_eq!(b.iter().collect::<Vec<_>>(), accesses[64..128]);
}

#[test]
fn unpatched_header_has_unknown_counts() {
    let bytes = encode(&sample(), 100, 100);
    assert_eq!(
        Reader::new(&bytes[..], Source::Memory)
            .unwrap()
            .header()
            .counts,
        None
    );
}

#[test]
fn bad_headers_are_reported() {
    let e = Reader::new(&b"CSCOPE\x00\x02whatever"[..], Source::Memory).unwrap_err();
    assert!(e.to_string().contains("wrong magic"), "{e}");
    let mut bytes = encode(&[], 1, 1);
    bytes[8] = 5;
    let e = Reader::new(&bytes[..], Source::Memory).unwrap_err();
    assert!(e.to_string().contains("version 5 is not supported"), "{e}");

    let long = Header::new().with_metadata("k", "v".repeat(MAX_HEADER_LEN));
    assert!(matches!(
        Writer::new(Vec::new(), long),
        Err(Error::InvalidParameter { .. })
    ));
    let odd = Header {
        line_size: 48,
        ..Header::new()
    };
    assert!(matches!(
        Writer::new(Vec::new(), odd),
        Err(Error::InvalidParameter { .. })
    ));
    let w = Writer::with_options(Vec::new(), Header::new(), opts(MAX_BLOCK_LEN + 1));
    assert!(w.is_err());
}

#[test]
fn meta_bytes_pack_kind_length_and_mode() {
    // Pins the bit layout documented in docs/native-format.md.
    let accesses = [
        Access {
            addr: 0x400,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(0x400),
        },
        Access {
            addr: 0x10,
            size: 8,
            kind: AccessKind::Store,
            pc: Some(0x400),
        },
        Access {
            addr: 0x10,
            size: 300,
            kind: AccessKind::Load,
            pc: Some(0x9),
        },
    ];
    let mut enc = encode::BlockEncoder::default();
    for a in accesses {
        enc.push(a.addr, a.size, a.kind, a.pc.unwrap_or(0));
    }
    let mut raw = Vec::new();
    enc.take(&mut raw);
    #[rustfmt::skip]
    let expected = [
        4, 0, 0, 0,  1, 0, 0, 0,  1, 0, 0, 0,  1, 0, 0, 0, // directory: Σ L, E, X, Σ M
        0x82, // meta: delta length 2 | kind code 0 (3 - instr) << 4 | pc = last fetch (0x80)
        0xa1, //       delta length 1 | kind code 2 (3 - store) << 4 | pc = last fetch
        0x71, //       delta length 1 | kind code 3 (3 - load) << 4 | explicit pc (0x40)
        4, 8, 0,                                          // sizes
        0, 1, 2,                                          // slots: fetches, one per (pc, operand)
        0x00, 0x04, 0x10, 0x10,                           // 0x400 - 0, then 0x10 - 0 twice
        44, 1, 0, 0,                                      // escaped size 300
        1,                                                // one explicit pc, of 1 byte
        0x09,                                             // 9 - 0
    ];
    assert_eq!(raw, expected);
}

/// A pipe-like reader: at most `step` bytes per call, and an `Interrupted` error every third.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
    calls: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls % 3 == 0 {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn short_reads_and_interruptions_are_harmless() {
    let accesses = sample();
    let bytes = encode(&accesses, 50, 64);
    for step in [1, 7, 4096] {
        let input = Trickle {
            bytes: &bytes,
            step,
            calls: 0,
        };
        let mut r = Reader::new(input, Source::Stdin).unwrap();
        let mut got = Vec::new();
        let mut b = Batch::new();
        while r.read_batch(&mut b).unwrap() > 0 {
            got.extend(b.iter());
        }
        assert_eq!(got, accesses, "step {step}");
        assert_eq!(r.counts(), Some(count(&accesses)), "the index's counts");
        assert_eq!(r.accesses_read(), accesses.len() as u64);
    }
}

#[test]
fn damage_is_reported_with_the_file_and_the_block() {
    let bytes = encode(&sample(), 100, 100);
    let source = Source::File("t.cst".into());
    let (_, index) = read_index(Cursor::new(&bytes), &source).unwrap();
    let second = index.blocks[1];
    let mut damaged = bytes.clone();
    damaged[second.offset as usize + BLOCK_HEADER_LEN + 5] ^= 0x10;

    let e = stream(&damaged).unwrap_err();
    let expected = format!(
        "t.cst: corrupt: block at byte {}: checksum mismatch",
        second.offset
    );
    assert_eq!(e.to_string(), expected);

    // Random access: the index is intact, the block is not; the batch is left empty.
    let mut file = Cursor::new(&damaged);
    let (_, index) = read_index(&mut file, &source).unwrap();
    let mut b: Batch = sample().into_iter().collect();
    let e = read_block(&mut file, &source, &index.blocks[1], &mut b).unwrap_err();
    assert_eq!(e.to_string(), expected);
    assert!(b.is_empty());
    // The reader stops for good after an error.
    let mut r = Reader::new(&damaged[..], source).unwrap();
    let mut b = Batch::new();
    assert_eq!(r.read_batch(&mut b).unwrap(), 100);
    assert!(r.read_batch(&mut b).is_err());
    assert!(r.read_batch(&mut b).is_err());
}

/// The slot policy at work: a loop of strided operands compresses to a small fraction of a
/// byte per access. Guards the predictor against regressions that round trips cannot see.
#[test]
fn loops_compress_to_a_fraction_of_a_byte() {
    let mut accesses = Vec::new();
    for i in 0..200_000u64 {
        let pc = 0x40_1000 + 4 * (i % 8);
        accesses.push(Access {
            addr: pc,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(pc),
        });
        let addr = match i % 8 {
            0 | 3 => 0x5555_0000_0000 + 8 * (i / 8),
            1 => 0x5556_0000_0000 + 16 * (i / 8),
            5 => 0x7ffe_0000_1000 - 8 * (i % 3),
            _ => continue,
        };
        accesses.push(Access {
            addr,
            size: 8,
            kind: AccessKind::Load,
            pc: Some(pc),
        });
    }
    let bytes = encode(&accesses, MAX_BLOCK_LEN, 4096);
    let per_access = bytes.len() as f64 / accesses.len() as f64;
    assert!(per_access < 0.05, "{per_access:.3} bytes per access");
    assert_eq!(flatten(&stream(&bytes).unwrap()), accesses);
}

/// Call events survive the round trip: at block boundaries, after a block's last access, with
/// threads other than their access's, through the streaming and the indexed readers.
#[test]
fn call_events_round_trip() {
    use crate::batch::{CallOp, EnterKind};
    let enter = |key, kind| CallOp::Enter { key, kind };
    let mut b = Batch::new();
    b.push_call(1, enter(0x40_1000, EnterKind::Root));
    for i in 0..10u64 {
        let pc = 0x40_1000 + 4 * i;
        b.push(Access {
            addr: pc,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(pc),
        });
        if i % 3 == 0 {
            b.push_call(1, enter(0x40_2000 + i, EnterKind::Call));
        }
        b.push(Access::load(0x7000 + 8 * i, 8));
        if i % 3 == 2 {
            b.push_call(1, CallOp::Leave { frames: 1 });
        }
        if i == 5 {
            // A return just before a switch: the event is thread 1's at thread 2's access.
            b.push_call(1, CallOp::Leave { frames: 2 });
            b.set_thread(2);
            b.push_call(2, enter(0x7f00_0000_1234, EnterKind::Jump));
            b.push_call(2, enter(11, EnterKind::Signal));
        }
    }
    b.push_call(2, CallOp::Reset);
    for block_len in [1, 3, 7, 64] {
        let mut w = Writer::with_options(Vec::new(), Header::new(), opts(block_len)).unwrap();
        w.write_batch(&b).unwrap();
        let (bytes, _) = w.finish().unwrap();
        for batches in [stream(&bytes).unwrap(), indexed(&bytes).unwrap().2] {
            let mut all = Batch::new();
            for part in &batches {
                all.extend_from_range(part, 0..part.len());
            }
            assert_eq!(all, b, "block length {block_len}");
        }
    }
}

/// A damaged call section is an error naming the block, never a panic or wrong events.
#[test]
fn damaged_call_events_are_errors() {
    use crate::batch::{CallOp, EnterKind};
    let mut b = Batch::new();
    b.push(Access::load(0x1000, 8));
    b.push_call(
        1,
        CallOp::Enter {
            key: 0x40_0000,
            kind: EnterKind::Call,
        },
    );
    b.push(Access::load(0x1008, 8));
    let stored = WriterOptions {
        level: 0,
        ..opts(64)
    };
    let mut w = Writer::with_options(Vec::new(), Header::new(), stored).unwrap();
    w.write_batch(&b).unwrap();
    let (bytes, _) = w.finish().unwrap();
    assert_eq!(stream(&bytes).unwrap()[0], b);
    // Every single-byte change of the block's payload is caught (by its checksum at least).
    let start = bytes.windows(4).position(|w| w == b"BLK\0").unwrap();
    for at in start + BLOCK_HEADER_LEN..start + 60 {
        let mut bad = bytes.clone();
        bad[at] ^= 0x55;
        assert!(stream(&bad).is_err(), "byte {at}");
    }
}
