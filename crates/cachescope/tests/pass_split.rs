//! `pass::Independent`, the pass that shares independent analyses out over the threads as it
//! goes: every analysis sees every batch in order whichever thread runs it, however uneven
//! their costs; a damaged trace or a panicking analysis ends the pass instead of hanging it.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::ThreadId;

use cachescope::analysis::Analysis;
use cachescope::pass::{Analyses, Independent, Pass};
use cachescope::trace::OpenOptions;
use cachescope::{Access, Batch};

mod common;
use common::{lcg_trace, native_file};

/// Records each batch it sees (first address, length) and a hash of its addresses repeated
/// `work` times, so that lanes cost unevenly and move between threads.
#[derive(Default)]
struct Record {
    seen: Vec<(u64, usize)>,
    work: u32,
    hash: u64,
    panic_at: Option<usize>,
    threads: HashSet<ThreadId>,
}

impl Record {
    fn new(work: u32) -> Record {
        Record {
            work,
            ..Record::default()
        }
    }
}

impl Analysis for Record {
    fn observe(&mut self, batch: &Batch) {
        if self.panic_at == Some(self.seen.len()) {
            panic!("a planted panic");
        }
        self.seen
            .push((batch.addrs.first().copied().unwrap_or(0), batch.len()));
        for _ in 0..self.work {
            self.hash = batch
                .addrs
                .iter()
                .fold(self.hash, |h, &a| (h ^ a).wrapping_mul(0x0100_0000_01b3));
        }
        self.threads.insert(std::thread::current().id());
    }
}

const WORK: [u32; 7] = [0, 1, 0, 24, 0, 0, 3];

fn records() -> Vec<Record> {
    WORK.iter().map(|&w| Record::new(w)).collect()
}

fn run(trace: &[Access], threads: usize, lanes: &mut [Record]) -> cachescope::Result<u64> {
    let file = native_file(trace, 4096);
    let mut t = cachescope::trace::open(file.path(), &OpenOptions::default())?;
    let mut all: Vec<&mut (dyn Analysis + Send)> = lanes
        .iter_mut()
        .map(|r| r as &mut (dyn Analysis + Send))
        .collect();
    Pass::new(threads).run(&mut t, Independent(&mut all))
}

#[test]
fn every_lane_sees_every_batch_in_order_on_any_thread() {
    let trace = lcg_trace(1_500_000, 4000);
    let mut want = records();
    {
        let file = native_file(&trace, 4096);
        let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
        let mut all: Vec<&mut dyn Analysis> =
            want.iter_mut().map(|r| r as &mut dyn Analysis).collect();
        Pass::new(1).run(&mut t, Analyses(&mut all)).unwrap();
    }
    assert!(want[0].seen.len() > 20, "enough batches to move lanes");
    for threads in [2, 3, 8] {
        let mut got = records();
        assert_eq!(run(&trace, threads, &mut got).unwrap(), trace.len() as u64);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.seen, w.seen, "{threads} threads");
            assert_eq!(g.hash, w.hash, "{threads} threads");
        }
        let used: HashSet<ThreadId> = got.iter().flat_map(|r| r.threads.iter().copied()).collect();
        assert!(
            used.len() >= 2,
            "{threads} threads: the lanes ran on {}",
            used.len()
        );
    }
}

#[test]
fn a_panicking_analysis_ends_the_pass_with_its_panic() {
    let trace = lcg_trace(600_000, 4000);
    for threads in [2, 3] {
        let mut lanes = records();
        lanes[3].panic_at = Some(2);
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&trace, threads, &mut lanes)));
        let panic = outcome.expect_err("the analysis's panic reaches the caller");
        let text = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert!(text.contains("panic"), "{text}");
    }
}

#[test]
fn a_damaged_trace_is_an_error_naming_the_file_and_nothing_hangs() {
    let trace = lcg_trace(300_000, 4000);
    let file = native_file(&trace, 4096);
    common::damage_middle(file.path());
    for threads in [2, 3] {
        let mut lanes = records();
        let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
        let mut all: Vec<&mut (dyn Analysis + Send)> = lanes
            .iter_mut()
            .map(|r| r as &mut (dyn Analysis + Send))
            .collect();
        let err = Pass::new(threads)
            .run(&mut t, Independent(&mut all))
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&file.path().display().to_string()), "{msg}");
    }
}
