//! Sampled streams (docs/sampled.md) against the full stream: at rate 1 every line is sampled,
//! so each analysis that reads sampled batches (their positions, spans and limits instead of
//! the fetches) must give what it gives on the full stream; and the fixed-size filter's memory
//! stays bounded over 10^8 distinct lines.

use cachescope::analysis::Analysis;
use cachescope::mini::MiniSim;
use cachescope::models::hotl::FootprintAnalysis;
use cachescope::opt::OptAnalysis;
use cachescope::phases::{KChoice, Method, PhaseAnalysis, PhaseOptions};
use cachescope::reuse::{Options, ShardsAnalysis, StackDistanceAnalysis};
use cachescope::sim::{Geometry, Policy};
use cachescope::spatial::{SpatialFilter, SpatialOptions};
use cachescope::trace::{AccessReader, Trace};
use cachescope::{Access, AccessKind, Batch, Source};
use proptest::prelude::*;

/// Fixed batches, for [`Trace::from_reader`].
struct Batches(std::vec::IntoIter<Batch>);

impl AccessReader for Batches {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        batch.clear();
        match self.0.next() {
            Some(b) => {
                *batch = b;
                Ok(batch.len())
            }
            None => Ok(0),
        }
    }
}

/// `(thread, kind code, line)` records in batches of `per` records.
fn batches(records: &[(u32, u8, u64)], per: usize) -> Vec<Batch> {
    records
        .chunks(per)
        .map(|c| {
            let mut b = Batch::new();
            for &(t, k, line) in c {
                b.set_thread(t);
                b.push(Access {
                    kind: AccessKind::from_code(k).unwrap(),
                    ..Access::load(line * 64 + 8, 4)
                });
            }
            b
        })
        .collect()
}

/// Feeds every batch of `b` to `analyses`, through the filter at rate 1 when `sampled`.
fn feed(b: &[Batch], sampled: bool, analyses: &mut [&mut dyn Analysis]) {
    let mut trace = Trace::from_reader(
        Box::new(Batches(Vec::from(b).into_iter())),
        Source::Workload("test".into()),
    );
    if sampled {
        let all = SpatialOptions {
            rate: 1.0,
            max_lines: None,
            ..SpatialOptions::default()
        };
        trace.sampled(all, None).unwrap();
    }
    let mut batch = Batch::new();
    while trace.read_batch(&mut batch).unwrap() > 0 {
        for a in analyses.iter_mut() {
            a.observe(&batch);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn rate_one_is_the_full_stream(
        // Half the references to a few lines, so that a line is often referenced again at
        // once (the analyses' runs of one line).
        records in proptest::collection::vec(
            (1u32..3, 0u8..4, prop_oneof![0u64..400, 0u64..6]),
            1..4000,
        ),
        per in 50usize..2000,
    ) {
        // A stream of fetches alone is refused under --sampled (nothing to sample).
        prop_assume!(records.iter().any(|r| AccessKind::from_code(r.1).unwrap().is_data()));
        let b = batches(&records, per);
        let options = Options::default();
        let sizes = [1024u64, 4096, 16384, 65536];
        // The LRU curves at caches of one and two lines too: a repeat at distance 0 hits only
        // there.
        let lru_sizes = [64u64, 128, 1024, 4096, 16384, 65536];
        let policies = [Policy::Fifo, Policy::Srrip];
        let phase_options = PhaseOptions {
            interval: 64,
            k: KChoice::Fixed(2),
            l2: Geometry::new(4096, 4, 64).unwrap(),
            methods: vec![Method::Setvector, Method::Activity],
            ..PhaseOptions::default()
        };
        let run = |sampled: bool| {
            let mut shards = ShardsAnalysis::new(options);
            let mut fp = FootprintAnalysis::new(options, &[]).unwrap();
            let mut mini = MiniSim::of_sample(options, &policies, Some(4), &sizes, 1.0, 1, 1.0).unwrap();
            let mut opt = OptAnalysis::new(options).unwrap();
            let mut phases = PhaseAnalysis::new(phase_options.clone()).unwrap();
            feed(&b, sampled, &mut [&mut shards, &mut fp, &mut mini, &mut opt, &mut phases]);
            let fp = fp.finish();
            let windows: Vec<f64> = [1u64, 7, 50, 300].iter().map(|&w| fp.fp(w)).collect();
            (
                shards.finish().mrc(&lru_sizes),
                windows,
                mini.finish_all(),
                opt.finish(&sizes).unwrap(),
                phases.finish().ok().map(|r| r.untimed()),
            )
        };
        let (full, sampled) = (run(false), run(true));
        prop_assert_eq!(&full.0, &sampled.0);
        prop_assert_eq!(&full.1, &sampled.1);
        prop_assert_eq!(&full.2, &sampled.2);
        prop_assert_eq!(&full.3, &sampled.3);
        prop_assert_eq!(&full.4, &sampled.4);
        // SHARDS on the full stream is the exact LRU curve.
        let mut exact = StackDistanceAnalysis::new(options);
        feed(&b, false, &mut [&mut exact]);
        let exact = exact.finish().mrc(&lru_sizes);
        for (p, q) in exact.points.iter().zip(&full.0.points) {
            prop_assert!((p.miss_ratio.unwrap() - q.miss_ratio.unwrap()).abs() < 1e-12);
        }
    }
}

/// The fixed-size filter over 10^8 distinct lines: at most its bound of lines at once, the
/// limit lowered to keep them, and its memory that of the bound, not of the footprint.
#[test]
fn the_fixed_size_filter_holds_its_bound_over_1e8_lines() {
    let bound = 1u64 << 16;
    let options = SpatialOptions {
        rate: 0.01,
        max_lines: Some(bound),
        ..SpatialOptions::default()
    };
    let mut f = SpatialFilter::new(&options).unwrap();
    let mut kept = 0u64;
    for line in 0..100_000_000u64 {
        kept += u64::from(f.keep(line));
    }
    assert_eq!(f.sampled_lines(), Some(bound as usize));
    // The bound's share of the lines, give or take the sample's spread.
    let rate = f.limit().rate();
    let expected = bound as f64 / 1e8;
    assert!(
        (rate / expected - 1.0).abs() < 0.05,
        "rate {rate}, expected about {expected}"
    );
    assert!(kept > bound && kept < 1_000_000, "{kept} references kept");
    assert!(
        f.heap_bytes() < 64 * bound as usize,
        "{} bytes",
        f.heap_bytes()
    );
}
