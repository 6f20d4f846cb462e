use super::*;

#[test]
fn push_get_round_trip() {
    let a = Access {
        addr: 0x1000,
        size: 8,
        kind: AccessKind::Modify,
        pc: Some(0x400),
    };
    let b = Access::load(0x2000, 4);
    let batch: Batch = [a, b].into_iter().collect();
    assert_eq!(batch.len(), 2);
    assert_eq!(batch.iter().collect::<Vec<_>>(), vec![a, b]);
}

#[test]
fn keep_counted_cuts_after_the_nth_counted_access() {
    let i = Access {
        kind: AccessKind::Instr,
        ..Access::load(0x400, 4)
    };
    let d = |a| Access::load(a, 8);
    let all: Batch = [i, d(0), i, d(8), i, d(16)].into_iter().collect();
    let data = |k| k != AccessKind::Instr;
    for (n, kept, len) in [(0, 0, 0), (1, 1, 2), (2, 2, 4), (3, 3, 6), (9, 3, 6)] {
        let mut b = all.clone();
        assert_eq!(b.keep_counted(n, data), kept, "n = {n}");
        assert_eq!(b.len(), len, "n = {n}");
        assert_eq!(
            b.iter().collect::<Vec<_>>(),
            all.iter().take(len).collect::<Vec<_>>()
        );
    }
}

/// A batch built by `ops` (`Some(t)`: switch to thread t; `None`: push an access) beside the
/// thread of each access, kept naively.
fn built(ops: &[Option<ThreadId>]) -> (Batch, Vec<ThreadId>) {
    let (mut b, mut naive, mut now) = (Batch::new(), Vec::new(), crate::MAIN_THREAD);
    for (i, op) in ops.iter().enumerate() {
        match op {
            Some(t) => {
                b.set_thread(*t);
                now = *t;
            }
            None => {
                b.push(Access::load(i as u64, 1));
                naive.push(now);
            }
        }
    }
    (b, naive)
}

fn ops() -> impl proptest::strategy::Strategy<Value = Vec<Option<ThreadId>>> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop_oneof![3 => Just(None), 1 => (1u32..4).prop_map(Some)],
        0..60,
    )
}

proptest::proptest! {
    #[test]
    fn thread_runs_agree_with_a_thread_per_access(ops in ops()) {
        let (b, naive) = built(&ops);
        let per_access: Vec<ThreadId> = (0..b.len()).map(|i| b.thread_at(i)).collect();
        proptest::prop_assert_eq!(&per_access, &naive);
        let from_runs: Vec<ThreadId> = b.thread_runs().flat_map(|(r, t)| r.map(move |_| t)).collect();
        proptest::prop_assert_eq!(&from_runs, &naive);
        // Canonical: no empty run, no run repeating the thread before it.
        let runs: Vec<_> = b.thread_runs().collect();
        proptest::prop_assert!(runs.windows(2).all(|w| w[0].1 != w[1].1));
        let distinct: std::collections::BTreeSet<_> = naive.iter().collect();
        proptest::prop_assert_eq!(b.single_thread().is_some(), distinct.len() <= 1);
        // Rebuilt access by access, or from its switches, it is the same batch.
        let mut again = Batch::new();
        for (t, a) in b.iter_threaded() {
            again.set_thread(t);
            again.push(a);
        }
        proptest::prop_assert_eq!(&again, &b);
        let mut decoded: Batch = b.iter().collect();
        decoded.set_thread_switches(b.thread_switches()).unwrap();
        proptest::prop_assert_eq!(&decoded, &b);
    }

    #[test]
    fn truncating_and_copying_ranges_keep_each_access_thread(ops in ops(), cut in 0usize..60, from in 0usize..60) {
        let (b, naive) = built(&ops);
        let mut t = b.clone();
        t.truncate(cut);
        let kept: Vec<ThreadId> = (0..t.len()).map(|i| t.thread_at(i)).collect();
        proptest::prop_assert_eq!(&kept[..], &naive[..cut.min(naive.len())]);
        let lo = from.min(b.len());
        let hi = cut.clamp(lo, b.len());
        let mut c = Batch::new();
        c.set_thread(9);
        c.push(Access::load(1, 1));
        c.extend_from_range(&b, lo..hi);
        let copied: Vec<ThreadId> = (1..c.len()).map(|i| c.thread_at(i)).collect();
        proptest::prop_assert_eq!(&copied[..], &naive[lo..hi]);
        proptest::prop_assert_eq!(c.addrs[1..].to_vec(), b.addrs[lo..hi].to_vec());
    }
}

#[test]
fn a_decoder_s_switches_are_checked() {
    let mut b: Batch = (0..4).map(|a| Access::load(a, 1)).collect();
    let run = |start, thread| ThreadRun { start, thread };
    assert!(b.set_thread_switches(&[run(1, 2), run(3, 1)]).is_ok());
    assert_eq!(b.thread_at(0), 1);
    assert_eq!(b.thread_at(2), 2);
    assert_eq!(b.thread_at(3), 1);
    for bad in [
        vec![run(0, 1)],
        vec![run(2, 2), run(1, 3)],
        vec![run(1, 2), run(2, 2)],
        vec![run(4, 2)],
    ] {
        assert!(b.set_thread_switches(&bad).is_err(), "{bad:?}");
    }
    // A switch with nothing pushed after it is undone by switching back.
    b.set_thread(5);
    b.set_thread(1);
    assert_eq!(b.current_thread(), 1);
    assert_eq!(b.thread_switches(), &[run(1, 2), run(3, 1)]);
}

/// A batch of `kinds` (0 = fetch, else a data kind) at addresses 0, 8, 16…
fn of_kinds(kinds: &[u8]) -> Batch {
    kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let kind = [
                AccessKind::Instr,
                AccessKind::Load,
                AccessKind::Store,
                AccessKind::Modify,
            ][usize::from(k % 4)];
            Access {
                kind,
                ..Access::load(8 * i as u64, 4)
            }
        })
        .collect()
}

proptest::proptest! {
    #[test]
    fn the_data_index_is_the_data_references_addresses(kinds in proptest::collection::vec(0u8..4, 0..300)) {
        let mut b = of_kinds(&kinds);
        proptest::prop_assert!(b.data_addrs().is_none());
        b.index_data();
        let want: Vec<u64> = b
            .iter()
            .filter(|a| a.kind != AccessKind::Instr)
            .map(|a| a.addr)
            .collect();
        proptest::prop_assert_eq!(b.data_addrs(), Some(&want[..]));
        let at: Vec<u32> = (0..b.len() as u32)
            .filter(|&i| b.kinds[i as usize] != AccessKind::Instr)
            .collect();
        proptest::prop_assert_eq!(b.data_positions(), Some(&at[..]));
    }
}

#[test]
fn changing_the_batch_forgets_its_data_index() {
    let mut b = of_kinds(&[1, 0, 2]);
    b.index_data();
    assert_eq!(b.data_addrs(), Some(&[0, 16][..]));
    b.push(Access::load(99, 1));
    assert_eq!(b.data_addrs(), None, "an access added");
    b.index_data();
    b.truncate(3);
    assert_eq!(b.data_addrs(), None, "truncated");
    // Cleared and refilled to the same length: the old column must not come back.
    b.index_data();
    b.clear();
    b.extend(of_kinds(&[0, 0, 0]).iter());
    assert_eq!(b.data_addrs(), None, "cleared and refilled");
    b.index_data();
    assert_eq!(b.data_addrs(), Some(&[][..]));
    // A clone keeps it: it is the clone's data.
    assert_eq!(b.clone().data_addrs(), Some(&[][..]));
}
