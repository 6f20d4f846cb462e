//! The sampler against brute force, the gap generator's law, profile consistency, and the file
//! format's round trip and error handling.

use proptest::prelude::*;

use super::draws::Gaps;
use super::*;
use crate::access::{Access, AccessKind};
use crate::analysis::Analysis;
use crate::batch::Batch;

/// Brute force: for each position (1-based, over `trace`), the StatCache distance to the
/// line's next reference, or `None` if there is none. O(n²).
fn next_uses(trace: &[u64]) -> Vec<Option<u64>> {
    (0..trace.len())
        .map(|j| {
            (j + 1..trace.len())
                .find(|&i| trace[i] == trace[j])
                .map(|i| (i - j - 1) as u64)
        })
        .collect()
}

/// The sample brute force expects at 1-based `position` of `trace`.
fn expected_sample(trace: &[u64], uses: &[Option<u64>], position: u64) -> Sample {
    let next = match uses[position as usize - 1] {
        Some(distance) => NextUse::Reuse { distance },
        None => NextUse::Dangling {
            age: trace.len() as u64 - position,
        },
    };
    Sample { position, next }
}

fn options(rate: f64, seed: u64) -> SamplerOptions {
    SamplerOptions {
        rate,
        seed,
        ..SamplerOptions::default()
    }
}

/// Samples `trace` (lines of 64-byte loads), fed in batches cut at `cuts`.
fn sample(trace: &[u64], o: SamplerOptions, cuts: &[usize]) -> Profile {
    let mut s = Sampler::new(o).unwrap();
    let mut start = 0;
    for &cut in cuts.iter().chain([&trace.len()]) {
        let cut = cut.clamp(start, trace.len());
        let batch: Batch = trace[start..cut]
            .iter()
            .map(|&l| Access::load(l * 64 + (l % 7), 8))
            .collect();
        s.observe(&batch);
        start = cut;
    }
    assert_eq!(s.refs(), trace.len() as u64);
    s.finish()
}

proptest! {
    /// A batch whose data references the pass indexed gives the same samples as the batch
    /// filtered by the sampler itself.
    #[test]
    fn indexed_batches_sample_the_same(
        refs in proptest::collection::vec((0u64..64, any::<bool>()), 1..400),
        seed in any::<u64>(),
    ) {
        let batch: Batch = refs
            .iter()
            .map(|&(l, fetch)| Access {
                kind: if fetch { AccessKind::Instr } else { AccessKind::Load },
                ..Access::load(l * 64, 8)
            })
            .collect();
        let mut indexed = batch.clone();
        indexed.index_data();
        let run = |b: &Batch| {
            let mut s = Sampler::new(options(0.3, seed)).unwrap();
            s.observe(b);
            s.observe(b);
            s.finish()
        };
        prop_assert_eq!(run(&indexed), run(&batch));
    }
}

/// The positions the gap generator picks in `1..=n`.
fn drawn_positions(rate: f64, seed: u64, n: u64) -> Vec<u64> {
    let mut g = Gaps::new(rate, seed);
    let mut out = Vec::new();
    let mut p = g.next_gap();
    while p <= n {
        out.push(p);
        p = p.saturating_add(g.next_gap());
    }
    out
}

proptest! {
    /// Rate 1: every reference is sampled, with exactly its brute-force next use.
    #[test]
    fn rate_one_gives_every_exact_distance(
        trace in proptest::collection::vec(0u64..40, 0..400),
        cuts in proptest::collection::vec(0usize..400, 0..4),
    ) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let p = sample(&trace, options(1.0, 7), &cuts);
        let uses = next_uses(&trace);
        let expected: Vec<Sample> = (1..=trace.len() as u64)
            .map(|i| expected_sample(&trace, &uses, i))
            .collect();
        prop_assert_eq!(p.samples(), &expected[..]);
        prop_assert_eq!(p.dangling(), trace.iter().collect::<std::collections::HashSet<_>>().len() as u64);
    }

    /// Any rate: the sampled positions are the generator's, and each has its exact next use,
    /// across batch boundaries, filter growth and rebuilds.
    #[test]
    fn sampled_positions_have_exact_distances(
        trace in proptest::collection::vec(0u64..3000, 0..3000),
        rate in 0.05f64..1.0,
        seed in any::<u64>(),
        cut in 0usize..3000,
    ) {
        let p = sample(&trace, options(rate, seed), &[cut]);
        let uses = next_uses(&trace);
        let positions = drawn_positions(rate, seed, trace.len() as u64);
        let expected: Vec<Sample> =
            positions.iter().map(|&i| expected_sample(&trace, &uses, i)).collect();
        prop_assert_eq!(p.samples(), &expected[..]);
    }
}

#[test]
fn many_watchpoints_at_once() {
    // A stream of 20 000 fresh lines then the same lines again: at rate 1/2 about 10 000
    // watchpoints are active at the middle, so the filter grows past its smallest size.
    let trace: Vec<u64> = (0..20_000u64).chain(0..20_000).map(|l| l * 977).collect();
    let mut s = Sampler::new(options(0.5, 3)).unwrap();
    let batch: Batch = trace.iter().map(|&l| Access::load(l * 64, 8)).collect();
    s.observe(&batch);
    let p = s.finish();
    let positions = drawn_positions(0.5, 3, 40_000);
    assert_eq!(p.samples().len(), positions.len());
    for (s, &pos) in p.samples().iter().zip(&positions) {
        assert_eq!(s.position, pos);
        let expected = if pos <= 20_000 {
            NextUse::Reuse { distance: 19_999 }
        } else {
            NextUse::Dangling { age: 40_000 - pos }
        };
        assert_eq!(s.next, expected);
    }
}

#[test]
fn instruction_fetches_are_skipped_unless_included() {
    // Data lines a b a with fetches of line a's neighbour interleaved; positions count data
    // references only by default, every reference with `include_instructions`.
    let fetch = |addr| Access {
        addr,
        size: 4,
        kind: AccessKind::Instr,
        pc: Some(addr),
    };
    let batch: Batch = [
        fetch(0x400),
        Access::load(0x1000, 8),
        fetch(0x1000),
        Access::load(0x2000, 8),
        fetch(0x404),
        Access::store(0x1008, 8),
    ]
    .into_iter()
    .collect();
    let mut data = Sampler::new(options(1.0, 1)).unwrap();
    data.observe(&batch);
    let d = data.finish();
    assert_eq!(d.refs(), 3);
    assert_eq!(d.samples()[0].next, NextUse::Reuse { distance: 1 });
    let mut all = Sampler::new(SamplerOptions {
        include_instructions: true,
        ..options(1.0, 1)
    })
    .unwrap();
    all.observe(&batch);
    let a = all.finish();
    assert_eq!(a.refs(), 6);
    // 0x400 and 0x404 share a line (distance 3); the load of 0x1000 is reused by the fetch.
    let distances: Vec<Option<u64>> = a.samples().iter().map(Sample::distance).collect();
    assert_eq!(distances, [Some(3), Some(0), Some(2), None, None, None]);
}

#[test]
fn gaps_are_geometric() {
    // Rate 1: every gap is 1.
    let mut g = Gaps::new(1.0, 9);
    assert!((0..1000).all(|_| g.next_gap() == 1));
    // Mean 1/rate and P(G = 1) = rate, within 4 standard errors over 200 000 gaps.
    for rate in [0.5, 0.01, 1e-4] {
        let mut g = Gaps::new(rate, 5);
        let n = 200_000;
        let gaps: Vec<u64> = (0..n).map(|_| g.next_gap()).collect();
        assert!(gaps.iter().all(|&x| x >= 1));
        let mean = gaps.iter().sum::<u64>() as f64 / n as f64;
        let sd = (1.0 - rate).sqrt() / rate / (n as f64).sqrt();
        assert!(
            (mean - 1.0 / rate).abs() < 4.0 * sd,
            "rate {rate}: mean {mean}"
        );
        let ones = gaps.iter().filter(|&&x| x == 1).count() as f64 / n as f64;
        let sd1 = (rate * (1.0 - rate) / n as f64).sqrt();
        assert!(
            (ones - rate).abs() < 4.0 * sd1 + 1e-9,
            "rate {rate}: P(1) {ones}"
        );
    }
    // A tiny rate saturates instead of overflowing; the same seed repeats the sequence.
    assert!(Gaps::new(1e-300, 1).next_gap() > 1 << 60);
    let a: Vec<u64> = drawn_positions(0.1, 42, 10_000);
    assert_eq!(a, drawn_positions(0.1, 42, 10_000));
    assert_ne!(a, drawn_positions(0.1, 43, 10_000));
}

#[test]
fn bad_options_are_refused() {
    for rate in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let e = Sampler::new(options(rate, 1)).unwrap_err();
        assert!(e.to_string().contains("sampling rate"), "{e}");
    }
    assert!(Sampler::new(options(1.0, 1)).is_ok());
    assert!(Sampler::new(options(f64::MIN_POSITIVE, 1)).is_ok());
    let e = SamplerOptions {
        slot_refs: 0,
        ..SamplerOptions::default()
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("time slot"), "{e}");
}

#[test]
fn working_set_sweep_is_every_eighth_octave() {
    let s = working_set_sizes();
    assert_eq!(s.len(), 20 * 8 + 1);
    assert_eq!((s[0], s[1], s[8], s[160]), (1024, 1152, 2048, 1 << 30));
}

/// The profile of "a b a c b a" at rate 1 (see the module documentation's example).
fn abacba() -> Profile {
    sample(&[1, 2, 1, 3, 2, 1], options(1.0, 1), &[])
}

#[test]
fn profile_checks_consistency() {
    let p = abacba();
    assert_eq!(
        Profile::new(*p.options(), 6, p.samples().to_vec()).unwrap(),
        p
    );
    let s = |position, next| Sample { position, next };
    let bad: [(u64, Vec<Sample>); 5] = [
        (6, vec![s(0, NextUse::Dangling { age: 6 })]),
        (6, vec![s(7, NextUse::Dangling { age: 0 })]),
        (
            6,
            vec![
                s(2, NextUse::Dangling { age: 4 }),
                s(2, NextUse::Dangling { age: 4 }),
            ],
        ),
        (6, vec![s(2, NextUse::Reuse { distance: 4 })]),
        (6, vec![s(2, NextUse::Dangling { age: 3 })]),
    ];
    for (refs, samples) in bad {
        let e = Profile::new(*p.options(), refs, samples.clone()).unwrap_err();
        assert!(
            e.to_string().contains("profile samples"),
            "{samples:?}: {e}"
        );
    }
    assert!(Profile::new(*p.options(), 6, vec![s(2, NextUse::Reuse { distance: 3 })]).is_ok());
    assert!(
        p.expect_line_size(crate::LineSize::new(64).unwrap())
            .is_ok()
    );
    let e = p
        .expect_line_size(crate::LineSize::new(32).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("64-byte lines, not 32"), "{e}");
    let empty = Profile::new(*p.options(), 100, vec![]).unwrap();
    let e = empty.with_source("t.trace").expect_samples().unwrap_err();
    assert!(
        e.to_string()
            .contains("t.trace: no samples in 100 references"),
        "{e}"
    );
}

#[test]
fn slots_follow_the_reuse_position() {
    // a b a c b a with slots of 2 references: slots {1,2} {3,4} {5,6}.
    let p = sample(
        &[1, 2, 1, 3, 2, 1],
        SamplerOptions {
            slot_refs: 2,
            ..options(1.0, 1)
        },
        &[],
    );
    assert_eq!(p.slots().collect::<Vec<_>>(), [2, 2, 2]);
    // Reuses end at 3 (slot 1), 5, 6 (slot 2); dangling at 4 (slot 1), 5, 6 (slot 2).
    let slot = |slot, reuses, dangling| SlotHistogram {
        slot,
        reuses,
        dangling,
    };
    assert_eq!(
        p.slot_histograms(),
        [slot(1, vec![(1, 1.0)], 1), slot(2, vec![(2, 2.0)], 2)]
    );
    assert_eq!(p.histogram(), [(1, 1.0), (2, 2.0)]);
    assert_eq!(
        (p.reuses(), p.dangling(), p.dangling_fraction()),
        (3, 3, 0.5)
    );
    let q = sample(
        &[1; 7],
        SamplerOptions {
            slot_refs: 3,
            ..options(1.0, 1)
        },
        &[],
    );
    assert_eq!(q.slots().collect::<Vec<_>>(), [3, 3, 1]);
}

#[test]
fn sampler_memory_does_not_grow_with_trace_length() {
    // A loop over 1000 lines, 2 M references: at rate 10^-2 about 10 watchpoints are active at
    // any time, and memory is the finished samples plus a small filter and map.
    let mut s = Sampler::new(options(0.01, 1)).unwrap();
    let batch: Batch = (0..1000u64).map(|l| Access::load(l * 64, 8)).collect();
    for _ in 0..2000 {
        s.observe(&batch);
    }
    assert!(s.active() < 60, "{} active", s.active());
    let per_sample = std::mem::size_of::<Sample>();
    let bound = 2 * s.samples() as usize * per_sample + (64 << 10);
    assert!(s.heap_bytes() <= bound, "{} > {bound}", s.heap_bytes());
}

mod file {
    use super::*;
    use crate::error::{Error, Source};

    fn bytes(p: &Profile) -> Vec<u8> {
        let mut b = Vec::new();
        p.write(&mut b, &Source::Memory).unwrap();
        b
    }

    fn read(b: &[u8]) -> crate::Result<Profile> {
        Profile::read(b, &Source::File("p.prof".into()))
    }

    proptest! {
        #[test]
        fn round_trip(
            trace in proptest::collection::vec(0u64..500, 0..2000),
            rate in 0.01f64..=1.0,
            seed in any::<u64>(),
            slot_refs in 1u64..1000,
            instructions in any::<bool>(),
            source in ".{0,40}",
        ) {
            let o = SamplerOptions {
                slot_refs,
                include_instructions: instructions,
                ..options(rate, seed)
            };
            let p = sample(&trace, o, &[]).with_source(source);
            let b = bytes(&p);
            prop_assert!(Profile::looks_like(&b));
            prop_assert_eq!(read(&b).unwrap(), p);
        }
    }

    #[test]
    fn damage_is_reported_never_a_panic() {
        let p = abacba().with_source("abacba");
        let good = bytes(&p);
        // Every cut is truncated (or, cut inside the magic, not recognised).
        for len in 0..good.len() {
            match read(&good[..len]) {
                Err(Error::Truncated { source_name, .. }) => {
                    assert_eq!(source_name, Source::File("p.prof".into()))
                }
                r => panic!("cut at {len}: {r:?}"),
            }
        }
        // Every flipped bit is caught (by the fields' checks or the CRC).
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut b = good.clone();
                b[i] ^= 1 << bit;
                assert!(read(&b).is_err(), "bit {bit} of byte {i}");
            }
        }
        let mut longer = good.clone();
        longer.push(0);
        let e = read(&longer).unwrap_err().to_string();
        assert_eq!(e, "p.prof: corrupt: bytes after the end of the profile");
        let e = read(b"0x1000\n0x2000\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "p.prof: corrupt: not a cachescope profile (wrong magic bytes)"
        );
        let e = read(b"").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        assert!(!Profile::looks_like(b"0x1000\n"));
        assert!(!Profile::looks_like(&MAGIC[..7]));
    }

    #[test]
    fn other_versions_are_named() {
        let mut b = bytes(&abacba());
        b[8] = 2;
        let e = read(&b).unwrap_err().to_string();
        assert!(
            e.starts_with("p.prof: corrupt: profile format version 2 is not supported"),
            "{e}"
        );
    }
}
