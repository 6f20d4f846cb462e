//! The two ways a pass is stopped from outside: an interruption request and an exceeded memory
//! budget. Both are process-wide, so each gets a test binary of its own (this one), and the
//! checks run in one test in order.

use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::{self, StackDistanceAnalysis};
use cachescope::trace::Trace;
use cachescope::workloads::{self, Params, Workload};
use cachescope::{Error, Source, budget, interrupt};

fn random_trace(lines: u64, refs: u64) -> Trace {
    let p = Params {
        lines,
        refs: Some(refs),
        ..Params::default()
    };
    let g = workloads::generator(Workload::Random, &p).unwrap();
    Trace::from_reader(Box::new(g), Source::Workload("random".into()))
}

#[test]
fn memory_budget_then_interruption_stop_the_pass() {
    // Within the limit: the pass completes and the tables return their charge when dropped.
    budget::set_limit(Some(64 << 20));
    {
        let mut sd = StackDistanceAnalysis::new(reuse::Options::default());
        let n = Pass::new(1).run(&mut random_trace(10_000, 200_000), Analyses(&mut [&mut sd]));
        assert_eq!(n.unwrap(), 200_000);
        assert!(budget::charged() >= 10_000 * 16, "{}", budget::charged());
    }
    assert_eq!(budget::charged(), 0);
    assert!(budget::check().is_ok());

    // Past the limit: a clear error at the next batch, long before the trace ends.
    budget::set_limit(Some(1 << 20));
    let mut sd = StackDistanceAnalysis::new(reuse::Options::default());
    let mut seen = 0;
    let err = Pass::new(1)
        .with_progress(|n| seen = n)
        .run(
            &mut random_trace(4_000_000, 8_000_000),
            Analyses(&mut [&mut sd]),
        )
        .unwrap_err();
    match err {
        Error::MemoryLimit { limit, needed } => {
            assert_eq!(limit, 1 << 20);
            assert!(needed > limit);
        }
        e => panic!("expected a memory-limit error, got {e}"),
    }
    assert!(seen < 1_000_000, "stopped only after {seen} references");
    // Past the refusal the table only grows when 7/8 full, and the pass ends within a batch
    // (65 536 references): a few times the limit, not the 4 M lines of the trace (64+ MiB).
    assert!(
        sd.stack().heap_bytes() < 8 << 20,
        "{}",
        sd.stack().heap_bytes()
    );

    // An interruption request stops every pass at its next batch.
    interrupt::request();
    let mut sd = StackDistanceAnalysis::new(reuse::Options::default());
    let err = Pass::new(1)
        .run(&mut random_trace(100, 1_000), Analyses(&mut [&mut sd]))
        .unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
}
