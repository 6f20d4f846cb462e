//! [`SweepAndPhases`]: the 3C sweep and the phase analysis fed as one, so that the phases'
//! reuse-distance signature takes the sweep's stack distances instead of computing its own
//! (the same quantity: data references at the report's line size, each at its first byte),
//! and their ground truth counts the misses of an L2 the sweep simulates beside its caches.

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::phases::PhaseAnalysis;
use crate::sim::{Policy, ThreeCSweep};

/// The 3C sweep (with the two-level simulation) and the phases, one after the other on each
/// batch, the phases reading the distances the sweep just computed.
pub(super) struct SweepAndPhases {
    pub(super) three_c: ThreeCSweep,
    /// Made with [`PhaseAnalysis::fed_distances`].
    pub(super) phases: PhaseAnalysis,
}

impl SweepAndPhases {
    /// `phases` is switched to take its distances from `three_c`; both must count the same
    /// references at the same line size.
    /// When the phases' ground truth is an LRU L2 alone at the sweep's line size, the sweep
    /// simulates it too (as a probe cache, built only once it has to evict: the report's 1 MiB
    /// L2 never is on gzip) and the phases count its misses instead of simulating it.
    pub(super) fn new(mut three_c: ThreeCSweep, phases: PhaseAnalysis) -> SweepAndPhases {
        let phases = phases.fed_distances();
        let o = phases.options();
        let phases = if o.l1.is_none() && o.policy == Policy::Lru && three_c.set_probe(o.l2).is_ok()
        {
            phases.fed_truth().expect("an LRU L2 without L1 can be fed")
        } else {
            phases
        };
        SweepAndPhases { three_c, phases }
    }
}

impl Analysis for SweepAndPhases {
    fn observe(&mut self, batch: &Batch) {
        self.three_c.observe(batch);
        self.phases.observe_with_distances(
            batch,
            self.three_c.batch_distances(),
            self.three_c.batch_probe_misses(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::phases::{KChoice, Method, PhaseOptions};
    use crate::reuse::Options;
    use crate::sim::Geometry;
    use proptest::prelude::*;

    proptest! {
        /// Phases fed the sweep's distances and L2 misses report what phases computing their
        /// own do, the reuse-distance signature and the ground truth included, across batches
        /// cut anywhere.
        #[test]
        fn shared_distances_change_no_phase(
            trace in proptest::collection::vec((0u64..200, 0u8..4), 1..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..4),
            interval in 20u64..200,
        ) {
            let accesses: Vec<Access> = trace
                .iter()
                .map(|&(line, kind)| match kind {
                    0 => Access::load(line * 64 + 9, 4),
                    1 => Access::store(line * 64, 8),
                    2 => Access { kind: crate::AccessKind::Modify, ..Access::load(line * 64 + 60, 8) },
                    _ => Access { kind: crate::AccessKind::Instr, ..Access::load(line * 64, 4) },
                })
                .collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(accesses.len())).collect();
            cuts.extend([0, accesses.len()]);
            cuts.sort_unstable();
            let options = PhaseOptions {
                interval,
                k: KChoice::Fixed(2),
                l2: Geometry::new(4096, 4, 64).unwrap(),
                methods: Method::ALL.to_vec(),
                ..PhaseOptions::default()
            };
            let geometries = [Geometry::new(1024, 2, 64).unwrap()];
            let sweep = ThreeCSweep::new(Options::default(), &geometries, Policy::Lru).unwrap();
            let mut shared = SweepAndPhases::new(sweep, PhaseAnalysis::new(options.clone()).unwrap());
            // The ground truth is fed by the sweep's probe, not simulated again.
            prop_assert!(shared.three_c.batch_probe_misses().is_some());
            let mut own = PhaseAnalysis::new(options).unwrap();
            for w in cuts.windows(2) {
                let batch: Batch = accesses[w[0]..w[1]].iter().copied().collect();
                shared.observe(&batch);
                own.observe(&batch);
            }
            match (shared.phases.finish(), own.finish()) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a.untimed(), b.untimed()),
                (a, b) => prop_assert_eq!(a.is_err(), b.is_err()),
            }
        }
    }
}
