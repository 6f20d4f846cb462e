use std::io::{Read, Write};

use proptest::prelude::*;

use super::*;
use crate::access::Access;
use crate::analysis::Analysis;
use crate::batch::NO_PC;
use crate::stats::StatsAnalysis;
use crate::trace::{Compression, Format, OpenOptions, Trace};
use AccessKind::*;

/// Hands out at most `step` bytes per read, to exercise records split across reads.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn read_all(input: impl Read + Send) -> Result<Vec<Access>> {
    let mut r = Reader::new(input, Source::Memory, Options::default());
    let mut batch = Batch::new();
    let mut got = vec![];
    while r.read_batch(&mut batch)? > 0 {
        assert!(batch.len() <= BATCH_LEN);
        got.extend(batch.iter());
    }
    Ok(got)
}

fn acc(kind: AccessKind, addr: u64, pc: u64) -> Access {
    Access {
        addr,
        size: 1,
        kind,
        pc: (pc != NO_PC).then_some(pc),
    }
}

fn encode(records: &[Record]) -> Vec<u8> {
    records.iter().flat_map(|r| r.encode()).collect()
}

/// SplitMix64, for generated records that look like a tracer's.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` records shaped like the Pin tracer's output: loops over basic blocks, a branch ending
/// each, registers and memory slots filled from the front, a third of the instructions loading
/// and an eighth storing.
fn traced(n: usize, seed: u64) -> Vec<Record> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut ip = 0x40_1000 + rng.below(1 << 16);
        for i in 0..3 + rng.below(12) {
            let mut r = Record {
                ip,
                destination_registers: [1 + rng.below(30) as u8, 0],
                source_registers: [1 + rng.below(30) as u8, 25, 0, 0],
                ..Record::default()
            };
            ip += 1 + rng.below(8);
            let addr = 0x7ffd_0000_0000 + rng.below(1 << 20);
            match rng.below(24) {
                0..8 => r.source_memory[0] = addr,
                8 => r.source_memory[..2].copy_from_slice(&[addr, addr + 64]),
                9..12 => r.destination_memory[0] = addr,
                12 => (r.source_memory[0], r.destination_memory[0]) = (addr, addr),
                _ => {}
            }
            let branch = i > 10 || rng.below(6) == 0;
            if branch {
                r.is_branch = 1;
                r.branch_taken = u8::from(rng.below(2) == 0);
            }
            out.push(r);
            if branch {
                break;
            }
        }
    }
    out.truncate(n);
    out
}

#[test]
fn decodes_a_hand_built_record_field_by_field() {
    // Offsets as in ChampSim's inc/trace_instruction.h, written out by hand.
    let mut b = [0u8; RECORD_LEN];
    b[..8].copy_from_slice(&0x0040_1a2bu64.to_le_bytes());
    b[8] = 1; // is_branch
    b[9] = 1; // branch_taken
    b[10..12].copy_from_slice(&[26, 0]); // writes the instruction pointer
    b[12..16].copy_from_slice(&[26, 25, 0, 0]);
    b[16..24].copy_from_slice(&0x7ffd_0010u64.to_le_bytes()); // destination_memory[0]
    b[24..32].copy_from_slice(&0u64.to_le_bytes());
    b[32..40].copy_from_slice(&0u64.to_le_bytes()); // source_memory[0] empty
    b[40..48].copy_from_slice(&0x5555_0008u64.to_le_bytes());
    b[48..56].copy_from_slice(&0u64.to_le_bytes());
    b[56..64].copy_from_slice(&0x5555_0040u64.to_le_bytes());
    let r = Record::decode(&b);
    assert_eq!(
        r,
        Record {
            ip: 0x0040_1a2b,
            is_branch: 1,
            branch_taken: 1,
            destination_registers: [26, 0],
            source_registers: [26, 25, 0, 0],
            destination_memory: [0x7ffd_0010, 0],
            source_memory: [0, 0x5555_0008, 0, 0x5555_0040],
        }
    );
    assert_eq!(r.encode(), b);
    // The fetch, the loads in slot order, then the store; zero slots skipped wherever they are.
    let pc = 0x0040_1a2b;
    assert_eq!(
        read_all(&b[..]).unwrap(),
        vec![
            acc(Instr, pc, pc),
            acc(Load, 0x5555_0008, pc),
            acc(Load, 0x5555_0040, pc),
            acc(Store, 0x7ffd_0010, pc),
        ]
    );
}

#[test]
fn a_record_with_ip_zero_has_no_fetch_and_no_pc() {
    let r = Record {
        source_memory: [0x10, 0, 0, 0],
        destination_memory: [0x10, 0x20],
        ..Record::default()
    };
    assert_eq!(
        read_all(&r.encode()[..]).unwrap(),
        vec![
            acc(Load, 0x10, NO_PC),
            acc(Store, 0x10, NO_PC),
            acc(Store, 0x20, NO_PC)
        ]
    );
}

#[test]
fn reads_across_batches_and_odd_reads() {
    // Every slot full: seven accesses a record, so batches end between records.
    let records: Vec<Record> = (1..=(BATCH_LEN as u64 / 3))
        .map(|i| Record {
            ip: i << 12,
            destination_memory: [i << 20, (i << 20) + 1],
            source_memory: [i << 24, (i << 24) + 1, (i << 24) + 2, (i << 24) + 3],
            ..Record::default()
        })
        .collect();
    let bytes = encode(&records);
    let want = read_all(&bytes[..]).unwrap();
    assert_eq!(want.len(), records.len() * 7);
    assert_eq!(want[7], acc(Instr, 2 << 12, 2 << 12));
    assert_eq!(want[13], acc(Store, (2 << 20) + 1, 2 << 12));
    for step in [5, 64, 1000, 1 << 20] {
        let got = read_all(Trickle { data: &bytes, step }).unwrap();
        assert!(got == want, "step {step}");
    }
}

#[test]
fn a_cut_record_is_an_error_naming_its_number_and_offset() {
    let mut bytes = encode(&traced(3, 1));
    bytes.extend_from_slice(&[7; 17]);
    let mut r = Reader::new(
        Trickle {
            data: &bytes,
            step: 50,
        },
        Source::Memory,
        Options::default(),
    );
    let mut batch = Batch::new();
    assert!(r.read_batch(&mut batch).unwrap() >= 3);
    let err = r.read_batch(&mut batch).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }));
    assert_eq!(
        err.to_string(),
        "<memory>: truncated: ChampSim record 4 (at byte offset 192 of the trace's content) is \
         cut short: 17 of its 64 bytes"
    );
    assert!(read_all(&b""[..]).unwrap().is_empty());
}

#[test]
fn sniff_accepts_traced_and_written_records() {
    assert!(sniff(&encode(&traced(1024, 2))));
    assert!(sniff(&encode(&traced(1, 3))));
    // A partial record after whole ones is ignored (the reader reports it).
    let mut cut = encode(&traced(10, 4));
    cut.truncate(cut.len() - 30);
    assert!(sniff(&cut));
    // cachescope's own output: a data-only trace of loads, one record per reference.
    let loads: Batch = (1..500u64).map(|i| Access::load(i * 64, 8)).collect();
    assert!(sniff(&write(&loads).0));
}

#[test]
fn sniff_rejects_what_other_readers_take() {
    assert!(!sniff(b""));
    assert!(!sniff(&[0x40; 63]));
    assert!(!sniff(&[0; 4096]), "all zero");
    let text = b"I  04000,3\n L 1ff0,8\n".repeat(100);
    assert!(!sniff(&text));
    // Raw binary addresses: random, sequential, page- and 64 KiB-strided.
    let addrs = |f: &dyn Fn(u64) -> u64| -> Vec<u8> {
        (0..4096).flat_map(|i| f(i).to_le_bytes()).collect()
    };
    let mut rng = Rng(5);
    assert!(!sniff(&addrs(&|_| 0)));
    assert!(!sniff(&addrs(&|i| i)));
    assert!(!sniff(&addrs(&|i| 0x1000 + 8 * i)));
    assert!(!sniff(&addrs(&|i| 0x7ffd_0000_0000 + (i << 12))));
    assert!(!sniff(&addrs(&|i| i << 16)));
    let random: Vec<u8> = (0..4096).flat_map(|_| rng.next().to_le_bytes()).collect();
    assert!(!sniff(&random));
    // One implausible record anywhere spoils the sample.
    let mut bytes = encode(&traced(100, 6));
    bytes[64 * 57 + 8] = 2;
    assert!(!sniff(&bytes));
}

#[test]
fn detected_inside_xz_and_gzip() {
    let plain = encode(&traced(5000, 7));
    let mut xz = liblzma::write::XzEncoder::new(vec![], 1);
    xz.write_all(&plain).unwrap();
    let mut gz = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let want = read_all(&plain[..]).unwrap();
    for (bytes, compression) in [
        (plain.clone(), Compression::None),
        (xz.finish().unwrap(), Compression::Xz),
        (gz.finish().unwrap(), Compression::Gzip),
    ] {
        let mut trace = Trace::from_read(
            std::io::Cursor::new(bytes),
            Source::Memory,
            None,
            &OpenOptions::default(),
        )
        .unwrap();
        assert_eq!(trace.format(), Some(Format::Champsim));
        assert_eq!(trace.compression(), compression);
        let mut batch = Batch::new();
        let mut got = vec![];
        while trace.read_batch(&mut batch).unwrap() > 0 {
            got.extend(batch.iter());
        }
        assert!(got == want, "{compression}");
    }
}

/// Writes `batch` as ChampSim; the bytes and the losses.
fn write(batch: &Batch) -> (Vec<u8>, Losses) {
    let mut w = Writer::new(Vec::new(), Source::Memory);
    w.write_batch(batch).unwrap();
    let losses = w.losses().clone();
    (w.finish().unwrap(), losses)
}

fn a(kind: AccessKind, addr: u64, size: u32, pc: u64) -> Access {
    Access {
        addr,
        size,
        kind,
        pc: (pc != NO_PC).then_some(pc),
    }
}

#[test]
fn the_writer_groups_references_by_instruction() {
    let trace: Batch = [
        a(Instr, 0x400, 1, 0x400),
        a(Load, 0x10, 1, 0x400),
        a(Load, 0x18, 1, 0x400),
        a(Store, 0x20, 1, 0x400),
        a(Instr, 0x404, 1, 0x404),
        a(Instr, 0x408, 1, 0x408),
        a(Store, 0x30, 1, 0x408),
    ]
    .into_iter()
    .collect();
    let (bytes, losses) = write(&trace);
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(
        bytes,
        encode(&[
            Record {
                ip: 0x400,
                source_memory: [0x10, 0x18, 0, 0],
                destination_memory: [0x20, 0],
                ..Record::default()
            },
            Record {
                ip: 0x404,
                ..Record::default()
            },
            Record {
                ip: 0x408,
                destination_memory: [0x30, 0],
                ..Record::default()
            },
        ])
    );
    assert_eq!(
        read_all(&bytes[..]).unwrap(),
        trace.iter().collect::<Vec<_>>()
    );
}

#[test]
fn the_writer_keeps_order_and_counts_what_it_loses() {
    let trace: Batch = [
        a(Load, 0x10, 8, NO_PC),   // no instruction yet: a record of its own
        a(Instr, 0x400, 4, 0x400), // fetch size lost
        a(Store, 0x20, 1, 0x400),  //
        a(Load, 0x28, 1, 0x400),   // a load after a store: a record of its own
        a(Instr, 0x500, 1, 0x500), //
        a(Modify, 0x30, 1, 0x500), // a load and a store
        a(Store, 0x38, 1, 0x999),  // pc lost
        a(Store, 0x40, 1, 0x500),  // destinations full: a record of its own, pc lost
        a(Load, 0, 1, 0x500),      // dropped
        a(Instr, 0, 1, 0),         // dropped; what follows has no instruction
        a(Modify, 0x48, 2, NO_PC), // a record of its own, size lost
    ]
    .into_iter()
    .collect();
    let (bytes, losses) = write(&trace);
    assert_eq!(
        losses,
        Losses {
            data_sizes: 2,
            fetch_sizes: 1,
            modifies: 2,
            zero_data: 1,
            zero_fetches: 1,
            instructionless: 4,
            pcs: 3,
        }
    );
    assert_eq!(losses.notes().len(), 7);
    assert_eq!(
        read_all(&bytes[..]).unwrap(),
        vec![
            acc(Load, 0x10, NO_PC),
            acc(Instr, 0x400, 0x400),
            acc(Store, 0x20, 0x400),
            acc(Load, 0x28, NO_PC),
            acc(Instr, 0x500, 0x500),
            acc(Load, 0x30, 0x500),
            acc(Store, 0x30, 0x500),
            acc(Store, 0x38, 0x500),
            acc(Store, 0x40, NO_PC),
            acc(Load, 0x48, NO_PC),
            acc(Store, 0x48, NO_PC),
        ]
    );
}

/// An access of a random trace: any kind, a few addresses (some 0), sizes and pcs.
fn access() -> impl Strategy<Value = Access> {
    (0u8..4, 0u64..6, prop_oneof![Just(1u32), 1u32..16], 0u64..3).prop_map(|(k, addr, size, pc)| {
        Access {
            addr: addr * 24,
            size,
            kind: AccessKind::from_code(k).unwrap_or(Load),
            pc: (pc > 0).then_some(0x400 * pc),
        }
    })
}

fn stats(accesses: impl IntoIterator<Item = Access>) -> crate::stats::TraceStats {
    let mut s = StatsAnalysis::new(crate::access::LineSize::DEFAULT);
    s.observe(&accesses.into_iter().collect());
    s.finish()
}

proptest! {
    #[test]
    fn encode_decode_round_trip(bytes in proptest::collection::vec(any::<u8>(), 64)) {
        let b: [u8; RECORD_LEN] = bytes.try_into().unwrap();
        prop_assert_eq!(Record::decode(&b).encode(), b);
    }

    /// Writing then reading gives every reference back in order, as 1 byte, a modify as a load
    /// and a store, references to address 0 dropped; so `stats` of a trace without sizes other
    /// than 1 byte, modifies or address 0 is unchanged.
    #[test]
    fn write_read_round_trip(trace in proptest::collection::vec(access(), 0..200)) {
        let batch: Batch = trace.iter().copied().collect();
        let (bytes, losses) = write(&batch);
        let got = read_all(&bytes[..]).unwrap();
        let mut want = vec![];
        for x in &trace {
            if x.addr == 0 {
                continue;
            }
            let parts: &[AccessKind] = match x.kind {
                Modify => &[Load, Store],
                k => &[k],
            };
            for &kind in parts {
                want.push((kind, x.addr));
            }
        }
        let got_refs: Vec<_> = got.iter().map(|g| (g.kind, g.addr)).collect();
        prop_assert_eq!(&got_refs, &want);
        prop_assert!(got.iter().all(|g| g.size == 1));
        if losses.data_sizes == 0 && losses.modifies == 0 && losses.zero_data == 0
            && losses.zero_fetches == 0
        {
            prop_assert_eq!(stats(got), stats(trace));
        }
    }

    /// A trace read from ChampSim records, written back, reads back the same, pcs included.
    #[test]
    fn read_write_read_is_exact(n in 1usize..300, seed in any::<u64>()) {
        let first = read_all(&encode(&traced(n, seed))[..]).unwrap();
        let (bytes, losses) = write(&first.iter().copied().collect());
        prop_assert!(losses.is_empty(), "{:?}", losses);
        prop_assert_eq!(read_all(&bytes[..]).unwrap(), first);
    }

    #[test]
    fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..700)) {
        let _ = sniff(&bytes);
        let _ = read_all(&bytes[..]);
        crate::fuzzing::run("champsim", &bytes);
    }
}
