//! StatCache sampling by chunks against the sequential sampler: the same seed gives the same
//! profile, sample for sample, for any chunking (random and adversarial) and thread count, on
//! random traces, native files and the kept native fixture.

use cachescope::analysis::Analysis;
use cachescope::parallel;
use cachescope::pass::{Pass, Sampling};
use cachescope::sampling::{Profile, Sampler, SamplerOptions};
use cachescope::trace::native::{Header, Writer};
use cachescope::trace::{OpenOptions, Trace};
use cachescope::{Access, Batch, LineSize, Source};
use proptest::prelude::*;

mod common;
use common::{accesses, chunked, lcg_trace, native_file};

fn options(rate: f64, seed: u64, include_instructions: bool) -> SamplerOptions {
    SamplerOptions {
        rate,
        seed,
        slot_refs: 50,
        line_size: LineSize::new(64).unwrap(),
        include_instructions,
    }
}

fn sequential(o: SamplerOptions, trace: &[Access]) -> Profile {
    let mut s = Sampler::new(o).unwrap();
    let batch: Batch = trace.iter().copied().collect();
    s.observe(&batch);
    s.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn chunked_sampling_equals_sequential(
        spec in prop::collection::vec((0u8..4, 0u16..40), 0..500),
        cuts in prop::collection::vec(0usize..500, 0..12),
        rate in prop::sample::select(vec![1.0, 0.5, 0.1, 0.02]),
        seed in 0u64..1000,
        instr in any::<bool>(),
        threads in 1usize..5,
        batch in 1usize..200,
    ) {
        let trace = accesses(&spec);
        let o = options(rate, seed, instr);
        let got = parallel::sample_chunks(o, &chunked(&trace, &cuts, batch), threads).unwrap();
        prop_assert_eq!(got, sequential(o, &trace));
    }

    #[test]
    fn wide_traces_sample_the_same_too(
        spec in prop::collection::vec((0u8..4, any::<u16>()), 0..800),
        cuts in prop::collection::vec(0usize..800, 0..6),
        seed in 0u64..1000,
    ) {
        let trace = accesses(&spec);
        let o = options(0.3, seed, false);
        let got = parallel::sample_chunks(o, &chunked(&trace, &cuts, 64), 3).unwrap();
        prop_assert_eq!(got, sequential(o, &trace));
    }
}

#[test]
fn watchpoints_cross_many_chunks_and_fetch_only_chunks() {
    // Line 0 sampled first and reused only at the end, 300 lines between, every access its own
    // chunk; fetch-only chunks count no reference.
    let mut spec = vec![(1u8, 0u16)];
    spec.extend((0..600).map(|i| ((i % 4) as u8, 1 + (i % 300) as u16)));
    spec.push((1, 0));
    spec.extend((0..50).map(|i| (1, (i * 7 % 301) as u16)));
    let trace = accesses(&spec);
    let every: Vec<usize> = (1..trace.len()).collect();
    for o in [
        options(1.0, 1, false),
        options(0.2, 9, false),
        options(0.2, 9, true),
    ] {
        let want = sequential(o, &trace);
        assert!(want.reuses() > 0 && want.dangling() > 0);
        for threads in [1, 2, 4] {
            assert_eq!(
                parallel::sample_chunks(o, &chunked(&trace, &every, 1), threads).unwrap(),
                want
            );
            let few = [1, 2, trace.len() - 51];
            assert_eq!(
                parallel::sample_chunks(o, &chunked(&trace, &few, 7), threads).unwrap(),
                want
            );
        }
    }
}

fn sample_file(path: &std::path::Path, o: SamplerOptions, mut c: Pass) -> Profile {
    let mut t = cachescope::trace::open(path, &OpenOptions::default()).unwrap();
    c.run(&mut t, Sampling(o)).unwrap()
}

#[test]
fn native_files_by_segment_for_1_2_4_threads() {
    let trace = lcg_trace(60_000, 3000);
    let file = native_file(&trace, 1000);
    for o in [options(0.01, 3, false), options(0.2, 4, true)] {
        let want = sequential(o, &trace);
        assert!(want.samples().len() > 100);
        for threads in [1, 2, 3, 4, 7] {
            for segment in [1, 2500, 20_000, 1 << 22] {
                let c = Pass::new(threads).segment(segment);
                assert_eq!(sample_file(file.path(), o, c), want, "{c:?}");
            }
        }
        // Read sequentially (not a native file): one sampler, same profile.
        let batch: Batch = trace.iter().copied().collect();
        let mut bytes = Vec::new();
        let mut w = Writer::new(&mut bytes, Header::new()).unwrap();
        w.write_batch(&batch).unwrap();
        w.finish().unwrap();
        let mut t = Trace::from_read(
            std::io::Cursor::new(bytes),
            Source::Memory,
            None,
            &OpenOptions::default(),
        )
        .unwrap();
        assert_eq!(Pass::new(2).run(&mut t, Sampling(o)).unwrap(), want);
    }
}

#[test]
fn the_kept_native_fixture_samples_the_same_for_1_2_4_threads() {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native-v1.cst");
    for o in [options(0.05, 1, false), options(0.5, 2, true)] {
        let one = sample_file(&path, o, Pass::new(1));
        assert!(one.reuses() > 0, "{one:?}");
        for threads in [2, 4] {
            for segment in [1, 100, 250] {
                let c = Pass::new(threads).segment(segment);
                assert_eq!(sample_file(&path, o, c), one, "{c:?}");
            }
        }
    }
}

#[test]
fn a_damaged_block_is_an_error_naming_the_file() {
    let trace = lcg_trace(5000, 500);
    let file = native_file(&trace, 500);
    common::damage_middle(file.path());
    for threads in [1, 2, 4] {
        let mut t = cachescope::trace::open(file.path(), &OpenOptions::default()).unwrap();
        let mut c = Pass::new(threads).segment(500);
        let err = c.run(&mut t, Sampling(options(0.1, 1, false))).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&file.path().display().to_string()), "{msg}");
    }
}

#[test]
fn an_empty_trace_gives_the_empty_profile() {
    let o = options(0.5, 1, false);
    let want = sequential(o, &[]);
    assert_eq!(parallel::sample_chunks(o, &[], 3).unwrap(), want);
    let file = native_file(&[], 1000);
    assert_eq!(sample_file(file.path(), o, Pass::new(2)), want);
}
