//! Representative-interval simulation, SimPoint style (Sherwood et al. 2002, beyond the
//! setvector paper): simulate one interval per phase and extrapolate the whole trace's L2 miss
//! ratio from them.
//!
//! A second pass over the same trace ([`RepresentativeSim`], an [`Analysis`]) cuts it into the
//! same intervals and simulates only the representatives chosen by
//! [`PhaseAnalysis::finish`](super::PhaseAnalysis::finish) (for every method at once; an
//! interval chosen by several methods is simulated once). Each representative `r` starts from
//! empty caches, which are warmed by the `w` = `warmup_intervals` intervals before it (not
//! counted); then `r`'s L2 accesses `A_r` and misses `X_r` are counted. With `D` the data
//! references of an interval or a phase, a method's estimate is
//!
//! `miss ratio ≈ Σ_p D_p · X_r(p) / D_r(p)  ÷  Σ_p D_p · A_r(p) / D_r(p)`,
//!
//! each phase weighted by its size in data references (with no L1, `A = D` and this is the
//! reference-weighted mean of the representatives' miss ratios). The actual value is the full
//! warm simulation of the first pass. Speed-up: intervals over intervals simulated (warm-up
//! included), and data references over data references simulated.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::intervals::{Segment, Splitter};
use super::options::PhaseOptions;
use super::report::{PhaseReport, SimPointEstimate};
use super::truth::{Caches, L2Counts};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};

/// The second pass: simulates the representative intervals of a [`PhaseReport`].
#[derive(Debug)]
pub struct RepresentativeSim {
    options: PhaseOptions,
    splitter: Splitter,
    addrs: Vec<u64>,
    segs: Vec<Segment>,
    /// Representative interval → first interval of its window (warm-up start).
    windows: BTreeMap<u64, u64>,
    /// Windows in progress, by representative: their caches and the representative's counts.
    active: BTreeMap<u64, (Caches, L2Counts)>,
    /// Counts of finished representatives.
    done: BTreeMap<u64, L2Counts>,
    /// Interval of the segment seen last, once the trace has started.
    current: Option<u64>,
    /// Data references simulated, summed over windows.
    refs_simulated: u64,
    /// Time spent simulating.
    time: Duration,
}

/// What the second pass measured: the counts of each representative interval.
#[derive(Clone, Debug, PartialEq)]
pub struct RepresentativeRuns {
    /// L2 accesses and hits of each simulated representative, by interval index.
    pub counts: BTreeMap<u64, L2Counts>,
    /// Intervals the second pass saw.
    pub intervals: u64,
    /// Data references simulated, warm-up included, summed over windows.
    pub refs_simulated: u64,
    /// Intervals simulated, warm-up included, summed over windows.
    pub intervals_simulated: u64,
    /// Wall time spent in the simulators, in seconds (measured).
    pub seconds: f64,
}

impl RepresentativeSim {
    /// The second pass for `report`'s representatives (every method's), with its settings.
    pub fn new(report: &PhaseReport) -> Result<RepresentativeSim> {
        let s = &report.settings;
        let options = PhaseOptions {
            l2: s.l2,
            l1: s.l1,
            policy: s.policy,
            ..PhaseOptions::default()
        };
        Caches::new(&options)?;
        let mut windows = BTreeMap::new();
        for m in &report.methods {
            for p in &m.phases {
                let r = p.representative;
                windows.insert(r, r.saturating_sub(s.warmup_intervals));
            }
        }
        Ok(RepresentativeSim {
            splitter: Splitter::new(Some(s.unit), s.interval),
            options,
            addrs: Vec::new(),
            segs: Vec::new(),
            windows,
            active: BTreeMap::new(),
            done: BTreeMap::new(),
            current: None,
            refs_simulated: 0,
            time: Duration::ZERO,
        })
    }

    /// The representative intervals that will be simulated.
    pub fn representatives(&self) -> impl Iterator<Item = u64> + '_ {
        self.windows.keys().copied()
    }

    /// Moves to interval `i`: ends the one before (its representative, if any, is done) and
    /// opens the windows that start at `i`.
    fn enter(&mut self, i: u64) {
        if let Some(prev) = self.current {
            if let Some((_, counts)) = self.active.remove(&prev) {
                self.done.insert(prev, counts);
            }
        }
        self.current = Some(i);
        for (&r, &from) in &self.windows {
            if from == i {
                let caches = Caches::new(&self.options).expect("checked in new");
                self.active.insert(r, (caches, L2Counts::default()));
            }
        }
    }

    /// Ends the pass: the counts of every representative.
    pub fn finish(mut self) -> RepresentativeRuns {
        if let Some(last) = self.current {
            // Close the last interval.
            self.enter(last + 1);
        }
        let intervals = self.splitter.counts().len() as u64;
        let intervals_simulated = self
            .windows
            .iter()
            .filter(|&(&r, _)| r < intervals)
            .map(|(&r, &from)| r - from + 1)
            .sum();
        RepresentativeRuns {
            counts: self.done,
            intervals,
            refs_simulated: self.refs_simulated,
            intervals_simulated,
            seconds: self.time.as_secs_f64(),
        }
    }
}

impl Analysis for RepresentativeSim {
    fn observe(&mut self, batch: &Batch) {
        let (mut addrs, mut segs) = (
            std::mem::take(&mut self.addrs),
            std::mem::take(&mut self.segs),
        );
        self.splitter.split(batch, &mut addrs, &mut segs);
        for g in &segs {
            if self.current != Some(g.interval) {
                self.enter(g.interval);
            }
            if self.active.is_empty() {
                continue;
            }
            let part = &addrs[g.start..g.end];
            let start = Instant::now();
            for (&r, (caches, counts)) in &mut self.active {
                self.refs_simulated += part.len() as u64;
                if r == g.interval {
                    caches.run(part, counts);
                } else {
                    caches.run(part, &mut L2Counts::default());
                }
            }
            self.time += start.elapsed();
        }
        (self.addrs, self.segs) = (addrs, segs);
    }
}

impl PhaseReport {
    /// The second pass that simulates this report's representative intervals; run it over
    /// the same trace, then give its result to [`PhaseReport::apply_representatives`].
    pub fn representative_simulation(&self) -> Result<RepresentativeSim> {
        RepresentativeSim::new(self)
    }

    /// Fills every method's `simpoint` estimate from the second pass's `runs`. Errors when the
    /// runs come from a different trace (another number of intervals, or a representative
    /// missing).
    pub fn apply_representatives(&mut self, runs: &RepresentativeRuns) -> Result<()> {
        let n = self.intervals.len() as u64;
        let mismatch = |what: String| Error::InvalidParameter {
            name: "representative simulation",
            message: format!("{what}: the second pass must read the same trace"),
        };
        if runs.intervals != n {
            return Err(mismatch(format!(
                "the second pass saw {} intervals, the analysis {n}",
                runs.intervals
            )));
        }
        let actual = self.l2_miss_ratio;
        let warmup = self.settings.warmup_intervals;
        for m in &mut self.methods {
            let (mut misses, mut accesses) = (0.0, 0.0);
            let (mut intervals_simulated, mut refs_simulated) = (0u64, 0u64);
            for p in &m.phases {
                let r = p.representative;
                let c = runs
                    .counts
                    .get(&r)
                    .ok_or_else(|| mismatch(format!("interval {r} was not simulated")))?;
                let d_r = self.intervals[r as usize].data_refs;
                if d_r > 0 {
                    let scale = p.data_refs as f64 / d_r as f64;
                    misses += scale * (c.accesses - c.hits) as f64;
                    accesses += scale * c.accesses as f64;
                }
                let from = r.saturating_sub(warmup);
                intervals_simulated += r - from + 1;
                refs_simulated += self.intervals[from as usize..=r as usize]
                    .iter()
                    .map(|i| i.data_refs)
                    .sum::<u64>();
            }
            let miss_ratio = if accesses > 0.0 {
                misses / accesses
            } else {
                0.0
            };
            let error = miss_ratio - actual;
            let full_seconds = self.ground_truth_ns_per_ref * 1e-9 * self.data_refs as f64;
            let rep_seconds =
                runs.seconds / runs.refs_simulated.max(1) as f64 * refs_simulated as f64;
            m.simpoint = Some(SimPointEstimate {
                miss_ratio,
                actual_miss_ratio: actual,
                error,
                relative_error: (actual > 0.0).then(|| error.abs() / actual),
                intervals_simulated,
                speedup: n as f64 / intervals_simulated.max(1) as f64,
                refs_simulated,
                speedup_refs: self.data_refs as f64 / refs_simulated.max(1) as f64,
                measured_speedup: (rep_seconds > 0.0).then(|| full_seconds / rep_seconds),
            });
        }
        Ok(())
    }
}
