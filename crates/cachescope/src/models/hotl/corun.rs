//! Co-run cache sharing (HOTL §4.5; Xiang et al., PPoPP 2011 and PACT 2011): predict each
//! program's miss ratio in a cache it shares, from solo profiles only, and check the
//! prediction against an exact simulation of the programs interleaved.
//!
//! ## Prediction
//! Program `i` makes `rate_i` references per unit of time and has footprint `fp_i` (no data
//! shared between programs). In a time window `t` the programs together touch
//! `F(t) = Σ_i fp_i(rate_i·t)` lines, so a shared LRU cache of `C` lines is filled in the time
//! `t*` with `F(t*) = C` (the footprints compose). Program `i` then holds
//! `c_i = fp_i(rate_i·t*)` lines of it, and misses as it would alone in a cache of `c_i`
//! lines: `mr_i(c_i)` by its [`Filmer`] conversion, cold misses included. When everything fits
//! (`F(∞) ≤ C`), each program keeps its whole footprint.
//!
//! For a set-associative cache of `S` sets and `A` ways ([`predict`] with `S > 1`), each
//! reuse of program `i` with reuse distance `rd` spans, by the reuse-window hypothesis, a
//! window of `vt_i(rd)` of its references, `vt_i(rd)/rate_i` units of time, in which the
//! programs together touch `rd' = F(vt_i(rd)/rate_i)` lines; Smith's formula gives its miss
//! probability `P(Binomial(rd' − 1, 1/S) ≥ A)` ([`crate::models::smith`]).
//!
//! ## Simulation
//! [`simulate`] interleaves the programs' counted references in proportion to their rates by
//! smooth weighted round robin (deterministic: each step every program earns its rate in
//! credit, the richest goes and pays the sum of the rates), gives each program its own
//! address space (program `k`'s line `L` becomes `L + k·2^56`, so line addresses must be below
//! 2^56), and runs them through one LRU cache ([`Cache`]: fully associative or set
//! associative). The simulation stops when the first program's trace ends: after that the
//! others would run alone, which the prediction does not model. Each program's result says
//! how many of its references were simulated and whether its trace ended, so a prediction
//! can be made from the profiles of exactly the simulated parts. The threads of one recording
//! have their interleaving already: [`simulate_recorded`] runs them as recorded, each to its end.

use hashbrown::HashSet;

mod recorded;
pub use recorded::simulate_recorded;

use super::curve::FootprintCurve;
use super::filmer::Filmer;
use crate::access::AccessKind;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::models::smith;
use crate::reuse::Options;
use crate::sim::{Cache, Geometry, Policy};
use crate::trace::AccessReader;

/// Bits of a line address kept in the co-run simulation; the program number goes above.
const LINE_BITS: u32 = 56;

/// One program of a co-run: its solo footprint and its access rate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CorunProgram {
    /// The solo footprint (for a whole trace, [`FootprintCurve::from_footprint`]).
    pub footprint: FootprintCurve,
    /// References per unit of time (any unit, the same for every program).
    pub rate: f64,
}

/// One program's predicted behaviour in the shared cache.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CorunPrediction {
    /// Lines of the cache the program holds, `fp_i(rate_i·t*)`.
    pub share_lines: f64,
    /// Its misses per reference, cold misses included (absent for a sampled footprint).
    pub miss_ratio: Option<f64>,
    /// Its misses per reference without cold misses.
    pub miss_ratio_warm: f64,
}

fn invalid(name: &'static str, message: String) -> Error {
    Error::InvalidParameter { name, message }
}

/// The time `t*` at which the programs fill `lines` lines together (`None` when they never
/// do), and the combined footprint function.
fn fill_time(filmers: &[Filmer], rates: &[f64], lines: f64) -> Option<f64> {
    let combined = |t: f64| -> f64 {
        filmers
            .iter()
            .zip(rates)
            .map(|(f, &r)| f.footprint(r * t))
            .sum()
    };
    // Past this every footprint is at its top.
    let end = filmers
        .iter()
        .zip(rates)
        .map(|(f, &r)| f.fill_time(f.max_footprint()) / r)
        .fold(0.0, f64::max);
    if combined(end) <= lines {
        return None;
    }
    let (mut lo, mut hi) = (0.0, end);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if combined(mid) < lines {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Predicts each program's miss ratio in a shared LRU `cache` ([module documentation](self)). Errors
/// on no program, a rate that is not positive, an invalid curve, or a curve whose line size
/// is not the cache's.
pub fn predict(programs: &[CorunProgram], cache: Geometry) -> Result<Vec<CorunPrediction>> {
    if programs.is_empty() {
        return Err(invalid("co-run", "no program".into()));
    }
    let line_size = cache.line_size().bytes();
    let mut filmers = Vec::with_capacity(programs.len());
    for p in programs {
        if !(p.rate.is_finite() && p.rate > 0.0) {
            return Err(invalid(
                "access rate",
                format!("{} is not a positive number", p.rate),
            ));
        }
        if p.footprint.line_size != line_size {
            return Err(invalid(
                "co-run line size",
                format!(
                    "a profile has {}-byte lines, the cache {line_size}-byte lines",
                    p.footprint.line_size
                ),
            ));
        }
        filmers.push(Filmer::from_curve(&p.footprint)?);
    }
    let rates: Vec<f64> = programs.iter().map(|p| p.rate).collect();
    let lines = cache.lines() as f64;
    let t = fill_time(&filmers, &rates, lines);
    let shares: Vec<f64> = filmers
        .iter()
        .zip(&rates)
        .map(|(f, &r)| match t {
            Some(t) => f.footprint(r * t),
            None => f.max_footprint(),
        })
        .collect();
    let predictions = filmers
        .iter()
        .zip(&rates)
        .zip(&shares)
        .map(|((f, &r), &share)| {
            let warm = if cache.sets() == 1 {
                f.miss_ratio_warm(share)
            } else {
                smith_warm(f, r, &filmers, &rates, cache)
            };
            CorunPrediction {
                share_lines: share,
                miss_ratio: f.cold_ratio().map(|c| c + warm),
                miss_ratio_warm: warm,
            }
        })
        .collect();
    Ok(predictions)
}

/// Program `f`'s warm miss ratio in a set-associative shared cache by Smith's formula on its
/// co-run reuse distances.
fn smith_warm(f: &Filmer, rate: f64, filmers: &[Filmer], rates: &[f64], cache: Geometry) -> f64 {
    let (sets, ways) = (cache.sets(), u64::from(cache.assoc()));
    f.stack_distances()
        .masses
        .iter()
        .map(|m| {
            let rd = ((m.sd + 1) as f64).min(f.max_footprint());
            let time = f.fill_time(rd) / rate;
            let shared: f64 = filmers
                .iter()
                .zip(rates)
                .map(|(g, &r)| g.footprint(r * time))
                .sum();
            let sd = (shared - 1.0).max(0.0).round() as u64;
            m.weight * smith::miss_probability(sd, sets, ways)
        })
        .sum()
}

/// One program's part of a co-run simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SimulatedProgram {
    /// Its references simulated.
    pub refs: u64,
    /// Its misses, cold ones included.
    pub misses: u64,
    /// Its first references (cold misses).
    pub cold_misses: u64,
    /// True when its trace ended (which ended the simulation).
    pub ended: bool,
}

impl SimulatedProgram {
    /// Misses per reference, cold misses included (0 with no reference).
    pub fn miss_ratio(&self) -> f64 {
        self.misses as f64 / self.refs.max(1) as f64
    }

    /// Misses per reference without cold misses.
    pub fn miss_ratio_warm(&self) -> f64 {
        (self.misses - self.cold_misses) as f64 / self.refs.max(1) as f64
    }
}

/// One input stream of the simulation.
struct Stream<'a, R> {
    reader: &'a mut R,
    batch: Batch,
    next: usize,
    seen: HashSet<u64, foldhash::fast::FixedState>,
    /// `seen` grows with the stream's distinct lines: charged to the [`crate::budget`].
    charge: crate::budget::Charge,
}

impl<R: AccessReader> Stream<'_, R> {
    /// The next counted reference's line, `None` at the end of the trace.
    fn next_line(&mut self, options: &Options) -> Result<Option<u64>> {
        loop {
            while self.next < self.batch.len() {
                let i = self.next;
                self.next += 1;
                if options.include_instructions || self.batch.kinds[i] != AccessKind::Instr {
                    return Ok(Some(self.batch.addrs[i] >> options.line_size.shift()));
                }
            }
            if self.reader.read_batch(&mut self.batch)? == 0 {
                return Ok(None);
            }
            self.next = 0;
        }
    }
}

/// Simulates the programs of `streams` interleaved in proportion to `rates` in one shared LRU
/// cache of shape `cache` ([module documentation](self)); `options` says which references count and
/// their line size, which must be the cache's. Errors on a mismatch of lengths, a rate that is
/// not positive, or a line address at or above 2^56.
pub fn simulate<R: AccessReader>(
    streams: &mut [R],
    rates: &[f64],
    cache: Geometry,
    options: Options,
) -> Result<Vec<SimulatedProgram>> {
    if streams.is_empty() || streams.len() != rates.len() || streams.len() > 256 {
        return Err(invalid(
            "co-run",
            format!(
                "{} streams and {} rates: give one rate per stream, 1 to 256 streams",
                streams.len(),
                rates.len()
            ),
        ));
    }
    if let Some(r) = rates.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(invalid(
            "access rate",
            format!("{r} is not a positive number"),
        ));
    }
    if cache.line_size() != options.line_size {
        return Err(invalid(
            "co-run line size",
            format!(
                "the cache has {} lines, the trace options {}",
                cache.line_size(),
                options.line_size
            ),
        ));
    }
    let mut c = Cache::new(cache, Policy::Lru)?;
    let mut streams: Vec<Stream<'_, R>> = streams
        .iter_mut()
        .map(|reader| Stream {
            reader,
            batch: Batch::new(),
            next: 0,
            seen: HashSet::default(),
            charge: crate::budget::Charge::default(),
        })
        .collect();
    let total: f64 = rates.iter().sum();
    let mut credit = vec![0.0f64; rates.len()];
    let mut out = vec![SimulatedProgram::default(); rates.len()];
    loop {
        for (c, r) in credit.iter_mut().zip(rates) {
            *c += r;
        }
        // The richest program goes (the first on a tie).
        let mut pick = 0;
        for k in 1..credit.len() {
            if credit[k] > credit[pick] {
                pick = k;
            }
        }
        credit[pick] -= total;
        let Some(line) = streams[pick].next_line(&options)? else {
            out[pick].ended = true;
            return Ok(out);
        };
        if line >> LINE_BITS != 0 {
            return Err(invalid(
                "co-run address",
                format!(
                    "line {line:#x} is at or above 2^56: the simulation keeps each program's \
                     lines apart in the top 8 bits"
                ),
            ));
        }
        let p = &mut out[pick];
        p.refs += 1;
        if !c.access(line | (pick as u64) << LINE_BITS) {
            p.misses += 1;
            let s = &mut streams[pick];
            if s.seen.insert(line) {
                p.cold_misses += 1;
                if s.seen.len() == s.seen.capacity() {
                    // The next new line reallocates: a limit stops the run at the next batch.
                    s.charge.set(s.seen.allocation_size() * 2);
                }
            }
        }
    }
}
