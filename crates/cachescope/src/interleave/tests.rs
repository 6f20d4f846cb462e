//! The interleaver against a brute-force dealer of plain vectors, with and without spilling,
//! and hand-worked slices.

use std::collections::VecDeque;
use std::num::NonZeroU64;

use proptest::prelude::*;

use super::{Interleaver, QuantumUnit};
use crate::access::{Access, AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::trace::AccessReader;

/// The rules of the module documentation, written plainly: per-thread vectors dealt
/// `quantum` counted accesses at a time.
pub(crate) fn brute(trace: &[(ThreadId, Access)], quantum: u64) -> Vec<(ThreadId, Access)> {
    let mut threads: Vec<ThreadId> = Vec::new();
    let mut streams: Vec<Vec<Access>> = Vec::new();
    let mut before: Vec<u64> = Vec::new();
    for &(t, a) in trace {
        let k = match threads.iter().position(|&x| x == t) {
            Some(k) => k,
            None => {
                threads.push(t);
                streams.push(Vec::new());
                before.push(streams[0].len() as u64);
                threads.len() - 1
            }
        };
        streams[k].push(a);
    }
    let any_instr = trace.iter().any(|(_, a)| a.kind == AccessKind::Instr);
    let counted = |a: &Access| !any_instr || a.kind == AccessKind::Instr;
    let mut pos = vec![0usize; streams.len()];
    let mut waiting: VecDeque<usize> = (0..streams.len()).collect();
    let mut rotation: VecDeque<usize> = VecDeque::new();
    // A thread starts once the first one has dealt what it had recorded before it.
    let admit = |waiting: &mut VecDeque<usize>, rotation: &mut VecDeque<usize>, pos: &[usize]| {
        while waiting.front().is_some_and(|&k| pos[0] as u64 >= before[k]) {
            rotation.push_back(waiting.pop_front().unwrap());
        }
    };
    admit(&mut waiting, &mut rotation, &pos);
    let mut out = Vec::new();
    while let Some(&k) = rotation.front() {
        let mut left = quantum;
        let ended = loop {
            let Some(a) = streams[k].get(pos[k]) else {
                break true;
            };
            if counted(a) {
                if left == 0 {
                    break false;
                }
                left -= 1;
            }
            out.push((threads[k], *a));
            pos[k] += 1;
        };
        rotation.pop_front();
        admit(&mut waiting, &mut rotation, &pos);
        if !ended {
            rotation.push_back(k);
        }
    }
    out
}

/// `trace` in batches of `len`, each access with its thread.
pub(crate) fn batches(trace: &[(ThreadId, Access)], len: usize) -> Vec<Batch> {
    trace
        .chunks(len.max(1))
        .map(|chunk| {
            let mut b = Batch::new();
            for &(t, a) in chunk {
                b.set_thread(t);
                b.push(a);
            }
            b
        })
        .collect()
}

/// What the interleaver deals from `trace` fed in batches of `len`, holding `memory`
/// accesses before spilling.
fn dealt(
    trace: &[(ThreadId, Access)],
    quantum: u64,
    len: usize,
    memory: usize,
) -> (Vec<(ThreadId, Access)>, QuantumUnit) {
    let mut il = Interleaver::with_memory(NonZeroU64::new(quantum).unwrap(), memory);
    for b in batches(trace, len) {
        il.observe(&b);
    }
    let mut merged = il.finish().unwrap();
    let mut out = Vec::new();
    let mut b = Batch::new();
    while merged.read_batch(&mut b).unwrap() > 0 {
        out.extend(b.iter_threaded());
    }
    (out, merged.unit())
}

fn access(kind: AccessKind, addr: u64) -> Access {
    Access {
        addr,
        size: 4,
        kind,
        pc: Some(0x400 + addr),
    }
}

#[test]
fn references_are_dealt_a_quantum_at_a_time_once_the_main_thread_reached_the_birth() {
    // Thread 1 runs 3 references, then thread 2 appears: it starts once 1 has dealt 3.
    let t: Vec<(ThreadId, Access)> = [1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1]
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, access(AccessKind::Load, i as u64)))
        .collect();
    let (out, unit) = dealt(&t, 2, 1000, 1000);
    assert_eq!(unit, QuantumUnit::References);
    let order: Vec<u64> = out.iter().map(|(_, a)| a.addr).collect();
    // 1: 0 1 | 1: 2 7 (2 may start after 3 of 1's) | 2: 3 4 | 1: 8 9 | 2: 5 6 | 1: 10.
    assert_eq!(order, [0, 1, 2, 7, 3, 4, 8, 9, 5, 6, 10]);
    assert_eq!(out, brute(&t, 2));
}

#[test]
fn a_slice_is_instructions_with_the_data_references_after_them() {
    use AccessKind::{Instr as I, Load as L, Store as S};
    let t: Vec<(ThreadId, Access)> = [(1, I), (1, L), (1, I), (2, I), (2, S), (2, S), (2, I)]
        .iter()
        .enumerate()
        .map(|(i, &(t, k))| (t, access(k, i as u64)))
        .collect();
    let (out, unit) = dealt(&t, 1, 1000, 1000);
    assert_eq!(unit, QuantumUnit::Instructions);
    let order: Vec<u64> = out.iter().map(|(_, a)| a.addr).collect();
    // Thread 2 is born when 1 has dealt 3; slices of one instruction and its data.
    assert_eq!(order, [0, 1, 2, 3, 4, 5, 6]);
    let (out, _) = dealt(&t[..6], 1, 1000, 1000);
    assert_eq!(out, brute(&t[..6], 1));
}

#[test]
fn spilled_streams_come_back_whole_and_in_order() {
    // Four threads, each born early, 20 000 references each: a 1 000-access memory spills
    // every stream many times.
    let mut t = Vec::new();
    for i in 0..80_000u64 {
        t.push((1 + (i / 7 % 4) as ThreadId, access(AccessKind::Load, i)));
    }
    let (out, _) = dealt(&t, 5, 4096, 1000);
    assert_eq!(out.len(), t.len());
    assert_eq!(out, brute(&t, 5));
}

/// A random threaded trace: thread runs of random lengths, with or without fetches.
fn trace() -> impl Strategy<Value = Vec<(ThreadId, Access)>> {
    let kinds = prop_oneof![
        Just(AccessKind::Load),
        Just(AccessKind::Store),
        Just(AccessKind::Modify),
        Just(AccessKind::Instr)
    ];
    (
        any::<bool>(),
        prop::collection::vec(
            (1u32..5, prop::collection::vec((kinds, 0u64..64), 1..12)),
            1..25,
        ),
    )
        .prop_map(|(fetches, runs)| {
            runs.into_iter()
                .flat_map(|(t, accesses)| {
                    accesses.into_iter().map(move |(k, a)| {
                        let k = if !fetches && k == AccessKind::Instr {
                            AccessKind::Load
                        } else {
                            k
                        };
                        (t, access(k, a * 8))
                    })
                })
                .collect()
        })
}

proptest! {
    #[test]
    fn agrees_with_the_brute_force_dealer(
        t in trace(),
        quantum in 1u64..6,
        len in 1usize..40,
        memory in 0usize..30,
    ) {
        let (out, _) = dealt(&t, quantum, len, memory);
        prop_assert_eq!(out, brute(&t, quantum));
    }
}
