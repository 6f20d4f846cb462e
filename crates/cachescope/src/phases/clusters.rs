//! Clustering one method's signatures and summing up its phases, for
//! [`PhaseAnalysis::finish`](super::PhaseAnalysis::finish).

use super::intervals::IntervalCounts;
use super::kmeans::{self, Clustering, KMeansConfig};
use super::metrics;
use super::options::KChoice;
use super::report::{KScore, PhaseSummary};

/// Clusters `features` for `k`: the optimal 1-D partition for scalars, k-means++ otherwise; a
/// sweep keeps the k chosen by SimPoint's BIC rule and returns every k's score, its values of
/// k clustered on up to `threads` threads (the same result on any number).
pub(super) fn cluster(
    features: &[f64],
    dims: usize,
    scalar: bool,
    k: KChoice,
    config: &KMeansConfig,
    threads: usize,
) -> (Clustering, Vec<KScore>) {
    let run = |k: usize| {
        if scalar {
            kmeans::kmeans_1d(features, k)
        } else {
            kmeans::kmeans(features, dims, k, config)
        }
    };
    match k {
        KChoice::Fixed(k) => (run(k), Vec::new()),
        KChoice::Sweep { min, max } => {
            let var = kmeans::variance(features, dims);
            let ks: Vec<usize> = (min..=max).collect();
            let runs: Vec<(usize, Clustering)> =
                crate::threads::map_in_order(&ks, threads, |&k| (k, run(k)));
            let scores: Vec<KScore> = runs
                .iter()
                .map(|(k, c)| KScore {
                    k: *k,
                    clusters: c.k(),
                    bic: kmeans::bic(features, c, var),
                })
                .collect();
            let bics: Vec<f64> = scores.iter().map(|s| s.bic).collect();
            let pick = kmeans::choose_k(&bics);
            let c = runs.into_iter().nth(pick).expect("choose_k picks a run").1;
            (c, scores)
        }
    }
}

/// Per-phase summaries of clustering `c`, with each phase's representative interval: the one
/// nearest its centroid, the earliest on a tie.
pub(super) fn summaries(
    c: &Clustering,
    features: &[f64],
    hit_rates: &[f64],
    counts: &[IntervalCounts],
) -> Vec<PhaseSummary> {
    let n = c.labels.len();
    let stats = metrics::per_phase(&c.labels, hit_rates);
    (0..c.k())
        .map(|p| {
            let centre = c.centroid(p);
            let mut best = (f64::INFINITY, 0usize);
            let mut data_refs = 0;
            for (i, _) in c.labels.iter().enumerate().filter(|(_, l)| **l == p) {
                let row = &features[i * c.dims..(i + 1) * c.dims];
                let d: f64 = row.iter().zip(centre).map(|(x, y)| (x - y) * (x - y)).sum();
                if d < best.0 {
                    best = (d, i);
                }
                data_refs += counts[i].data_refs;
            }
            let (count, mean, std) = stats[p];
            PhaseSummary {
                id: p,
                intervals: count as u64,
                share: count as f64 / n as f64,
                data_refs,
                mean_l2_hit_rate: mean,
                std_l2_hit_rate: std,
                representative: best.1 as u64,
            }
        })
        .collect()
}
