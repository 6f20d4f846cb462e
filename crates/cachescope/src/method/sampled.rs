//! Curves from a sampled stream (`mrc --sampled`, docs/sampled.md): the trace read through the
//! line filter, each method measured on the sampled lines and scaled by the rate.
//!
//! | method, policy | on the sample |
//! |---|---|
//! | exact LRU | SHARDS ([`ShardsAnalysis`]): method `shards`; with `ways`, Smith's formula on its distances |
//! | exact OPT | OPT of the sampled lines in caches scaled by the rate (read between the whole sampled lines around `R · C`), misses over the references the rate should keep: method `shards` |
//! | exact random and the other policies, `mini` | miniatures inside the sample ([`MiniSim::of_sample`]): method `mini` |
//! | statcache, statstack | the sampler reads the full stream beside the filter (the Valgrind tool samples it the same way): StatCache's curve is the one without `--sampled`; StatStack's takes the exact distance of each sampled reuse within 64 Ki references, which the stage's sampler measures on a trace (`sampling::Windows`; a live run's tool does not) |
//! | hotl (the time-local reading, no `ways`) | StatStack's time-local model on the reuse samples the sampler takes beside the filter, method `hotl`: the time-local reading's estimate of a reuse's distance is StatStack's (docs/sampled.md, HOTL), as in `report --sampled` |
//! | hotl (`--hotl-variant paper`, or with `ways`), hotl-rt | the footprint and reuse times of the sampled lines at their full-stream positions, scaled (HOTL's paper reading) |

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
use crate::sampling::Profile;
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
    // The time-local HOTL curve from the reuse samples (the module documentation).
    let local_hotl = measure == Measure::LocalFootprint && opts.ways.is_none();
    let profile = (measure == Measure::Profile || local_hotl).then(|| opts.sampler());
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
        Measure::Profile => return Ok(mrc_of_profile(sampled_profile(trace, pass)?, opts)?),
        Measure::LocalFootprint if local_hotl => {
            let statstack = MrcOptions {
                method: super::Method::Statstack,
                ..opts.clone()
            };
            let mut run = mrc_of_profile(sampled_profile(trace, pass)?, &statstack)?;
            run.mrc.method = "hotl".into();
            return Ok(run);
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

/// The reuse profile the sampler took beside the filter, once `trace` is read.
fn sampled_profile<H: Hooks>(trace: &mut Trace, pass: &mut Pass<H>) -> Result<Profile, H::Error> {
    pass.run(trace, Analyses(&mut [&mut Spans(0)]))?;
    let profile = trace.reuse_profile().ok_or_else(|| {
        invalid("the sampled stream gave no reuse profile for StatCache, StatStack or HOTL")
    })?;
    Ok(profile.with_source(trace.source().to_string()))
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
/// miniature holds less than half a line are left out; the others are read between the
/// caches of whole sampled lines around them ([`OptSample::at`]).
fn opt_of_sample(opt: OptAnalysis, sizes: &[u64], rate: f64, refs: u64, line: u64) -> Result<Mrc> {
    let sample = OptSample::new(opt, sizes, rate, refs, line)?;
    let mut curve = sample.template.clone();
    curve.points = sizes
        .iter()
        .filter_map(|&size_bytes| {
            let (miss, warm) = sample.at(size_bytes / line)?;
            Some(MrcPoint {
                size_bytes,
                lines: size_bytes / line,
                miss_ratio: Some(miss),
                miss_ratio_warm: warm,
            })
        })
        .collect();
    Ok(curve)
}

/// OPT of the sampled lines in caches of whole sampled lines: for `m` lines, a cache of
/// `m / rate` lines of the full stream; misses per reference of the full stream.
pub(crate) struct OptSample {
    pub rate: f64,
    /// `(m, miss ratio, warm miss ratio)`, `m` increasing.
    by_lines: Vec<(u64, f64, f64)>,
    /// The curve's method, policy and line size.
    template: Mrc,
}

impl OptSample {
    /// OPT on the sample in the whole sampled lines each of `sizes` lies between.
    pub(crate) fn new(
        opt: OptAnalysis,
        sizes: &[u64],
        rate: f64,
        refs: u64,
        line: u64,
    ) -> Result<OptSample> {
        let sampled = opt.refs() as f64;
        let mut whole: Vec<u64> = sizes
            .iter()
            .filter_map(|&s| whole_around(s / line, rate))
            .flat_map(|(lo, hi, _)| [lo, hi])
            .collect();
        whole.sort_unstable();
        whole.dedup();
        let bytes: Vec<u64> = whole.iter().map(|&m| m * line).collect();
        let mut curve = opt.finish(&bytes)?;
        let adjust = sampled / (rate * refs.max(1) as f64);
        let by_lines = curve
            .points
            .iter()
            .zip(&whole)
            .map(|(p, &m)| {
                let miss = p.miss_ratio.unwrap_or(1.0);
                (
                    m,
                    (miss * adjust).min(1.0),
                    (p.miss_ratio_warm * adjust).min(1.0),
                )
            })
            .collect();
        curve.points.clear();
        curve.method = "shards".into();
        Ok(OptSample {
            rate,
            by_lines,
            template: curve,
        })
    }

    /// The whole sampled lines below and above a cache of `lines` lines, and how far
    /// between them it lies: `None` below half a sampled line; the whole size itself, or
    /// the one above for less than one line.
    pub(crate) fn between(&self, lines: u64) -> Option<(u64, u64, f64)> {
        whole_around(lines, self.rate)
    }

    /// OPT's miss ratio and warm miss ratio at `lines` lines of the full stream: linear
    /// between the whole sampled sizes around `lines · rate`.
    pub(crate) fn at(&self, lines: u64) -> Option<(f64, f64)> {
        let (lo, hi, t) = self.between(lines)?;
        let (a, b) = (self.whole(lo)?, self.whole(hi)?);
        Some((a.1 + t * (b.1 - a.1), a.2 + t * (b.2 - a.2)))
    }

    fn whole(&self, m: u64) -> Option<(u64, f64, f64)> {
        let i = self.by_lines.binary_search_by_key(&m, |p| p.0).ok()?;
        Some(self.by_lines[i])
    }

    /// An empty curve of the sample's method, policy and line size.
    pub(crate) fn template(&self) -> Mrc {
        self.template.clone()
    }
}

/// [`OptSample::between`] at `rate`: the sizes OPT runs in and the point is read between.
fn whole_around(lines: u64, rate: f64) -> Option<(u64, u64, f64)> {
    let x = lines as f64 * rate;
    if x < 0.5 {
        return None;
    }
    let (lo, hi) = (x.floor() as u64, x.ceil() as u64);
    if lo == hi || lo == 0 {
        return Some((hi, hi, 0.0));
    }
    Some((lo, hi, x - lo as f64))
}
