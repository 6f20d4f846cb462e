use super::*;
use crate::access::Access;

/// Records every step: the stack of keys each run of accesses saw, and every frame left.
#[derive(Default)]
struct Log {
    runs: Vec<(std::ops::Range<usize>, ThreadId, Vec<u64>)>,
    left: Vec<(ThreadId, u64, Option<u64>)>,
}

impl Frames for Log {
    type Frame = u64;
    fn enter(&mut self, _: ThreadId, key: u64, _: EnterKind, _: Option<&u64>) -> u64 {
        key
    }
    fn leave(&mut self, thread: ThreadId, frame: u64, below: Option<&u64>) {
        self.left.push((thread, frame, below.copied()));
    }
}

fn enter(key: u64) -> CallOp {
    CallOp::Enter {
        key,
        kind: EnterKind::Call,
    }
}

fn load(a: u64) -> Access {
    Access::load(a, 8)
}

#[test]
fn steps_split_runs_at_events_and_threads_in_order() {
    let mut b = Batch::new();
    b.push_call(1, enter(0xa));
    b.push(load(0));
    b.push(load(8));
    b.push_call(1, enter(0xb));
    b.push(load(16));
    b.set_thread(2);
    b.push(load(24));
    b.push_call(2, CallOp::Leave { frames: 1 });
    let steps: Vec<_> = b.steps().collect();
    let e = b.calls();
    assert_eq!(
        steps,
        [
            Step::Call(&e[0]),
            Step::Accesses(0..2, 1),
            Step::Call(&e[1]),
            Step::Accesses(2..3, 1),
            Step::Accesses(3..4, 2),
            Step::Call(&e[2]),
        ]
    );
}

#[test]
fn stacks_are_per_thread_and_leaving_pops_innermost_first() {
    let mut b = Batch::new();
    b.push_call(1, enter(0xa));
    b.push_call(1, enter(0xb));
    b.push(load(0));
    b.set_thread(2);
    b.push_call(2, enter(0xc));
    b.push(load(8));
    b.set_thread(1);
    b.push(load(16));
    b.push_call(1, CallOp::Leave { frames: 2 });
    b.push(load(24));
    let (mut stacks, mut log) = (Stacks::default(), Log::default());
    stacks.walk(&b, &mut log, |log, r, t, s| {
        log.runs.push((r, t, s.to_vec()))
    });
    assert_eq!(
        log.runs,
        [
            (0..1, 1, vec![0xa, 0xb]),
            (1..2, 2, vec![0xc]),
            (2..3, 1, vec![0xa, 0xb]),
            (3..4, 1, vec![]),
        ]
    );
    assert_eq!(log.left, [(1, 0xb, Some(0xa)), (1, 0xa, None)]);
    assert_eq!(stacks.events(), 4);
    // A reset leaves every thread's frames; leaving more than a thread has stops at empty.
    let mut r = Batch::new();
    r.push_call(1, enter(0xd));
    r.push_call(1, CallOp::Leave { frames: 5 });
    r.push_call(1, enter(0xe));
    r.push_call(1, CallOp::Reset);
    stacks.walk(&r, &mut log, |_, _, _, _| {});
    assert_eq!(
        &log.left[2..],
        [(1, 0xd, None), (1, 0xe, None), (2, 0xc, None)]
    );
    assert!(stacks.stack(1).is_empty() && stacks.stack(2).is_empty());
}

#[test]
fn ranges_keep_their_events_and_truncation_drops_later_ones() {
    let mut b = Batch::new();
    b.push(load(0));
    b.push_call(1, enter(0xa));
    b.push(load(8));
    b.push(load(16));
    b.push_call(1, CallOp::Leave { frames: 1 });
    let mut part = Batch::new();
    part.push(load(99));
    part.extend_from_range(&b, 1..3);
    assert_eq!(part.len(), 3);
    // The event before access 1 is now before access 2; the one after the end is kept.
    assert_eq!(
        part.calls().iter().map(|e| e.at).collect::<Vec<_>>(),
        [1, 3]
    );
    let mut head = Batch::new();
    head.extend_from_range(&b, 0..1);
    assert_eq!(
        head.calls().len(),
        0,
        "the event before access 1 is the next range's"
    );
    b.truncate(1);
    assert_eq!(b.calls().len(), 1);
    assert!(
        b.set_calls(&[CallEvent {
            at: 5,
            thread: 1,
            op: enter(1)
        }])
        .is_err()
    );
}
