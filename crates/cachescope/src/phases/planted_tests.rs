//! Three planted phases that recur, the case of issue 20: a stream far larger than the L2, a
//! sweep that fits in it and random reads over twice its size, phase instances a fractional
//! number of intervals long so that transitions fall inside intervals. Setvectors must find
//! them as well as the reuse-distance signature does, although the stream's footprint dwarfs
//! the other two's.

use super::{IntervalUnit, KChoice, Method, PhaseAnalysis, PhaseOptions};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::{Batch, NO_PC};
use crate::sim::Geometry;

/// Data references per interval.
const INTERVAL: u64 = 16_384;

/// The 64 KiB, 8-way L2 (128 sets of 64-byte lines, 1024 lines).
fn options() -> PhaseOptions {
    PhaseOptions {
        interval: INTERVAL,
        unit: IntervalUnit::DataRefs,
        k: KChoice::Fixed(3),
        methods: vec![
            Method::Setvector,
            Method::SetvectorVector,
            Method::ReuseDistance,
        ],
        l2: Geometry::parse("64K,8,64").expect("valid"),
        ..PhaseOptions::default()
    }
}

/// The planted trace, three rounds of stream, sweep, random, each phase instance `instance`
/// references. The stream takes a new line every reference (per interval 128 lines per set,
/// all misses); the sweep cycles over 512 lines (4 per set, all hits once warm); random reads
/// fall on 2048 lines (about 16 per set, half of them hits). So the sweep's and random's
/// setvectors differ 4× in magnitude and the stream's are 8× random's.
fn planted(instance: u64) -> Vec<u64> {
    let (mut next_line, mut x) = (0u64, 12_345u64);
    let mut addrs = Vec::new();
    for _ in 0..3 {
        for _ in 0..instance {
            addrs.push((1 << 32) + 64 * next_line);
            next_line += 1;
        }
        addrs.extend((0..instance).map(|i| (1 << 28) + 64 * (i % 512)));
        for _ in 0..instance {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            addrs.push((1 << 30) + 64 * ((x >> 33) % 2048));
        }
    }
    addrs
}

/// An analysis with `options` fed `addrs` as 8-byte loads, 4096 to a batch.
fn fed(options: PhaseOptions, addrs: &[u64]) -> PhaseAnalysis {
    let mut a = PhaseAnalysis::new(options).expect("valid options");
    let mut batch = Batch::new();
    for part in addrs.chunks(4096) {
        batch.clear();
        for &addr in part {
            batch.push_raw(addr, 8, AccessKind::Load, NO_PC);
        }
        a.observe(&batch);
    }
    a
}

fn poec(addrs: &[u64]) -> Vec<(Method, f64)> {
    let options = options();
    let methods = options.methods.clone();
    let r = fed(options, addrs).finish().expect("intervals");
    assert_eq!(r.intervals.len() as u64, addrs.len() as u64 / INTERVAL + 1);
    methods
        .into_iter()
        .map(|m| (m, r.method(m).and_then(|x| x.poec).unwrap_or(0.0)))
        .collect()
}

#[test]
fn setvectors_find_three_planted_phases() {
    // Instances of 5.5 and 6.5 intervals: 8 transitions in 50 or 59 intervals.
    for quarters in [22, 26] {
        let scores = poec(&planted(INTERVAL * quarters / 4));
        for &(m, p) in &scores {
            assert!(
                p >= 0.9,
                "instances of {quarters}/4 intervals: {m} PoEC {p:.3} ({scores:?})"
            );
            assert!(p >= scores[2].1, "{m} below reuse-distance: {scores:?}");
        }
    }
}

#[test]
fn the_report_is_the_same_clustered_on_one_or_several_threads() {
    let addrs = planted(INTERVAL * 22 / 4);
    for k in [KChoice::Fixed(3), KChoice::Sweep { min: 2, max: 5 }] {
        clustered_alike(&addrs, k);
    }
}

/// [`PhaseAnalysis::finish_on`] with 1, 2, 3 and 8 threads: the same report but for timings.
fn clustered_alike(addrs: &[u64], k: KChoice) {
    let run = |threads: usize| {
        let options = PhaseOptions { k, ..options() };
        // Timings differ from run to run; everything else must not.
        fed(options, addrs)
            .finish_on(threads)
            .expect("intervals")
            .untimed()
    };
    let one = run(1);
    assert!(one.methods.len() >= 2);
    if let KChoice::Sweep { .. } = k {
        assert!(one.methods.iter().all(|m| m.k_scores.len() == 4), "{k:?}");
    }
    for threads in [2, 3, 8] {
        assert_eq!(run(threads), one, "{threads} threads, {k:?}");
    }
}
