//! Curves from a sampled stream (`mrc --sampled`, docs/sampled.md): the trace read through the
//! line filter, each method measured on the sampled lines and scaled by the rate.
//!
//! | method, policy | on the sample |
//! |---|---|
//! | exact LRU | SHARDS ([`ShardsAnalysis`]): method `shards`; with `ways`, Smith's formula on its distances |
//! | exact OPT | OPT of the sampled lines in caches scaled by the rate, misses over the references the rate should keep: method `shards` |
//! | exact random and the other policies, `mini` | miniatures inside the sample ([`MiniSim::of_sample`]): method `mini` |
//! | statcache, statstack | the sampler reads the full stream beside the filter (the Valgrind tool samples it the same way): the same curve as without `--sampled` |
//! | hotl, hotl-rt | the footprint and reuse times of the sampled lines at their full-stream positions, scaled (HOTL's paper reading: the time-local one needs every reference) |

use super::{Measure, Measured, MrcOptions, MrcRun, curve_from, invalid, mrc_of_profile};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::mini::MiniSim;
use crate::models::hotl::{FootprintAnalysis, HotlVariant};
use crate::models::smith;
use crate::opt::OptAnalysis;
use crate::pass::{Analyses, Hooks, Pass};
use crate::reuse::{Mrc, MrcPoint, ShardsAnalysis};
use crate::spatial::SpatialOptions;
use crate::trace::Trace;

/// The curve of `trace` by `opts.method` from the sampled stream `spatial` gives; see the
/// module documentation. The trace must not be read yet.
pub fn mrc_sampled<H: Hooks>(
    trace: &mut Trace,
    opts: &MrcOptions,
    spatial: SpatialOptions,
    pass: &mut Pass<H>,
) -> Result<MrcRun, H::Error> {
    let measure = opts.measure()?;
    let profile = (measure == Measure::Profile).then(|| opts.sampler());
    trace.sampled(spatial, profile)?;
    let options = opts.options;
    let sizes = opts.sizes.as_slice();
    let rate = spatial.rate;
    let (mrc, refs) = match measure {
        Measure::StackDistances => {
            let mut shards = ShardsAnalysis::new(options);
            pass.run(trace, Analyses(&mut [&mut shards]))?;
            let d = shards.finish();
            let mrc = match opts.ways {
                None => d.mrc(sizes),
                Some(w) => {
                    let mut m = smith::set_associative_mrc(&smith_of(&d), w, sizes)?;
                    m.method = "shards+smith".into();
                    m
                }
            };
            (mrc, d.refs)
        }
        Measure::Profile => {
            let mut spans = Spans(0);
            pass.run(trace, Analyses(&mut [&mut spans]))?;
            let profile = trace.reuse_profile().ok_or_else(|| {
                invalid("the sampled stream gave no reuse profile for StatCache or StatStack")
            })?;
            let profile = profile.with_source(trace.source().to_string());
            return Ok(mrc_of_profile(profile, opts)?);
        }
        Measure::Footprint | Measure::LocalFootprint | Measure::ReuseTimes => {
            let mut fp = FootprintAnalysis::new(options, &[])?;
            pass.run(trace, Analyses(&mut [&mut fp]))?;
            let (footprint, times) = fp.finish_with_reuse_times();
            let paper = MrcOptions {
                hotl_variant: HotlVariant::Paper,
                ..opts.clone()
            };
            let measured = match measure {
                Measure::ReuseTimes => Measured::ReuseTimes(&times),
                _ => Measured::Footprint(&footprint),
            };
            (curve_from(measured, &paper)?, footprint.refs)
        }
        Measure::Opt => {
            let mut opt = OptAnalysis::new(options)?;
            let mut spans = Spans(0);
            pass.run(trace, Analyses(&mut [&mut opt, &mut spans]))?;
            let line = options.line_size.bytes();
            (opt_of_sample(opt, sizes, rate, spans.0, line)?, spans.0)
        }
        Measure::RandomReplacement | Measure::Simulation(_) => {
            let policy = match measure {
                Measure::Simulation(p) => p,
                _ => crate::sim::Policy::Random { seed: opts.seed },
            };
            let mut mini = MiniSim::of_sample(options, &[policy], opts.ways, sizes, rate, 1, rate)?;
            pass.run(trace, Analyses(&mut [&mut mini]))?;
            (mini.finish(), mini.all_refs())
        }
    };
    Ok(MrcRun {
        mrc,
        profile: None,
        refs,
    })
}

/// Counts the full stream's data references from a sampled stream's spans (each sampled
/// batch carries the counts of the span of the full stream it was cut from).
#[derive(Debug, Default)]
pub struct Spans(pub u64);

impl Analysis for Spans {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            self.0 += s.span.iter().map(|t| t.data()).sum::<u64>();
        }
    }
}

/// [`Spans`] of one thread: its data references in the full stream, for a sampled result
/// kept to one thread (`attribute --thread ID --sampled`) whose counts must scale as the
/// whole stream's do.
#[derive(Debug)]
pub struct ThreadSpans {
    /// The thread counted.
    pub thread: crate::access::ThreadId,
    /// Its data references so far.
    pub data: u64,
}

impl Analysis for ThreadSpans {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            self.data += s
                .span
                .iter()
                .filter(|t| t.thread == self.thread)
                .map(|t| t.data())
                .sum::<u64>();
        }
    }
}

/// SHARDS's scaled distances as Smith's distribution.
fn smith_of(d: &crate::reuse::ShardsDistances) -> smith::Distances {
    let n = d.refs.max(1) as f64;
    smith::Distances {
        method: "shards".into(),
        line_size: d.line_size,
        refs: d.refs,
        cold: Some(d.cold / n),
        masses: d
            .bins()
            .map(|(lo, hi, w)| smith::SdMass {
                sd: lo,
                len: hi - lo + 1,
                weight: w / n,
            })
            .collect(),
    }
}

/// OPT of the sampled lines at `sizes` scaled by `rate` (SHARDS applies to any stack
/// algorithm, OPT's included), its misses over the references the rate should keep of the
/// full stream's `refs` (SHARDS's adjustment): method `shards`, policy `opt`. Sizes whose
/// miniature holds less than half a line are left out.
pub(crate) fn opt_of_sample(
    opt: OptAnalysis,
    sizes: &[u64],
    rate: f64,
    refs: u64,
    line: u64,
) -> Result<Mrc> {
    let sampled = opt.refs() as f64;
    let kept: Vec<(u64, u64)> = sizes
        .iter()
        .map(|&s| (s, ((s / line) as f64 * rate).round() as u64 * line))
        .filter(|&(_, m)| m > 0)
        .collect();
    let small: Vec<u64> = kept.iter().map(|&(_, m)| m).collect();
    let mut curve = opt.finish(&small)?;
    let adjust = sampled / (rate * refs.max(1) as f64);
    curve.points = curve
        .points
        .iter()
        .zip(&kept)
        .map(|(p, &(size_bytes, _))| MrcPoint {
            size_bytes,
            lines: size_bytes / line,
            miss_ratio: p.miss_ratio.map(|r| (r * adjust).min(1.0)),
            miss_ratio_warm: (p.miss_ratio_warm * adjust).min(1.0),
        })
        .collect();
    curve.method = "shards".into();
    Ok(curve)
}
