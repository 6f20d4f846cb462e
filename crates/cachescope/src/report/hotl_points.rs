//! The HOTL figures of both reports: the working-set graph and the fill and inter-miss times,
//! from the trace's footprint (the exact report, the sampled one's sample) or from StatStack's
//! reuse samples (the sampled report's profile).

use crate::Result;
use crate::models::hotl::{self, Footprint, ProfileFootprint};
use crate::reuse::{Mrc, sizes_log_range};

use super::model::{FillTimePoint, WorkingSetPoint};

/// The working-set graph: the average footprint, 8 windows per octave.
pub(super) fn working_set(footprint: &Footprint, line: u64) -> Result<Vec<WorkingSetPoint>> {
    Ok(footprint
        .points(8)?
        .into_iter()
        .map(|p| WorkingSetPoint {
            window: p.window,
            lines: p.footprint,
            bytes: p.footprint * line as f64,
        })
        .collect())
}

/// Fill and inter-miss times at the sizes up to the footprint where both are finite.
pub(super) fn fill_time(
    filmer: &hotl::Filmer,
    footprint: &Footprint,
    sizes: &[u64],
    line: u64,
) -> Vec<FillTimePoint> {
    sizes
        .iter()
        .filter(|&&b| b / line <= footprint.distinct_lines)
        .map(|&b| {
            let c = (b / line) as f64;
            FillTimePoint {
                size_bytes: b,
                lines: b / line,
                fill_time: filmer.fill_time(c),
                inter_miss_time: filmer.inter_miss_time(c),
            }
        })
        .filter(|p| p.fill_time.is_finite() && p.inter_miss_time.is_finite())
        .collect()
}

/// The working-set graph (8 windows per octave up to the `refs` of the trace) and the fill
/// and inter-miss times at `sizes` of the footprint the reuse samples give.
pub(super) fn of_profile(
    f: &ProfileFootprint,
    refs: u64,
    sizes: &[u64],
    line: u64,
) -> Result<(Vec<WorkingSetPoint>, Vec<FillTimePoint>)> {
    let ws = if refs == 0 {
        Vec::new()
    } else {
        sizes_log_range(1, refs, 8)?
            .into_iter()
            .map(|w| {
                let lines = f.fp(w as f64);
                WorkingSetPoint {
                    window: w,
                    lines,
                    bytes: lines * line as f64,
                }
            })
            .collect()
    };
    let ft = sizes
        .iter()
        .map(|&b| {
            let c = (b / line) as f64;
            FillTimePoint {
                size_bytes: b,
                lines: b / line,
                fill_time: f.fill_time(c),
                inter_miss_time: 1.0 / f.miss_ratio(c),
            }
        })
        .filter(|p| p.fill_time.is_finite() && p.inter_miss_time.is_finite())
        .collect();
    Ok((ws, ft))
}

/// The sampled report's time-local HOTL curve (method `hotl`) at the first `sizes` points of
/// the samples' time-local StatStack curve: the time-local reading (`models::hotl::local`)
/// predicts a reuse of time `rt` to hold `E_s[min(RT, rt)]` lines over its stretch `s`, which
/// is StatStack's expected stack distance, and StatStack's model is the time-local one, made
/// for reuse samples. (The paper's footprint conversion of the same samples, which the report
/// showed before, differed from the exact report's time-local curve by up to 4 pp on average
/// at working-set cliffs: docs/accuracy/sampled.md.)
pub(super) fn time_local(statstack: &Mrc, sizes: usize) -> Mrc {
    let mut c = statstack.clone();
    c.points.truncate(sizes);
    c.method = "hotl".into();
    c
}
