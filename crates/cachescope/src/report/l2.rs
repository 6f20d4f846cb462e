//! The L2 section: Ji, Ling & Liu's L2 model run on the exact L1 stack distances, beside the
//! exact two-level simulation of the same pass.

use crate::Result;
use crate::models::l2::{self as l2model, L1Histogram, L2Model, TwoLevelResult};
use crate::sim::Policy;

use super::histogram::{octave_bounds, octave_histogram, octave_of};
use super::model::{L2Report, PredictedBin, PredictedHistogram};
use super::options::{L2_BYTES, L2_VARIANTS, l1_lines};

/// The L2 model's curves and reuse histograms from the exact L1 stack distances, beside the
/// two-level simulation.
pub(super) fn l2_report(hist: &L1Histogram, exact: TwoLevelResult, line: u64) -> Result<L2Report> {
    let l1 = l1_lines(line);
    let mut predicted = Vec::new();
    let mut reuse_predicted = Vec::new();
    for variant in L2_VARIANTS {
        predicted.push(l2model::l2_mrc(hist, l1, &L2_BYTES, Policy::Lru, variant)?);
        let mut counts: Vec<f64> = Vec::new();
        for (r, w) in L2Model::new(hist, l1, variant)?.reuse_histogram() {
            let i = octave_of(r);
            if counts.len() <= i {
                counts.resize(i + 1, 0.0);
            }
            counts[i] += w;
        }
        reuse_predicted.push(PredictedHistogram {
            method: variant.method().into(),
            total: counts.iter().sum(),
            bins: counts
                .iter()
                .enumerate()
                .map(|(i, &weight)| {
                    let (lo, hi) = octave_bounds(i);
                    PredictedBin { lo, hi, weight }
                })
                .filter(|b| b.weight > 0.0)
                .collect(),
        });
    }
    Ok(L2Report {
        l1_bytes: l1 * line,
        l1_lines: l1,
        policy: "lru".into(),
        l2_refs: exact.l1_misses,
        cold: exact.cold,
        simulated: exact.mrc(),
        predicted,
        reuse_simulated: octave_histogram("l2_reuse_distance", &exact.l2_reuse, exact.cold),
        reuse_predicted,
    })
}
