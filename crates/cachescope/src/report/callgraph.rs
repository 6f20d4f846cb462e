//! The report's view of the call graph ([`crate::attribution::callgraph`]): the functions with
//! the most inclusive D1 misses for the table, the calling contexts for the flame graph.

use super::model::{CallGraphContext, CallGraphFunction, CallGraphSummary};
use crate::attribution::callgraph::CallGraphReport;

/// Functions in the report's table.
const FUNCTIONS: usize = 20;

/// The note of a sampled report of a trace with call events, without `--sampled-calls`.
pub(super) const LEFT_OUT: &str = "call-graph section left out: the trace has call events; \
    `report --sampled --sampled-calls TRACE` adds it (calls and instructions exact, misses \
    estimated), at a cost in CPU on call-heavy programs (docs/callgraph.md)";

/// The summary of `r`, when it had call events.
pub(super) fn summary(r: Option<CallGraphReport>) -> Option<CallGraphSummary> {
    let r = r.filter(|r| r.call_events)?;
    let functions = r
        .functions
        .iter()
        .filter(|f| !f.function.starts_with("<signal"))
        .take(FUNCTIONS)
        .map(|f| {
            let incl = f.inclusive.unwrap_or(f.self_cost);
            CallGraphFunction {
                function: f.function.clone(),
                calls: f.calls,
                instructions_self: f.self_cost.get("Ir").unwrap_or(0),
                instructions_inclusive: incl.get("Ir").unwrap_or(0),
                d1_self: f.self_cost.d1_misses(),
                d1_inclusive: incl.d1_misses(),
                ll_inclusive: incl.ll_data_misses(),
                structure: f.structures.first().map(|s| s.structure.clone()),
            }
        })
        .collect();
    let contexts = r
        .contexts
        .iter()
        .map(|c| CallGraphContext {
            parent: c.parent,
            function: c.function.clone(),
            d1_misses: c.inclusive.d1_misses(),
        })
        .collect();
    Some(CallGraphSummary {
        caches: r.caches.to_vec(),
        d1_misses: r.totals.d1_misses(),
        functions,
        contexts,
    })
}

/// The miniatures a call graph of a stream sampled at `rate` runs through (`attribute
/// --callgraph --sampled`, Python's `callgraph(sampled=True)`): D1 and LL at the lower of the
/// rates their miniatures stand for exactly ([`super::sampled::miniature_rate`]), I1 as is (a
/// sampled stream has no fetches).
pub fn miniatures(
    [i1, d1, ll]: [crate::sim::Geometry; 3],
    rate: f64,
) -> crate::Result<crate::attribution::callgraph::Miniatures> {
    use super::sampled::{miniature, miniature_rate};
    let at = |g| -> crate::Result<f64> { Ok(miniature_rate(g, rate)?.unwrap_or(rate)) };
    let r = at(d1)?.min(at(ll)?);
    Ok(crate::attribution::callgraph::Miniatures {
        rate: r,
        caches: [i1, miniature(d1, r)?, miniature(ll, r)?],
    })
}
