//! Brute force: every change maps every byte of a structure one to one (within its old bytes
//! when it does not grow), leaves other addresses alone, and an identity change leaves the
//! trace as it was.

use std::collections::HashSet;

use proptest::prelude::*;

use super::shape::{Mapping, Shape};
use super::{Change, Relayout};
use crate::access::{Access, AccessKind};
use crate::attribution::events::{Event, EventKind};
use crate::batch::Batch;

/// Every offset of an instance of `len` bytes maps to a distinct offset below `new_len`.
fn one_to_one(m: &Mapping, len: u64) {
    let new_len = m.new_len(len);
    let mut seen = HashSet::new();
    for o in 0..len {
        let to = m.map(o, len);
        assert!(to < new_len, "{m:?}: {o} → {to} ≥ {new_len} (len {len})");
        assert!(seen.insert(to), "{m:?}: two bytes land on {to} (len {len})");
    }
}

/// A shape of `element` bytes with fields at the given (offset, size), clipped and disjoint.
fn shape(element: u64, cuts: &[(u64, u64)]) -> Shape {
    let mut fields: Vec<(String, u64, u64)> = cuts
        .iter()
        .map(|&(o, s)| (o % element, s % 9 + 1))
        .enumerate()
        .map(|(i, (o, s))| (format!("f{i}"), o, s))
        .collect();
    fields.sort_by_key(|f| f.1);
    Shape::new(element, &fields)
}

proptest! {
    #[test]
    fn every_mapping_is_one_to_one(
        element in 1u64..48,
        cuts in prop::collection::vec((0u64..64, 0u64..16), 0..6),
        order in prop::collection::vec(0usize..8, 0..8),
        groups in 1usize..4,
        count in 0u64..12,
        tail in 0u64..8,
        pad in 0u64..24,
    ) {
        let s = shape(element, &cuts);
        let len = count * element + tail.min(element - 1);
        let pieces = s.pieces.len();
        // Split into groups, reorder, every piece alone.
        let mut split: Vec<Vec<usize>> = vec![Vec::new(); groups];
        for (i, &p) in order.iter().enumerate() {
            split[i % groups].push(p % pieces);
        }
        let reorder: Vec<usize> = order.iter().map(|p| p % pieces).collect();
        let alone: Vec<Vec<usize>> = (0..pieces).map(|p| vec![p]).collect();
        for m in [
            Mapping::groups(&s, &split),
            Mapping::groups(&s, &[reorder]),
            Mapping::groups(&s, &alone),
            Mapping::Stride { element, stride: element + pad },
            Mapping::Rows { row: element, pad },
            Mapping::Same,
        ] {
            one_to_one(&m, len);
        }
    }
}

#[test]
fn size_preserving_changes_stay_in_place_and_splits_give_arrays() {
    // struct { double x; char tag[24]; double y; } × 4: x alone, then the rest.
    let s = Shape::new(
        40,
        &[
            ("x".into(), 0, 8),
            ("tag".into(), 8, 24),
            ("y".into(), 32, 8),
        ],
    );
    let m = Mapping::groups(&s, &[vec![0]]);
    assert_eq!(m.new_len(160), 160);
    // x of element i at 8i; the rest (tag, y) of element i at 32 + 32i.
    for i in 0..4 {
        assert_eq!(m.map(40 * i, 160), 8 * i);
        assert_eq!(m.map(40 * i + 8, 160), 32 + 32 * i);
        assert_eq!(m.map(40 * i + 33, 160), 32 + 32 * i + 25);
    }
    // Rows of 4096 bytes padded by 64.
    let rows = Mapping::Rows { row: 4096, pad: 64 };
    assert_eq!(rows.map(3 * 4096 + 5, 8 * 4096), 3 * 4160 + 5);
}

/// A heap block of `size` bytes at `addr`, allocated from call site 0x1000 (named `0x1000`:
/// no module to name it).
fn alloc(addr: u64, size: u64) -> Event {
    Event {
        position: 0,
        kind: EventKind::Alloc {
            addr,
            size,
            stack: vec![0x1001],
        },
    }
}

fn relaid(specs: &[&str], events: Vec<Event>, trace: &[Access]) -> crate::Result<Vec<Access>> {
    let changes = specs
        .iter()
        .map(|s| s.parse::<Change>())
        .collect::<crate::Result<Vec<_>>>()?;
    let events = Box::new(events.into_iter().map(Ok));
    let mut r = Relayout::new(changes, Some(events), None, 64)?;
    let mut batch: Batch = trace.iter().copied().collect();
    r.apply(&mut batch)?;
    r.finish()?;
    Ok(batch.iter().collect())
}

#[test]
fn a_heap_site_is_padded_one_to_one_and_nothing_else_moves() {
    // 16 elements of 8 bytes at 0x10000, padded to 24 bytes; 0x9000 is not in the block.
    let trace: Vec<Access> = (0..128)
        .map(|b| Access::load(0x10000 + b, 1))
        .chain([Access::store(0x9000, 8)])
        .collect();
    let out = relaid(&["pad:0x1000@8=24"], vec![alloc(0x10000, 128)], &trace).unwrap();
    let moved: HashSet<u64> = out[..128].iter().map(|a| a.addr).collect();
    assert_eq!(moved.len(), 128, "one to one");
    let base = out[0].addr;
    assert_eq!(
        base % 4096,
        0x10000 % 4096,
        "its place within a page is kept"
    );
    assert!(
        base >= 0x100 << 40,
        "a growing instance moves to a region of its own"
    );
    for (b, a) in out[..128].iter().enumerate() {
        let b = b as u64;
        assert_eq!(a.addr, base + b / 8 * 24 + b % 8);
    }
    assert_eq!(out[128].addr, 0x9000);
}

#[test]
fn identity_changes_leave_the_trace_as_it_was() {
    let trace: Vec<Access> = (0..200u64)
        .map(|i| Access::load(0x10000 + (i * 37) % 160, 4))
        .collect();
    for spec in [
        "pad:0x1000@16=16",
        "split:0x1000@16=+0:16",
        "reorder:0x1000@16=+0:8,+8:8",
        "pad-rows:0x1000=0@32",
    ] {
        let out = relaid(&[spec], vec![alloc(0x10000, 160)], &trace).unwrap();
        assert_eq!(out, trace, "{spec}");
    }
}

#[test]
fn own_line_gives_each_thread_lines_of_its_own() {
    // Four 8-byte counters, thread t + 1 writing counter t.
    let mut batch = Batch::new();
    for round in 0..3 {
        for t in 0..4u64 {
            batch.set_thread(t as u32 + 1);
            batch.push(Access::store(0x20000 + 8 * ((t + round) % 4), 8));
        }
    }
    let changes = vec!["own-line:0x1000@8".parse::<Change>().unwrap()];
    let events = Box::new(vec![Ok(alloc(0x20000, 32))].into_iter());
    let mut r = Relayout::new(changes, Some(events), None, 64).unwrap();
    r.apply(&mut batch).unwrap();
    // Each counter goes to the line of the thread that touched it first: 4 lines, one each.
    let first: Vec<u64> = batch.iter().take(4).map(|a| a.addr >> 6).collect();
    let distinct: HashSet<u64> = first.iter().copied().collect();
    assert_eq!(distinct.len(), 4, "{first:x?}");
    // The same counter keeps its new address whichever thread touches it later.
    let all: HashSet<u64> = batch.iter().map(|a| a.addr).collect();
    assert_eq!(all.len(), 4);
}

#[test]
fn nontemporal_takes_the_stores_out() {
    let trace = vec![
        Access::store(0x30000, 8),
        Access::load(0x30008, 8),
        Access::store(0x9000, 8),
        Access {
            addr: 0x30010,
            size: 8,
            kind: AccessKind::Instr,
            pc: None,
        },
    ];
    let out = relaid(&["nontemporal:0x1000"], vec![alloc(0x30000, 64)], &trace).unwrap();
    assert_eq!(out, trace[1..].to_vec());
}

#[test]
fn bad_changes_are_clear_errors() {
    let trace = vec![Access::load(0x10000, 8)];
    let e = relaid(&["pad:missing=64"], vec![alloc(0x10000, 64)], &trace).unwrap_err();
    assert!(e.to_string().contains("no structure called missing"), "{e}");
    assert!(e.to_string().contains("0x1000"), "names what is there: {e}");
    let e = relaid(&["split:0x1000=x"], vec![alloc(0x10000, 64)], &trace).unwrap_err();
    assert!(e.to_string().contains("no names"), "{e}");
    let e = relaid(&["pad:0x1000@16=8"], vec![alloc(0x10000, 64)], &trace).unwrap_err();
    assert!(e.to_string().contains("larger"), "{e}");
    let e = relaid(&["pad:0x1000=64"], vec![alloc(0x10000, 64)], &trace).unwrap_err();
    assert!(e.to_string().contains("@BYTES"), "{e}");
    let e = relaid(&["pad:x=64", "move:x=0@64"], vec![], &trace).unwrap_err();
    assert!(e.to_string().contains("two changes"), "{e}");
}
