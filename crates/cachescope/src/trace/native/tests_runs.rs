//! Version 3's run rows: traces written with runs of fetches read back as the accesses they
//! stand for, and damage to a run block is reported.

use proptest::prelude::*;

use super::decode::BLOCK_RUNS;
use super::tests::{flatten, indexed, stored_block_file_with, stream};
use super::*;
use crate::access::{Access, AccessKind, ThreadId};
use crate::batch::Batch;
use crate::error::Source;
use crate::trace::AccessReader;

/// Items from a list; a run longer than the block's room is given fetch by fetch, as the
/// tool's source does.
struct List<'a> {
    items: Vec<Item<'a>>,
    at: usize,
    split: Option<(InstrRun<'a>, usize)>,
}

impl<'a> ItemSource<'a> for List<'a> {
    fn next_item(&mut self, room: usize) -> Option<Item<'a>> {
        if let Some((run, i)) = self.split.take() {
            if i + 1 < run.len() {
                self.split = Some((run, i + 1));
            }
            let a = run.addrs[i];
            return Some(Item::Access(a, run.sizes[i], AccessKind::Instr, a));
        }
        let item = *self.items.get(self.at)?;
        self.at += 1;
        match item {
            Item::Run(run) if run.len() > room => {
                self.split = Some((run, 0));
                self.next_item(room)
            }
            item => Some(item),
        }
    }
}

/// Runs from definitions: sequential fetches, or a jump where the flag says so.
fn define(defs: &[Vec<(u64, u32, bool)>]) -> InstrRuns {
    let mut runs = InstrRuns::default();
    for def in defs {
        let mut addr = 0x40_0000;
        runs.push(def.iter().map(|&(jump, size, is_jump)| {
            if is_jump {
                addr = jump;
            }
            let f = (addr, size);
            addr = addr.wrapping_add(u64::from(size));
            f
        }));
    }
    runs
}

/// A trace of `picks` (a run, or a data access of the kind, size and pc mode given by the
/// number), its picks split into equal stretches for the `threads` in turn, and the accesses
/// it stands for with each one's thread.
fn write(
    runs: &InstrRuns,
    picks: &[(usize, bool, u64)],
    threads: &[ThreadId],
    block_len: usize,
) -> (Vec<u8>, Vec<Access>, Vec<ThreadId>) {
    let opts = WriterOptions {
        block_len,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(Vec::new(), Header::new(), opts).unwrap();
    let mut flat = Vec::new();
    let mut last = 0;
    let per = picks.len().div_ceil(threads.len().max(1)).max(1);
    for (chunk, &thread) in picks.chunks(per).zip(threads.iter().cycle()) {
        w.set_thread(thread);
        let mut items = Vec::new();
        for (i, is_run, x) in chunk {
            if *is_run {
                let run = runs.get((i % runs.len()) as u64).unwrap();
                items.push(Item::Run(run));
                for (&a, &s) in run.addrs.iter().zip(run.sizes) {
                    flat.push((a, s, AccessKind::Instr, a, thread));
                }
                last = run.last();
            } else {
                let kind =
                    [AccessKind::Load, AccessKind::Store, AccessKind::Modify][(*x % 3) as usize];
                let pc = match x % 7 {
                    0 => crate::batch::NO_PC,
                    1 => x >> 20,
                    _ => last,
                };
                let size = [(1 + x % 300) as u32, 0, 70_000][(x % 11 % 3) as usize];
                items.push(Item::Access(x >> 8, size, kind, pc));
                flat.push((x >> 8, size, kind, pc, thread));
            }
        }
        w.write_items(&mut List {
            items,
            at: 0,
            split: None,
        })
        .unwrap();
    }
    let (bytes, counts) = w.finish().unwrap();
    let accesses: Vec<Access> = flat
        .iter()
        .map(|&(addr, size, kind, pc, _)| Access {
            addr,
            size,
            kind,
            pc: (pc != crate::batch::NO_PC && pc != 0).then_some(pc),
        })
        .collect();
    let mut expected = Counts::default();
    accesses.iter().for_each(|a| expected.add(a.kind));
    assert_eq!(counts, expected);
    (bytes, accesses, flat.iter().map(|f| f.4).collect())
}

fn defs() -> impl Strategy<Value = Vec<Vec<(u64, u32, bool)>>> {
    prop::collection::vec(
        prop::collection::vec((any::<u64>(), 1u32..16, prop::bool::weighted(0.2)), 1..40),
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Runs written as run rows read back as their fetches, by the streaming reader and block by
    /// block, whatever the block length (runs split across blocks) and the thread switches.
    #[test]
    fn run_rows_round_trip(
        defs in defs(),
        picks in prop::collection::vec((any::<usize>(), any::<bool>(), any::<u64>()), 0..400),
        threads in prop::collection::vec(1u32..4, 1..4),
        block_len in 1..200usize,
    ) {
        let runs = define(&defs);
        let (bytes, accesses, thread_of) = write(&runs, &picks, &threads, block_len);
        prop_assert_eq!(&flatten(&stream(&bytes).unwrap()), &accesses);
        let (_, _, batches) = indexed(&bytes).unwrap();
        prop_assert_eq!(&flatten(&batches), &accesses);
        let threads_read: Vec<ThreadId> = batches.iter().flat_map(|b| {
            (0..b.len()).map(move |i| b.thread_at(i))
        }).collect();
        prop_assert_eq!(threads_read, thread_of);
    }

    /// With the fetches elided (the sampled stage's reading), every batch has the full
    /// decoding's length, kinds and threads, its data index is the full batch's, and each data
    /// reference its address, size and pc: one batch reused throughout, so stale fetches of
    /// an earlier block cannot pass for decoded ones.
    #[test]
    fn elided_fetches_keep_every_data_reference(
        defs in defs(),
        picks in prop::collection::vec((any::<usize>(), any::<bool>(), any::<u64>()), 1..400),
        threads in prop::collection::vec(1u32..4, 1..4),
        block_len in 1..200usize,
    ) {
        let runs = define(&defs);
        let (bytes, _, _) = write(&runs, &picks, &threads, block_len);
        let full = stream(&bytes).unwrap();
        let mut r = Reader::new(&bytes[..], Source::File("t.cst".into())).unwrap();
        r.elide_fetches();
        let mut b = Batch::new();
        for want in &full {
            prop_assert_eq!(r.read_batch(&mut b).unwrap(), want.len());
            prop_assert_eq!(&b.kinds, &want.kinds);
            prop_assert!((0..b.len()).all(|i| b.thread_at(i) == want.thread_at(i)));
            let mut indexed = want.clone();
            indexed.index_data();
            let places = indexed.data_positions().unwrap();
            // A block of run rows comes indexed; one without is decoded in full.
            if b.data_addrs().is_some() {
                prop_assert_eq!(b.data_addrs(), indexed.data_addrs());
                prop_assert_eq!(b.data_positions(), Some(places));
            } else {
                prop_assert_eq!(&b.addrs, &want.addrs);
            }
            for &i in places {
                let i = i as usize;
                prop_assert_eq!((b.addrs[i], b.sizes[i], b.pcs[i]), (want.addrs[i], want.sizes[i], want.pcs[i]));
            }
            // The last fetch of every stretch of fetches ends a row, so it keeps its address
            // (a call event's call site).
            for i in 0..b.len() {
                let last = i + 1 == b.len() || b.kinds[i + 1] != AccessKind::Instr;
                if b.kinds[i] == AccessKind::Instr && last {
                    prop_assert_eq!(b.addrs[i], want.addrs[i], "fetch {}", i);
                }
            }
        }
        prop_assert_eq!(r.read_batch(&mut b).unwrap(), 0);
    }

    /// Arbitrary run block columns under a valid checksum never panic the decoder.
    #[test]
    fn garbage_run_columns_never_panic(
        n in 1..40usize,
        rows in 0..45u32,
        dir in [0..80u32, 0..8u32, 0..8u32, 0..40u32, 0..60u32],
        fill in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let [a, e, x, m, d] = dir;
        let cols = 3 * rows as usize + (a + 4 * e + x + m + d) as usize;
        let mut raw: Vec<u8> = [a, e, x, m, rows, d].iter().flat_map(|v| v.to_le_bytes()).collect();
        raw.extend(fill.iter().cycle().take(cols));
        let _ = stream(&stored_block_file_with(n, &raw, BLOCK_RUNS));
    }
}

/// A small trace with runs, a split run and two threads.
fn sample() -> (Vec<u8>, Vec<Access>, Vec<ThreadId>) {
    let defs = vec![
        vec![(0, 4, false), (0, 3, false), (0, 5, false)],
        vec![(0x40_0100, 2, true), (0, 6, false)],
        vec![(0x50_0000, 1, true)],
    ];
    let runs = define(&defs);
    let picks: Vec<(usize, bool, u64)> = (0..60u64)
        .map(|i| (i as usize * 7919 % 1000, i % 3 != 2, i * 0x1_0001 + 5))
        .collect();
    write(&runs, &picks, &[1, 2], 17)
}

#[test]
fn run_blocks_carry_the_runs_flag_and_read_back() {
    let (bytes, accesses, _) = sample();
    assert_eq!(flatten(&stream(&bytes).unwrap()), accesses);
    // The first block's header: the flag set, since the sample starts with a run.
    let at = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(&bytes[at..at + 4], b"BLK\0");
    assert_eq!(bytes[at + 17], BLOCK_RUNS);
}

#[test]
fn every_truncation_or_flipped_byte_of_a_run_trace_is_an_error() {
    let (bytes, _, _) = sample();
    for cut in 0..bytes.len() {
        assert!(stream(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    for at in 0..bytes.len() {
        for flip in [0x01, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= flip;
            assert!(stream(&damaged).is_err(), "flip {flip:#x} at {at}");
            assert!(indexed(&damaged).is_err(), "flip {flip:#x} at {at}");
        }
    }
}
