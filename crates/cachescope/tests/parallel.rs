//! Chunk-parallel analyses against the sequential ones: identical results for any chunking
//! (random and adversarial) and any thread count, on random traces and native files.

use cachescope::analysis::Analysis;
use cachescope::models::hotl::FootprintAnalysis;
use cachescope::parallel::{
    self, FootprintPlan, ReuseTimePlan, StackDistancePlan, StatsPlan, Wire,
};
use cachescope::pass::{Analyses, Independent, Pass, Plan};
use cachescope::reuse::{Layout, Options, ReuseTimeAnalysis, StackDistanceAnalysis};
use cachescope::stats::StatsAnalysis;
use cachescope::trace::{OpenOptions, Trace};
use cachescope::{Access, AccessKind, Batch, LineSize, Source};
use proptest::prelude::*;

mod common;
use common::{accesses, chunked, lcg_trace, native_file};

/// A small layout, so that binned distances are exercised on small traces.
fn options(include_instructions: bool) -> Options {
    Options {
        line_size: LineSize::new(64).unwrap(),
        include_instructions,
        layout: Layout::new(8).unwrap(),
    }
}

fn sequential<A: Analysis>(mut a: A, trace: &[Access]) -> A {
    let batch: Batch = trace.iter().copied().collect();
    a.observe(&batch);
    a
}

/// Every plan, chunked as `chunks`, against its sequential analysis.
fn check_all(trace: &[Access], chunks: &[Vec<Batch>], instr: bool) {
    let o = options(instr);
    let sd = parallel::run_chunks(&StackDistancePlan { options: o }, chunks);
    assert_eq!(
        sd,
        sequential(StackDistanceAnalysis::new(o), trace).finish()
    );
    let rt = parallel::run_chunks(&ReuseTimePlan { options: o }, chunks);
    assert_eq!(rt, sequential(ReuseTimeAnalysis::new(o), trace).finish());
    let windows = [1, 3, 17, 100, 300, 333];
    let fp = parallel::run_chunks(&FootprintPlan::new(o, &windows).unwrap(), chunks);
    let want = sequential(FootprintAnalysis::new(o, &windows).unwrap(), trace).finish();
    assert_eq!(
        serde_json::to_string(&fp).unwrap(),
        serde_json::to_string(&want).unwrap()
    );
    let ls = o.line_size;
    let st = parallel::run_chunks(&StatsPlan { line_size: ls }, chunks);
    assert_eq!(st, sequential(StatsAnalysis::new(ls), trace).finish());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn merged_equals_sequential(
        spec in prop::collection::vec((0u8..4, 0u16..40), 0..400),
        cuts in prop::collection::vec(0usize..400, 0..12),
        instr in any::<bool>(),
    ) {
        let trace = accesses(&spec);
        check_all(&trace, &chunked(&trace, &cuts, usize::MAX), instr);
    }

    #[test]
    fn wide_traces_merge_too(
        spec in prop::collection::vec((0u8..4, any::<u16>()), 0..600),
        cuts in prop::collection::vec(0usize..600, 0..6),
    ) {
        let trace = accesses(&spec);
        check_all(&trace, &chunked(&trace, &cuts, usize::MAX), false);
    }
}

#[test]
fn one_access_per_chunk_and_a_reuse_across_every_chunk() {
    // Line 0 at both ends, 300 other lines (some repeated) between, every access its own chunk.
    let mut spec = vec![(1u8, 0u16)];
    spec.extend((0..600).map(|i| (1 + (i % 3) as u8, 1 + (i % 300) as u16)));
    spec.push((1, 0));
    spec.extend((0..50).map(|i| (1, (i * 7 % 301) as u16)));
    let trace = accesses(&spec);
    let cuts: Vec<usize> = (1..trace.len()).collect();
    check_all(&trace, &chunked(&trace, &cuts, usize::MAX), false);
    check_all(
        &trace,
        &chunked(&trace, &[1, 2, trace.len() - 51], usize::MAX),
        false,
    );
}

fn run_plan<P: Wire>(path: &std::path::Path, plan: &P, mut chunking: Pass) -> P::Output {
    let mut trace = cachescope::trace::open(path, &OpenOptions::default()).unwrap();
    chunking.run(&mut trace, Plan(plan)).unwrap()
}

#[test]
fn native_files_by_index_and_streams_by_segment_for_1_2_4_threads() {
    let trace = lcg_trace(30_000, 3000);
    let o = options(false);
    let want = sequential(StackDistanceAnalysis::new(o), &trace).finish();
    let want_rt = sequential(ReuseTimeAnalysis::new(o), &trace).finish();
    let file = native_file(&trace, 1000);
    let plan = StackDistancePlan { options: o };
    for threads in [1, 2, 3, 4, 7] {
        for segment in [1, 777, 5000, 1 << 22] {
            let c = Pass::new(threads).segment(segment);
            assert_eq!(run_plan(file.path(), &plan, c), want, "{c:?}");
        }
        let c = Pass::new(threads);
        assert_eq!(
            run_plan(file.path(), &ReuseTimePlan { options: o }, c),
            want_rt
        );
        // The same trace as plain text: read sequentially, dealt out in segments.
        let text: String = trace
            .iter()
            .map(|a| {
                let k = if a.kind == AccessKind::Instr {
                    "I"
                } else {
                    "R"
                };
                format!("{k} {:#x} 4\n", a.addr)
            })
            .collect();
        let mut t = Trace::from_read(
            std::io::Cursor::new(text.into_bytes()),
            Source::Memory,
            None,
            &OpenOptions::default(),
        )
        .unwrap();
        let mut c = Pass::new(threads).segment(4000);
        assert_eq!(c.run(&mut t, Plan(&plan)).unwrap(), want);
    }
}

#[test]
fn an_empty_trace_gives_the_empty_result() {
    let o = options(false);
    let want = StackDistanceAnalysis::new(o).finish();
    assert_eq!(
        parallel::run_chunks(&StackDistancePlan { options: o }, &[]),
        want
    );
    let file = native_file(&[], 1000);
    for threads in [1, 2] {
        assert_eq!(
            run_plan(
                file.path(),
                &StackDistancePlan { options: o },
                Pass::new(threads)
            ),
            want
        );
    }
}

#[test]
fn a_damaged_block_is_an_error_naming_the_file() {
    let trace = lcg_trace(5000, 500);
    let file = native_file(&trace, 1000);
    // A byte flipped inside the third block's payload; the index still reads.
    common::damage_middle(file.path());
    for threads in [1, 2, 4] {
        let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
        let plan = StackDistancePlan::default();
        let err = Pass::new(threads).run(&mut t, Plan(&plan)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&file.path().display().to_string()), "{msg}");
    }
}

#[test]
fn independent_analyses_each_see_every_batch() {
    let trace = lcg_trace(20_000, 2000);
    let o = options(true);
    let file = native_file(&trace, 4096);
    let mut want_sd = StackDistanceAnalysis::new(o);
    let mut want_st = StatsAnalysis::new(o.line_size);
    let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
    Pass::new(1)
        .run(&mut t, Analyses(&mut [&mut want_sd, &mut want_st]))
        .unwrap();
    for threads in [1, 2, 4] {
        let mut sd = StackDistanceAnalysis::new(o);
        let mut st = StatsAnalysis::new(o.line_size);
        let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
        let n = Pass::new(threads)
            .run(&mut t, Independent(&mut [&mut sd, &mut st]))
            .unwrap();
        assert_eq!(n, trace.len() as u64);
        assert_eq!(sd.finish(), want_sd.finish());
        assert_eq!(st.finish(), want_st.finish());
    }
}
