//! The sentinel filter on hand-written lackey traces and interposer logs.

use super::*;
use crate::access::AccessKind;
use crate::attribution::events::{Event, EventKind};
use crate::batch::Batch;
use crate::error::{Result, Source};
use crate::record::log::LogReader;
use crate::trace::AccessReader;
use crate::trace::lackey;

const S: u64 = CANDIDATES[0];

/// Kept references and events.
type Filtered = (Vec<(AccessKind, u64)>, Vec<Event>);

/// A lackey text and an interposer log, through the filter with batches of `batch` refs.
fn run(lackey_text: &str, log: &str, batch: usize) -> Result<Filtered> {
    struct Small<R>(R, usize, Batch);
    impl<R: AccessReader> AccessReader for Small<R> {
        fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
            // Re-chunk the inner reader's output into batches of at most `self.1`.
            out.clear();
            if self.2.is_empty() && self.0.read_batch(&mut self.2)? == 0 {
                return Ok(0);
            }
            let take = self.1.min(self.2.len());
            for i in 0..take {
                out.push(self.2.get(i));
            }
            let rest: Vec<_> = (take..self.2.len()).map(|i| self.2.get(i)).collect();
            self.2.clear();
            for a in rest {
                self.2.push(a);
            }
            Ok(take)
        }
    }
    let inner = lackey::Reader::new(
        std::io::Cursor::new(lackey_text.as_bytes().to_vec()),
        Source::Memory,
        lackey::Options::default(),
    );
    let (tx, rx) = crossbeam_channel::unbounded();
    let log = LogReader::new(
        std::io::Cursor::new(log.as_bytes().to_vec()),
        Source::Memory,
    );
    let mut f = SentinelFilter::new(
        Small(inner, batch, Batch::new()),
        Box::new(log),
        tx,
        Source::Memory,
    );
    let mut b = Batch::new();
    let mut refs = Vec::new();
    while f.read_batch(&mut b)? > 0 {
        refs.extend((0..b.len()).map(|i| (b.kinds[i], b.addrs[i])));
    }
    drop(f);
    Ok((refs, rx.iter().collect()))
}

fn trace() -> String {
    // Program refs at 0x100.., an allocation (seq 1) bracketed with interposer work at
    // 0x900.., then a free (seq 2).
    format!(
        "I  100,4\n L 1000,8\n\
         I  104,4\n S {open1:x},1\nI  900,4\n S 9000,8\n S {close1:x},1\n\
         I  108,4\n S 5000,4\n M 5004,4\n\
         L {open2:x},1\nI  904,4\n S {close2:x},1\n\
         I  10c,4\n",
        open1 = S + 2,
        close1 = S + 3,
        open2 = S + 4,
        close2 = S + 5,
    )
}

const LOG: &str = "H 1 7 3ca7e0000000\nA 1 5000 8 401000\nF 2 5000\n";

fn expect() -> Filtered {
    use AccessKind::*;
    (
        vec![
            (Instr, 0x100),
            (Load, 0x1000),
            (Instr, 0x104),
            (Instr, 0x108),
            (Store, 0x5000),
            (Modify, 0x5004),
            (Instr, 0x10c),
        ],
        vec![
            Event {
                position: 3,
                kind: EventKind::Alloc {
                    addr: 0x5000,
                    size: 8,
                    stack: vec![0x40_1000],
                },
            },
            Event {
                position: 6,
                kind: EventKind::Free { addr: 0x5000 },
            },
        ],
    )
}

#[test]
fn brackets_inside_one_batch_are_removed_and_placed() {
    assert_eq!(run(&trace(), LOG, 1 << 16).unwrap(), expect());
}

#[test]
fn brackets_across_batch_boundaries_give_the_same_result() {
    for batch in 1..8 {
        assert_eq!(
            run(&trace(), LOG, batch).unwrap(),
            expect(),
            "batch {batch}"
        );
    }
}

#[test]
fn interleaved_brackets_of_two_threads() {
    // Thread A opens 1, thread B opens and closes 2, A closes 1; B's record came first.
    let t = format!(
        " L 10,8\n S {:x},1\n L 900,8\n S {:x},1\n L 901,8\n S {:x},1\n L 902,8\n S {:x},1\n L 20,8\n",
        S + 2,
        S + 4,
        S + 5,
        S + 3
    );
    let log = "F 2 7000\nA 1 5000 8\n";
    let (refs, events) = run(&t, log, 3).unwrap();
    assert_eq!(
        refs,
        vec![(AccessKind::Load, 0x10), (AccessKind::Load, 0x20)]
    );
    assert_eq!(
        events,
        vec![
            Event {
                position: 1,
                kind: EventKind::Free { addr: 0x7000 }
            },
            Event {
                position: 1,
                kind: EventKind::Alloc {
                    addr: 0x5000,
                    size: 8,
                    stack: vec![]
                }
            },
        ]
    );
}

#[test]
fn a_sequence_mismatch_is_a_clear_error() {
    // The trace closes event 3 but the log only knows events 1 and 2.
    let t = format!(" L 10,8\n S {:x},1\n S {:x},1\n", S + 6, S + 7);
    let err = run(&t, LOG, 64).unwrap_err().to_string();
    assert!(
        err.contains("reference 2") && err.contains("event 3"),
        "{err}"
    );
    assert!(err.contains("no such record"), "{err}");
    // A close without its open.
    let t = format!(" L 10,8\n S {:x},1\n", S + 3);
    let err = run(&t, LOG, 64).unwrap_err().to_string();
    assert!(err.contains("without its open"), "{err}");
}

#[test]
fn addresses_next_to_the_region_are_kept() {
    let t = format!(" L {:x},8\n S {:x},8\n", S - 1, S + REGION_LEN);
    let (refs, events) = run(&t, "", 64).unwrap();
    assert_eq!(refs.len(), 2);
    assert!(events.is_empty());
    assert_eq!(region_of(S + REGION_LEN - 1), Some(S));
    assert_eq!(region_of(CANDIDATES[2] + 5), Some(CANDIDATES[2]));
}
