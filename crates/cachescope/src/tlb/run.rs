//! [`simulate`]: `simulate`'s caches and TLBs in one pass, for the command line and Python.

use crate::analysis::Analysis;
use crate::pass::{Hooks, Independent, Pass};
use crate::sim::{SimAnalysis, SimReport};
use crate::trace::Trace;

use super::translate::{TlbReport, TlbSim, Walked};

/// Runs `sims` and `tlb` over `trace` through `pass`, in one decode: with `walks`, each cache
/// behind a copy of the TLBs that feeds it the walks' page-table reads (counted apart at every
/// level, [`SimAnalysis::count_walks`]), the caches still side by side on the threads;
/// otherwise the TLBs beside the caches. The caches' reports and the TLBs' (every copy counts
/// the same).
pub fn simulate<H: Hooks>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    mut sims: Vec<SimAnalysis>,
    mut tlb: TlbSim,
    walks: bool,
) -> Result<(Vec<SimReport>, TlbReport), H::Error> {
    if !walks || sims.is_empty() {
        let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
            .iter_mut()
            .map(|s| s as &mut (dyn Analysis + Send))
            .collect();
        analyses.push(&mut tlb);
        pass.run(trace, Independent(&mut analyses))?;
        return Ok((sims.iter().map(SimAnalysis::finish).collect(), tlb.finish()));
    }
    let mut walked: Vec<Walked<SimAnalysis>> = sims
        .into_iter()
        .map(|mut s| {
            s.count_walks();
            Walked::new(tlb.clone(), s)
        })
        .collect();
    let mut analyses: Vec<&mut (dyn Analysis + Send)> = walked
        .iter_mut()
        .map(|w| w as &mut (dyn Analysis + Send))
        .collect();
    pass.run(trace, Independent(&mut analyses))?;
    let mut reports = Vec::new();
    let mut report = tlb.finish();
    for (k, w) in walked.into_iter().enumerate() {
        let (t, s) = w.finish();
        if k == 0 {
            report = t;
        }
        reports.push(s.finish());
    }
    Ok((reports, report))
}
