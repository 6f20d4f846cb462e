//! The report's policy curves: how far the program's LRU caches are from the policies real
//! caches use and from the optimal bound. FIFO, SRRIP and DRRIP run in the report's
//! set-associative caches (the 3C section's geometries) as miniature simulations with at least
//! 256 sets each (exact below that size); LRU in the same caches is the 3C section's exact
//! simulation; OPT (Belady's MIN, fully associative, exact) is the bound none of them beats.

use crate::Result;
use crate::mini::MiniSim;
use crate::opt::OptAnalysis;
use crate::reuse::{Mrc, MrcPoint, Options};
use crate::sim::{Policy, SimReport};

/// Sets each miniature keeps at least: DRRIP's 64 leader sets fit with followers beside
/// them, and caches up to 256 sets (128 KiB of 8 ways) are simulated exactly. Beyond, the
/// sampled lines' cold misses are the noise (on the phases workload, 1-2 pp at 4-16 MiB,
/// against 2 pp and more with 64 sets); docs/accuracy/mini.md measures the method.
const MIN_SETS: u64 = 256;
/// Sampling rate below the set floor: only the floor matters for the report's sizes.
const RATE: f64 = 1e-3;

/// The policies' simulations and OPT, fed by the report's pass.
pub struct PolicyCurves {
    /// FIFO, SRRIP and DRRIP in one miniature simulation: the sampling is shared.
    minis: MiniSim,
    /// OPT until [`PolicyCurves::take_opt`] hands it over to be finished on its own.
    opt: Option<OptAnalysis>,
    line_size: u64,
}

impl PolicyCurves {
    /// FIFO, SRRIP and DRRIP in `ways`-way caches of `sizes` bytes, and OPT.
    pub fn new(options: Options, sizes: &[u64], ways: u32, seed: u64) -> Result<PolicyCurves> {
        let policies = [Policy::Fifo, Policy::Srrip, Policy::Drrip { seed }];
        let minis = MiniSim::with_policies(options, &policies, Some(ways), sizes, RATE, MIN_SETS)?;
        Ok(PolicyCurves {
            minis,
            opt: Some(OptAnalysis::new(options)?),
            line_size: options.line_size.bytes(),
        })
    }

    /// The miniature simulations, and OPT's spill of the references while OPT is held, for
    /// the report's pass (two analyses, which the pass may run on different threads).
    pub fn parts(&mut self) -> (&mut MiniSim, Option<&mut OptAnalysis>) {
        (&mut self.minis, self.opt.as_mut())
    }

    /// Hands over OPT, whose `finish` (the backward pass and the OPT stack) is the longest
    /// model of the report, so that it can run beside the others; its curve comes back to
    /// [`PolicyCurves::finish`]. `None` once taken.
    pub fn take_opt(&mut self) -> Option<OptAnalysis> {
        self.opt.take()
    }

    /// The curves: LRU (from `lru`, the 3C section's exact simulations of the same caches),
    /// FIFO, SRRIP, DRRIP, then `opt` (OPT's curve); sizes above `max_bytes` left out.
    pub fn finish(self, lru: &[SimReport], opt: Mrc, max_bytes: u64) -> Vec<Mrc> {
        let line_size = self.line_size;
        let lru_points = lru
            .iter()
            .map(|r| {
                let s = &r.levels[0].stats;
                let cold = s.three_c.map_or(0, |c| c.cold);
                let refs = s.refs.max(1) as f64;
                MrcPoint {
                    size_bytes: r.levels[0].geometry.size_bytes(),
                    lines: r.levels[0].geometry.size_bytes() / line_size,
                    miss_ratio: Some(s.misses as f64 / refs),
                    miss_ratio_warm: (s.misses - cold) as f64 / refs,
                }
            })
            .collect();
        let mut curves = vec![Mrc {
            method: "exact".into(),
            policy: "lru".into(),
            line_size,
            points: lru_points,
        }];
        curves.extend(self.minis.finish_all());
        curves.push(opt);
        for c in &mut curves {
            c.points.retain(|p| p.size_bytes <= max_bytes);
        }
        curves
    }
}
