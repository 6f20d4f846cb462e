//! The decoders against a plain one-word-at-a-time loop: the AVX2 kernel, the scalar loop,
//! runs of instructions expanded from their table, and the encoder's item source.

use super::*;
use proptest::prelude::*;

const KINDS: [AccessKind; 4] = [
    AccessKind::Load,
    AccessKind::Store,
    AccessKind::Modify,
    AccessKind::Instr,
];

/// The plain decoder: one word at a time, runs expanded from `runs`, stopping at the first
/// other escape or undefined run.
fn naive(words: &[u64], pc: &mut u64, runs: &InstrRuns, batch: &mut Batch) -> usize {
    for (i, &w) in words.iter().enumerate() {
        if is_escape(w) {
            let Some(run) = run_id(w).and_then(|id| runs.get(id)) else {
                return i;
            };
            for (&a, &s) in run.addrs.iter().zip(run.sizes) {
                batch.push_raw(a, s, AccessKind::Instr, a);
                *pc = a;
            }
            continue;
        }
        let kind = KINDS[((w >> 58) & 3) as usize];
        if kind == AccessKind::Instr {
            *pc = address(w);
        }
        batch.push_raw(address(w), ((w >> 48) & 0x3FF) as u32, kind, *pc);
    }
    words.len()
}

fn bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A table of `n` runs of 1-9 fetches at random addresses, from `seed`.
fn table(n: usize, seed: u64) -> InstrRuns {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut runs = InstrRuns::default();
    for _ in 0..n {
        let len = 1 + next() % 9;
        let mut addr = next() & ((1 << 47) - 1);
        let fetches: Vec<(u64, u32)> = (0..len)
            .map(|_| {
                let size = 1 + (next() % 15) as u32;
                let f = (addr, size);
                // Mostly sequential, sometimes a jump (a superblock chasing a branch).
                addr = if next() % 4 == 0 {
                    next() & ((1 << 47) - 1)
                } else {
                    addr + u64::from(size)
                };
                f
            })
            .collect();
        runs.push(fetches);
    }
    runs
}

#[test]
fn fields_by_hand() {
    // An instruction at 0x401000 (4 bytes), a load of 8 at a stack address with bit 47
    // set (sign-extended), a store of 1023 bytes, then an escape.
    let stack = 0x0000_ffff_ff00_0010u64;
    let words = [
        0x40_1000 | 4 << 48 | 3 << 58,
        stack | 8 << 48,
        0x60_0000 | 1023 << 48 | 1 << 58,
        0x1 << 60 | 2,
        0x40_1004 | 4 << 48 | 3 << 58,
    ];
    let mut batch = Batch::new();
    let mut pc = 7;
    let runs = InstrRuns::default();
    assert_eq!(
        decode_run(&bytes(&words), &mut pc, &runs, &mut batch, 100),
        3
    );
    assert_eq!(batch.addrs, [0x40_1000, 0xffff_ffff_ff00_0010, 0x60_0000]);
    assert_eq!(batch.sizes, [4, 8, 1023]);
    assert_eq!(
        batch.kinds,
        [AccessKind::Instr, AccessKind::Load, AccessKind::Store]
    );
    assert_eq!(batch.pcs, [0x40_1000; 3]);
    assert_eq!(pc, 0x40_1000);
}

#[test]
fn runs_by_hand() {
    // Run 0: three fetches; a load after it takes the last one's pc; run 1 is undefined.
    let mut runs = InstrRuns::default();
    runs.push([(0x1000, 3), (0x1003, 2), (0x1005, 4)]);
    let words = [
        TAG_RUN << 60,
        0x9000 | 8 << 48,
        TAG_RUN << 60,
        TAG_RUN << 60 | 1,
    ];
    let mut batch = Batch::new();
    let mut pc = 0;
    assert_eq!(
        decode_run(&bytes(&words), &mut pc, &runs, &mut batch, 100),
        3
    );
    assert_eq!(
        batch.addrs,
        [0x1000, 0x1003, 0x1005, 0x9000, 0x1000, 0x1003, 0x1005]
    );
    assert_eq!(batch.sizes, [3, 2, 4, 8, 3, 2, 4]);
    assert_eq!(
        batch.pcs,
        [0x1000, 0x1003, 0x1005, 0x1005, 0x1000, 0x1003, 0x1005]
    );
    assert_eq!(pc, 0x1005);
    // With room for five records, the second run does not fit: it is left for later.
    let (mut batch, mut pc) = (Batch::new(), 0);
    assert_eq!(decode_run(&bytes(&words), &mut pc, &runs, &mut batch, 5), 2);
    assert_eq!(batch.len(), 4);
}

/// Decodes `words` run after run, skipping each escape as the reader does (`room` records at
/// a time), appending to `batch`; returns the words per call and the final pc.
fn runs(
    words: &[u64],
    table: &InstrRuns,
    pc: u64,
    simd: bool,
    batch: &mut Batch,
) -> (Vec<usize>, u64) {
    let raw = bytes(words);
    let (mut at, mut pc, mut lens) = (0, pc, Vec::new());
    while at < words.len() {
        let n = decode_run_with(&raw[8 * at..], &mut pc, table, batch, 1 << 16, simd);
        lens.push(n);
        at += n + 1;
    }
    (lens, pc)
}

/// Both paths and the encoder's item source agree with the plain loop on `words`, after
/// `before` records already in the batch.
fn check_paths(
    words: &[u64],
    table: &InstrRuns,
    pc: u64,
    before: usize,
) -> std::result::Result<(), String> {
    let mut slow = Batch::new();
    for i in 0..before {
        slow.push_raw(i as u64, 1, AccessKind::Load, 0);
    }
    let start = slow.clone();
    let (mut lens, mut pc_slow, mut at) = (Vec::new(), pc, 0);
    // The call events among the escapes: the item source gives them as items.
    let mut slow_calls = Vec::new();
    while at < words.len() {
        let n = naive(&words[at..], &mut pc_slow, table, &mut slow);
        lens.push(n);
        slow_calls.extend(words.get(at + n).and_then(|&w| call_op(w)));
        at += n + 1;
    }
    for simd in [true, false] {
        let mut fast = start.clone();
        let got = runs(words, table, pc, simd, &mut fast);
        if got != (lens.clone(), pc_slow) || fast != slow {
            return Err(format!("simd={simd} differs on {words:x?}"));
        }
    }
    // The item source, with a room small enough to split some runs.
    let raw = bytes(words);
    let (mut items, mut pc_items, mut at, mut calls) = (start.clone(), pc, 0, Vec::new());
    while at < words.len() {
        let mut source = ToolItems::new(&raw[8 * at..], &mut pc_items, table);
        let mut room = 3;
        while let Some(item) = source.next_item(room) {
            match item {
                Item::Access(a, s, k, p) => items.push_raw(a, s, k, p),
                Item::Run(run) => {
                    for (&a, &s) in run.addrs.iter().zip(run.sizes) {
                        items.push_raw(a, s, AccessKind::Instr, a);
                    }
                }
                Item::Call(op) => calls.push(op),
            }
            room = 1 + (room + 2) % 5;
        }
        at += source.taken().0 + 1;
    }
    if items != slow || pc_items != pc_slow || calls != slow_calls {
        return Err(format!("the item source differs on {words:x?}"));
    }
    Ok(())
}

#[test]
fn short_runs_every_escape() {
    // Every length up to three blocks, an escape at every position or none: the kernel's
    // blocks, the block holding the escape and every tail length 0-7; then a run word there.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let table = table(4, 11);
    for len in 0..24 {
        let words: Vec<u64> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & ((1 << 60) - 1)
            })
            .collect();
        check_paths(&words, &table, 5, 0).unwrap();
        for at in 0..len {
            for tag_arg in [0xA << 60, TAG_RUN << 60 | (at as u64 % 5)] {
                let mut w = words.clone();
                w[at] = tag_arg;
                check_paths(&w, &table, 5, 3).unwrap();
            }
        }
    }
}

proptest! {
    /// The AVX2 kernel, the scalar loop (the kernel forced off) and the item source all
    /// equal the plain loop: random words, escapes of any tag and run words (defined or not)
    /// anywhere, whole blocks plus every tail 0-7, instruction records dense or sparse (so
    /// blocks with none carry the pc through).
    #[test]
    fn paths_equal_naive(
        (words, escapes) in (0usize..64, 0usize..8, 0u64..4).prop_flat_map(|(blocks, tail, sparse)| (
            prop::collection::vec(any::<u64>().prop_map(move |w| {
                let w = w & ((1 << 60) - 1);
                // With `sparse`, turn most instruction records into loads.
                if sparse > 0 && w >> 58 == 3 && w % (4 * sparse) != 0 { w & !(3 << 58) } else { w }
            }), 8 * blocks + tail),
            prop::collection::vec((any::<prop::sample::Index>(), 1u64..16, 0u64..12), 0..40),
        )),
        start_pc in any::<u64>(),
        before in 0usize..20,
        seed in any::<u64>(),
    ) {
        let table = table(10, seed);
        let mut words = words;
        for (i, tag, id) in &escapes {
            if !words.is_empty() {
                let at = i.index(words.len());
                // Half of them run words (even ids; 10 is undefined).
                words[at] = if id % 2 == 0 { (TAG_RUN << 60) | id } else { words[at] | (tag << 60) };
            }
        }
        prop_assert_eq!(check_paths(&words, &table, start_pc, before), Ok(()));
    }
}
