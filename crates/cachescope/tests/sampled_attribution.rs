//! Attribution of a sampled stream at a miniature's own rate (docs/accuracy/sampled.md): the
//! lines kept under a lower rate of the same hash are exactly the lines a filter at that rate
//! samples, so measuring a stream sampled at `r` with `sub_sampled(r2)` gives the report of
//! the stream sampled at `r2`; and the rate that makes a miniature exact is `sets_mini / sets`.

use cachescope::attribution::{Attribution, Options};
use cachescope::report::sampled::{miniature, miniature_rate};
use cachescope::sim::Geometry;
use cachescope::spatial::SpatialOptions;
use cachescope::trace::{AccessReader, Trace};
use cachescope::{Access, Batch, LineSize, Source};
use proptest::prelude::*;

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

/// Loads of `lines` (64-byte lines, at two offsets) in batches of 97.
fn trace(lines: &[(u64, bool)]) -> Trace {
    let b: Vec<Batch> = lines
        .chunks(97)
        .map(|c| {
            let mut b = Batch::new();
            for &(line, high) in c {
                b.push(Access::load(line * 64 + if high { 40 } else { 4 }, 4));
            }
            b
        })
        .collect();
    Trace::from_reader(
        Box::new(Batches(b.into_iter())),
        Source::Workload("test".into()),
    )
}

/// The attribution report (as JSON) of `lines` sampled at `rate`, keeping `sub` of them.
fn attribute(lines: &[(u64, bool)], rate: f64, sub: Option<f64>) -> serde_json::Value {
    let g = Geometry::parse("4K,2,32").unwrap();
    let mut t = trace(lines);
    let spatial = SpatialOptions {
        rate,
        seed: 7,
        max_lines: None,
        line_size: LineSize::new(64).unwrap(),
    };
    t.sampled(spatial, None).unwrap();
    let options = Options {
        geometry: miniature(g, sub.unwrap_or(rate)).unwrap(),
        cost: None,
        mrc: false,
        ..Options::default()
    };
    let mut a = Attribution::new(options, None).unwrap();
    if let Some(r) = sub {
        a = a.sub_sampled(r, spatial.line_size).unwrap();
        assert_eq!(
            a.sub_rate(),
            Some(cachescope::spatial::Limit::from_rate(r).unwrap().rate())
        );
    }
    let mut batch = Batch::new();
    while t.read_batch(&mut batch).unwrap() > 0 {
        cachescope::analysis::Analysis::observe(&mut a, &batch);
    }
    serde_json::to_value(a.finish().unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sub_sampling_is_sampling_at_the_lower_rate(
        lines in prop::collection::vec((0u64..600, any::<bool>()), 1..3000),
    ) {
        let nested = attribute(&lines, 0.5, Some(0.25));
        let direct = attribute(&lines, 0.25, None);
        for key in ["misses", "data_refs", "buckets"] {
            prop_assert_eq!(&nested[key], &direct[key], "{}", key);
        }
    }
}

#[test]
fn the_miniature_rate_makes_the_miniature_exact() {
    let g = Geometry::parse("64K,4,32").unwrap(); // 512 sets
    // 5.12 sets at 0.01: 4 sets, exact at 4/512.
    assert_eq!(miniature(g, 0.01).unwrap().sets(), 4);
    assert_eq!(miniature_rate(g, 0.01).unwrap(), Some(4.0 / 512.0));
    // A power of two: the rate itself.
    assert_eq!(miniature_rate(g, 1.0 / 128.0).unwrap(), Some(1.0 / 128.0));
    // Below one set: no rate serves it.
    assert_eq!(miniature_rate(g, 0.001).unwrap(), None);
}
