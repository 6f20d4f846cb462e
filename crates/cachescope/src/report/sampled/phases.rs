//! The phases of a sampled report: the options of its [`PhaseAnalysis`], whose ground truth
//! and setvectors run in a miniature of the exact report's L2.

use crate::Result;
use crate::phases::{BOUNDED_INTERVALS, Method, PhaseAnalysis, PhaseOptions};
use crate::sim::Geometry;

use super::super::options::CollectOptions;

/// The exact report's phase L2: 1 MiB, 16 ways.
const L2_BYTES: u64 = 1 << 20;
const L2_WAYS: u32 = 16;

/// The miniature of the phases' L2 at `rate`: its sets times the rate down to a power of two
/// (at least one), and as many ways as make its lines the rate's share of the L2's. Keeping
/// the 16 ways instead (8 sets at rate 0.01: 128 lines for 163.84) made the ground truth a
/// cache of 0.78 MiB and the setvectors' unit of size `ways·√sets` 1.28 times too small.
pub(super) fn miniature_l2(line: u64, rate: f64) -> Result<Geometry> {
    let full = Geometry::new(L2_BYTES, L2_WAYS, line)?;
    let want = (full.sets() as f64 * rate).max(1.0);
    let sets = (1u64 << want.log2().floor() as u32).min(full.sets());
    let lines = full.lines() as f64 * rate;
    let ways = ((lines / sets as f64).round() as u32).max(1);
    Geometry::new(sets * u64::from(ways) * line, ways, line)
}

/// The phase analysis of a sampled report at `rate`: every method but the wavelets' SVD and
/// the reuse-distance signature, the timeline bounded as the exact report's, the setvectors'
/// magnitudes without the sample's noise (`Setvectors::sampled`).
pub(super) fn phase_analysis(options: &CollectOptions, rate: f64) -> Result<PhaseAnalysis> {
    PhaseAnalysis::new(PhaseOptions {
        interval: options.phase_interval,
        l2: miniature_l2(options.line_size.bytes(), rate)?,
        seed: options.seed,
        // The wavelets' SVD and the reuse-distance signature left out: the first costs a
        // decomposition per interval whatever the sample (a quarter of a sampled report's
        // time on gzip), the second measures distances in sampled lines.
        methods: Method::ALL
            .into_iter()
            .filter(|m| !matches!(m, Method::WaveletSvd | Method::ReuseDistance))
            .collect(),
        // The timeline bounded: intervals merged in pairs on long runs.
        max_intervals: Some(BOUNDED_INTERVALS),
        ..PhaseOptions::default()
    })
    .map(|a| a.sampled(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_miniature_holds_the_rates_share_of_the_lines() {
        // 1 MiB of 64-byte lines: 16384 lines in 1024 sets.
        let g = |rate| {
            let m = miniature_l2(64, rate).expect("valid");
            (m.sets(), m.assoc())
        };
        assert_eq!(g(0.01), (8, 20)); // 160 lines for 163.84
        assert_eq!(g(1.0), (1024, 16));
        assert_eq!(g(0.5), (512, 16));
        assert_eq!(g(0.1), (64, 26)); // 1664 for 1638.4
        assert_eq!(g(0.001), (1, 16)); // 16 for 16.384
        assert_eq!(g(1e-6), (1, 1));
    }
}
