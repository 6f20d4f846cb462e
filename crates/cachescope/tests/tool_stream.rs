//! The tool's record stream decoder against a naive one, on random streams read in random
//! pieces (as a pipe returns them): references of every kind, sign-extended addresses, thread
//! switches and allocation events between them; and the streams it must refuse.

use std::io::Read;

use cachescope::record::tool::ToolReader;
use cachescope::trace::{AccessReader, native};
use cachescope::{AccessKind, Batch, Source};
use proptest::prelude::*;

const HEADER: u64 = (0xE << 60) | cachescope::record::tool::VERSION | (1 << 16);

#[derive(Clone, Debug)]
enum Item {
    Ref {
        kind: u64,
        addr: u64,
        size: u64,
    },
    Thread(u64),
    Free(u64),
    /// A run of instructions: a new one (defined first) or, with `again`, one defined before.
    Run {
        fetches: Vec<(u64, u64)>,
        again: prop::sample::Index,
        reuse: bool,
    },
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        8 => (0u64..4, any::<u64>(), 1u64..1024).prop_map(|(kind, a, size)| Item::Ref {
            kind,
            // User space, and now and then the top of the address space (vsyscall).
            addr: if a % 16 == 0 { 0xFFFF_FFFF_FF60_0000 | (a >> 48) } else { a & 0x7FFF_FFFF_FFFF },
            size,
        }),
        1 => (1u64..5).prop_map(Item::Thread),
        1 => any::<u32>().prop_map(|a| Item::Free(u64::from(a))),
        4 => (
            prop::collection::vec((0u64..1 << 40, 1u64..16), 1..40),
            any::<prop::sample::Index>(),
            any::<bool>(),
        )
            .prop_map(|(fetches, again, reuse)| Item::Run { fetches, again, reuse }),
    ]
}

/// Decoded accesses: (addr, size, kind, pc).
type Decoded = Vec<(u64, u32, AccessKind, u64)>;

/// The stream's bytes and the accesses a naive decoder finds in it.
fn encode(items: &[Item]) -> (Vec<u8>, Decoded) {
    let mut words = vec![HEADER];
    let mut expect = Vec::new();
    let mut pc = cachescope::batch::NO_PC;
    let mut defined: Vec<Vec<(u64, u64)>> = Vec::new();
    for it in items {
        if let Item::Run {
            fetches,
            again,
            reuse,
        } = it
        {
            let id = if *reuse && !defined.is_empty() {
                again.index(defined.len())
            } else {
                words.push((0x8 << 60) | (1 + fetches.len() as u64));
                words.push(defined.len() as u64);
                words.extend(fetches.iter().map(|&(a, s)| a | s << 48 | 3 << 58));
                defined.push(fetches.clone());
                defined.len() - 1
            };
            words.push((0x7 << 60) | id as u64);
            for &(a, s) in &defined[id] {
                expect.push((a, s as u32, AccessKind::Instr, a));
                pc = a;
            }
        }
        match *it {
            Item::Run { .. } => {}
            Item::Ref { kind, addr, size } => {
                words.push((addr & 0xFFFF_FFFF_FFFF) | (size << 48) | (kind << 58));
                if kind == 3 {
                    pc = addr;
                }
                expect.push((addr, size as u32, AccessKind::ALL[kind as usize], pc));
            }
            Item::Thread(t) => words.push((0x1 << 60) | t),
            Item::Free(a) => words.extend([(0x2 << 60) | (2 << 16) | 1, a]),
        }
    }
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    (words.iter().flat_map(|w| w.to_le_bytes()).collect(), expect)
}

/// A reader that returns at most `step` bytes per call.
struct Pieces<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn decode(bytes: &[u8], step: usize) -> cachescope::Result<Decoded> {
    let mut r = ToolReader::new(Pieces { data: bytes, step }, Source::Memory);
    let mut batch = Batch::new();
    let mut out = Vec::new();
    while r.read_batch(&mut batch)? > 0 {
        for i in 0..batch.len() {
            out.push((batch.addrs[i], batch.sizes[i], batch.kinds[i], batch.pcs[i]));
        }
    }
    Ok(out)
}

proptest! {
    #[test]
    fn decodes_as_the_naive_decoder(items in prop::collection::vec(item(), 0..3000), step in 1usize..5000) {
        let (bytes, expect) = encode(&items);
        prop_assert_eq!(decode(&bytes, step).unwrap(), expect);
    }

    #[test]
    fn a_cut_stream_is_an_error(items in prop::collection::vec(item(), 1..500), cut in 1usize..8) {
        let (bytes, _) = encode(&items);
        // Cut inside the end record, or a whole word short of it.
        let cut = if cut == 1 { 8 } else { cut };
        prop_assert!(decode(&bytes[..bytes.len() - cut], 4096).is_err());
    }
}

/// A native trace of the stream, written from batches (`read_batch`, then `write_batch`) or
/// straight from the tool's words (`write_native`, `record`'s path).
fn to_native(
    bytes: &[u8],
    step: usize,
    block_len: usize,
    direct: bool,
) -> cachescope::Result<Vec<u8>> {
    let mut r = ToolReader::new(Pieces { data: bytes, step }, Source::Memory);
    let opts = native::WriterOptions {
        block_len,
        ..Default::default()
    };
    let mut w = native::Writer::with_options(Vec::new(), native::Header::default(), opts)?;
    if direct {
        let mut last = 0;
        let n = r.write_native(&mut w, |n| last = n)?;
        assert_eq!(n, last, "progress ends at the total");
    } else {
        let mut batch = Batch::new();
        while r.read_batch(&mut batch)? > 0 {
            w.write_batch(&batch)?;
        }
    }
    Ok(w.finish()?.0)
}

proptest! {
    /// `record`'s direct path (runs as run rows) and writing batches (every fetch a row) both
    /// decode to the stream's references, whatever the blocks and the pieces the pipe returns.
    #[test]
    fn direct_native_writing_equals_writing_batches(
        items in prop::collection::vec(item(), 0..3000),
        step in 1usize..5000,
        block_len in prop::sample::select(vec![1usize, 7, 100, 4096, 65536]),
    ) {
        let (bytes, expect) = encode(&items);
        let read = |file: &[u8]| {
            let mut r = native::Reader::new(file, Source::Memory).unwrap();
            let mut batch = Batch::new();
            let mut got = Vec::new();
            while r.read_batch(&mut batch).unwrap() > 0 {
                for i in 0..batch.len() {
                    got.push((batch.addrs[i], batch.sizes[i], batch.kinds[i], batch.pcs[i]));
                }
            }
            got
        };
        let direct = to_native(&bytes, step, block_len, true).unwrap();
        prop_assert_eq!(read(&direct), expect.clone());
        prop_assert_eq!(read(&to_native(&bytes, 4096, block_len, false).unwrap()), expect);
    }

    #[test]
    fn a_cut_stream_is_an_error_on_the_direct_path(items in prop::collection::vec(item(), 1..500), cut in 1usize..8) {
        let (bytes, _) = encode(&items);
        let cut = if cut == 1 { 8 } else { cut };
        prop_assert!(to_native(&bytes[..bytes.len() - cut], 4096, 65536, true).is_err());
    }
}

#[test]
fn a_wrong_end_count_or_header_is_an_error() {
    let (mut bytes, _) = encode(&[Item::Ref {
        kind: 0,
        addr: 64,
        size: 8,
    }]);
    let end = bytes.len() - 8;
    bytes[end] ^= 1;
    assert!(decode(&bytes, 4096).is_err());
    let (mut bytes, _) = encode(&[]);
    bytes[0] ^= 2; // another format version
    assert!(decode(&bytes, 4096).is_err());
}

/// A stream of `body` words between the header and a correct end record.
fn stream(body: &[u64]) -> Vec<u8> {
    let mut words = vec![HEADER];
    words.extend_from_slice(body);
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn bad_runs_are_errors_naming_the_word() {
    let fetch = 0x40_1000 | 4 << 48 | 3 << 58;
    // A good one first: run 0 of two fetches, used twice.
    let good = stream(&[0x8 << 60 | 3, 0, fetch, fetch + 4, 0x7 << 60, 0x7 << 60]);
    assert_eq!(decode(&good, 4096).unwrap().len(), 4);
    for (body, says) in [
        (
            vec![0x7 << 60 | 5],
            "run 5 is used at word 1 before it is defined",
        ),
        (
            vec![0x8 << 60 | 2, 1, fetch],
            "run 1 defined where run 0 was expected",
        ),
        (
            vec![0x8 << 60 | 2, 0, 0x40_1000 | 4 << 48],
            "not an instruction record",
        ),
        (vec![0x8 << 60 | 1, 0], "a run definition of 1 words"),
    ] {
        let err = decode(&stream(&body), 4096).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    }
    // Cut inside a definition.
    let mut words = vec![HEADER, 0x8 << 60 | 3, 0, fetch];
    words.truncate(4);
    let cut: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let err = decode(&cut, 4096).unwrap_err().to_string();
    assert!(
        err.contains("run definition of 3 words is cut off"),
        "{err}"
    );
}
