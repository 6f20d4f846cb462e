//! The per-thread curves of a sampled report's threads section, each built as the report's LRU
//! curve is (`combined`, [`super::curves::combined`]): StatStack's from the thread's own reuse
//! samples where a cache holds fewer than [`super::curves::MIN_SAMPLED_LINES`] sampled lines
//! (given [`super::curves::MIN_REUSES_COMBINED`] of them), SHARDS's of its sampled references
//! above. The reuse samples come from StatCache's sampler, one per thread, each thread's time
//! its own data references (the time its SHARDS curve counts, docs/sampled.md), drawn by
//! [`Sampler::decaying`]: every reference up to [`THREAD_SAMPLES`], then half as many per
//! doubling, so a thread keeps 2^15-2^16 samples whatever its length, and a position is drawn
//! from the seed alone. On a trace the samplers read the whole stream below the sampled stage
//! ([`PerThread`]); a running program's tool stream carries the same samplers' records
//! (`cs_sample.c`, [`crate::sampling::ThreadReuses`]), so its curves are the same. [`read`]
//! wires either.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::access::ThreadId;
use crate::analysis::PerThread;
use crate::error::Result;
use crate::method::{self, Measured, Method, ThreadCurve, ThreadCurves};
use crate::pass::{Analyses, Hooks, Pass};
use crate::reuse::{Mrc, Options, ShardsAnalysis, ShardsDistances};
use crate::sampling::{Profile, Sampler, SamplerOptions};
use crate::sampling::{THREAD_SAMPLES, thread_options};
use crate::sharing::detect::Detector;
use crate::spatial::SpatialOptions;
use crate::trace::Observing;
use crate::trace::Trace;

use super::super::CollectOptions;
use super::curves;

/// The per-thread samplers, shared with the reader that feeds them.
pub(super) type Samplers = Arc<Mutex<PerThread<Sampler>>>;

/// The options of each thread's sampler: the report's reuse sampler's seed and line size
/// ([`thread_options`]).
pub(super) fn sampler_options(seed: u64, line_size: crate::LineSize) -> SamplerOptions {
    thread_options(&SamplerOptions {
        seed,
        line_size,
        ..SamplerOptions::default()
    })
}

/// A decaying sampler per thread with `options`, made as each thread first appears.
pub(super) fn samplers(options: SamplerOptions) -> Result<Samplers> {
    options.validate()?;
    let make = move |_| Sampler::decaying(options, THREAD_SAMPLES).expect("options validated");
    Ok(Arc::new(Mutex::new(PerThread::new(make))))
}

/// Each thread's profile, once the stream has ended and its reader is dropped.
pub(super) fn profiles(samplers: Samplers) -> BTreeMap<ThreadId, Profile> {
    let Ok(per) = Arc::try_unwrap(samplers) else {
        return BTreeMap::new();
    };
    let per = per.into_inner().unwrap_or_else(|e| e.into_inner());
    per.into_parts()
        .into_iter()
        .map(|(t, s)| (t, s.finish()))
        .collect()
}

/// What the threads section's read of the stream measured: each thread's SHARDS distances
/// and, where there are reuse samples, each thread's profile.
pub(super) struct Read {
    pub shards: Vec<(ThreadId, ShardsDistances)>,
    pub profiles: Option<BTreeMap<ThreadId, Profile>>,
}

/// Reads `trace` as the stream `spatial` samples through `pass`, each thread's SHARDS
/// distances measured with `options` above the stage; below it, on a trace, each thread's
/// reuse sampler with `reuse` ([`sampler_options`]) and, given one, `detector` read the whole
/// stream. The tool's stream of a running program (which samples itself) carries its threads'
/// reuse records instead ([`crate::sampling::ThreadReuses`]); a stream without them (cut at an
/// exec followed, or made by a tool without per-thread sampling) gives no profiles.
pub(super) fn read<H: Hooks>(
    mut trace: Trace,
    pass: &mut Pass<H>,
    (spatial, reuse, options): (SpatialOptions, SamplerOptions, Options),
    detector: Option<Arc<Mutex<Detector>>>,
) -> Result<Read, H::Error> {
    let live = trace.sample_itself(&spatial);
    let samplers = (!live).then(|| samplers(reuse)).transpose()?;
    if let Some(d) = detector.filter(|_| !live) {
        trace.wrap(move |inner| Box::new(Observing::new(inner, d)));
    }
    if let Some(s) = &samplers {
        let s = s.clone();
        trace.wrap(move |inner| Box::new(Observing::new(inner, s)));
    }
    trace.sampled(spatial, None)?;
    let mut per = PerThread::new(move |_| ShardsAnalysis::new(options));
    pass.run(&mut trace, Analyses(&mut [&mut per]))?;
    let recorded = match trace.thread_reuses() {
        Some(t) => Some(t.profiles(&reuse, trace.source())?),
        None => None,
    };
    drop(trace);
    let shards = per
        .into_parts()
        .into_iter()
        .map(|(thread, a)| (thread, a.finish()))
        .collect();
    Ok(Read {
        shards,
        profiles: samplers.map(profiles).or(recorded),
    })
}

/// The curves, per-thread counterpart of the report's: `combined` given `profiles`, with
/// SHARDS's alone in the second field; SHARDS's alone (method `shards`) without them. And each
/// thread's sampled references, for the warnings.
pub(super) type Curves = (ThreadCurves, Option<ThreadCurves>, Vec<(ThreadId, u64)>);

/// See [`Curves`]: each thread's curve at `sizes` from its SHARDS distances (`shards`) and,
/// where it has enough reuse samples, StatStack's curve of its profile sampled with `reuse`.
pub(super) fn curves(
    shards: &[(ThreadId, ShardsDistances)],
    profiles: Option<&BTreeMap<ThreadId, Profile>>,
    sizes: &[u64],
    reuse: SamplerOptions,
    line_size: u64,
) -> Result<Curves> {
    let options = CollectOptions {
        line_size: reuse.line_size,
        seed: reuse.seed,
        sample_rate: reuse.rate,
        ..CollectOptions::default()
    };
    let document = |method: &str, curves: Vec<(ThreadId, u64, Mrc)>| ThreadCurves {
        method: method.into(),
        policy: "lru".into(),
        line_size,
        threads: curves
            .into_iter()
            .map(|(thread, refs, m)| ThreadCurve {
                thread,
                refs,
                points: m.points,
            })
            .collect(),
    };
    let sampled = shards.iter().map(|(t, d)| (*t, d.sampled)).collect();
    let alone: Vec<_> = shards
        .iter()
        .map(|(t, d)| (*t, d.refs, d.mrc(sizes)))
        .collect();
    let Some(profiles) = profiles else {
        return Ok((document("shards", alone), None, sampled));
    };
    let mut combined = Vec::new();
    for ((thread, d), (_, refs, shards_mrc)) in shards.iter().zip(&alone) {
        // As the report's curve: StatStack only from enough reuse samples.
        let statstack = match profiles.get(thread) {
            Some(p) if p.reuses() >= curves::MIN_REUSES_COMBINED => {
                let opts = super::assemble::curve_options(&options, Method::Statstack, None, sizes);
                method::curve_from(Measured::Profile(p), &opts).ok()
            }
            _ => None,
        };
        let (curve, _) = curves::combined(shards_mrc, statstack.as_ref(), d.rate);
        combined.push((*thread, *refs, curve));
    }
    Ok((
        document("combined", combined),
        Some(document("shards", alone)),
        sampled,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::LineSize;
    use crate::access::{Access, AccessKind};
    use crate::analysis::Analysis;
    use crate::batch::Batch;
    use crate::sampling::{DEFAULT_SLOT_REFS, NextUse, Sample};
    use crate::spatial::SpatialOptions;
    use crate::trace::{AccessReader, Trace};
    use proptest::prelude::*;

    /// `(thread, store?, line)` records in batches of 70 (so most batches hold several
    /// threads' runs), an instruction fetch after each.
    fn batches(records: &[(ThreadId, bool, u64)]) -> Vec<Batch> {
        records
            .chunks(70)
            .map(|c| {
                let mut b = Batch::new();
                for &(t, store, line) in c {
                    b.set_thread(t);
                    let a = Access::load(line * 64 + 8, 8);
                    b.push(if store { Access::store(a.addr, 8) } else { a });
                    b.push(Access {
                        kind: AccessKind::Instr,
                        ..Access::load(0x40_0000 + line, 4)
                    });
                }
                b
            })
            .collect()
    }

    struct Batches(std::vec::IntoIter<Batch>);

    impl AccessReader for Batches {
        fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
            batch.clear();
            if let Some(b) = self.0.next() {
                *batch = b;
            }
            Ok(batch.len())
        }
    }

    /// Each thread's data references' lines, in order.
    fn by_thread(records: &[(ThreadId, bool, u64)]) -> BTreeMap<ThreadId, Vec<u64>> {
        let mut all: BTreeMap<ThreadId, Vec<u64>> = BTreeMap::new();
        for &(t, _, line) in records {
            all.entry(t).or_default().push(line);
        }
        all
    }

    fn options(seed: u64) -> SamplerOptions {
        SamplerOptions {
            rate: 1.0,
            seed,
            slot_refs: DEFAULT_SLOT_REFS,
            line_size: LineSize::DEFAULT,
            include_instructions: false,
        }
    }

    /// The exact LRU miss ratio (cold included) of `lines` in a cache of `c` lines.
    fn lru(lines: &[u64], c: u64) -> f64 {
        let mut stack: Vec<u64> = Vec::new();
        let mut misses = 0;
        for &l in lines {
            match stack.iter().rposition(|&x| x == l) {
                Some(i) => {
                    misses += u64::from((stack.len() - 1 - i) as u64 >= c);
                    stack.remove(i);
                }
                None => misses += 1,
            }
            stack.push(l);
        }
        misses as f64 / lines.len() as f64
    }

    proptest! {
        /// Brute force: at rate 1 each thread's profile holds every one of its data references,
        /// its reuse distance counted in that thread's own data references (each thread's
        /// time), or its age at the end.
        #[test]
        fn each_threads_profile_counts_its_own_references(
            records in proptest::collection::vec((1u32..4, any::<bool>(), 0u64..40), 1..600),
            seed in 1u64..4,
        ) {
            let samplers = samplers(options(seed)).unwrap();
            for b in batches(&records) {
                samplers.lock().unwrap().observe(&b);
            }
            let got = profiles(samplers);
            let want = by_thread(&records);
            prop_assert_eq!(got.len(), want.len());
            for (t, lines) in &want {
                let mut brute: Vec<Sample> = (0..lines.len())
                    .map(|j| {
                        let next = lines[j + 1..].iter().position(|&l| l == lines[j]);
                        Sample {
                            position: j as u64 + 1,
                            next: match next {
                                Some(k) => NextUse::Reuse { distance: k as u64 },
                                None => NextUse::Dangling {
                                    age: (lines.len() - 1 - j) as u64,
                                },
                            },
                        }
                    })
                    .collect();
                let mut samples = got[t].samples().to_vec();
                brute.sort_by_key(|s| s.position);
                samples.sort_by_key(|s| s.position);
                prop_assert_eq!(samples, brute, "thread {}", t);
            }
        }

        /// With every line sampled (rate 1) each thread's combined curve is its exact LRU
        /// curve, whatever its reuse samples; the SHARDS curves beside it are the same.
        #[test]
        fn at_rate_one_each_combined_curve_is_the_threads_exact_curve(
            records in proptest::collection::vec((1u32..4, any::<bool>(), 0u64..300), 1..3000),
            seed in 1u64..4,
        ) {
            let spatial = SpatialOptions { rate: 1.0, seed, max_lines: None, ..SpatialOptions::default() };
            let trace = Trace::from_reader(
                Box::new(Batches(batches(&records).into_iter())),
                crate::Source::Workload("test".into()),
            );
            let wiring = (spatial, options(seed), Options::default());
            let Read { shards, profiles } = read(trace, &mut Pass::new(1), wiring, None).unwrap();
            let profiles = profiles.unwrap();
            let sizes: Vec<u64> = [1u64, 2, 3, 5, 8, 16, 40, 100, 400].map(|l| l * 64).to_vec();
            let (combined, alone, _) =
                curves(&shards, Some(&profiles), &sizes, options(seed), 64).unwrap();
            let alone = alone.unwrap();
            prop_assert_eq!(&combined.method, "combined");
            prop_assert_eq!(&combined.threads, &alone.threads);
            let want = by_thread(&records);
            prop_assert_eq!(combined.threads.len(), want.len());
            for c in &combined.threads {
                let lines = &want[&c.thread];
                prop_assert_eq!(c.refs, lines.len() as u64);
                for p in &c.points {
                    let exact = lru(lines, p.lines);
                    let r = p.miss_ratio.unwrap();
                    prop_assert!((r - exact).abs() < 1e-9, "thread {} at {}: {} vs {}", c.thread, p.lines, r, exact);
                }
            }
        }
    }

    /// Below the switch a thread with enough reuse samples takes StatStack's points, the
    /// report's rule: at rate 0.01 a cache of fewer than 25,600 lines is StatStack's; without
    /// a profile (a running program's stream) the curves are SHARDS's, method `shards`.
    #[test]
    fn below_the_switch_the_curve_is_statstacks() {
        let records: Vec<(ThreadId, bool, u64)> = (0..40_000u64)
            .map(|i| {
                (
                    1 + (i / 1000 % 2) as u32,
                    false,
                    i * 7 % 500 + 1000 * (i / 1000 % 2),
                )
            })
            .collect();
        let spatial = SpatialOptions {
            rate: 0.01,
            seed: 1,
            max_lines: None,
            ..SpatialOptions::default()
        };
        let trace = Trace::from_reader(
            Box::new(Batches(batches(&records).into_iter())),
            crate::Source::Workload("test".into()),
        );
        let reuse = options(1);
        let wiring = (spatial, reuse, Options::default());
        let Read { shards, profiles } = read(trace, &mut Pass::new(1), wiring, None).unwrap();
        let profiles = profiles.unwrap();
        let sizes = [64 * 64, 256 * 64];
        let (combined, alone, _) = curves(&shards, Some(&profiles), &sizes, reuse, 64).unwrap();
        let collect = CollectOptions {
            sample_rate: 0.01,
            ..CollectOptions::default()
        };
        let opts = super::super::assemble::curve_options(&collect, Method::Statstack, None, &sizes);
        for c in &combined.threads {
            let p = &profiles[&c.thread];
            assert!(p.reuses() >= curves::MIN_REUSES_COMBINED, "{}", p.reuses());
            let statstack = method::curve_from(Measured::Profile(p), &opts).unwrap();
            assert_eq!(c.points, statstack.points, "thread {}", c.thread);
        }
        assert_eq!(alone.unwrap().method, "shards");
        let (plain, none, _) = curves(&shards, None, &sizes, reuse, 64).unwrap();
        assert_eq!(plain.method, "shards");
        assert!(none.is_none());
    }
}
