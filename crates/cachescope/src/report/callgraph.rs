//! The report's view of the call graph ([`crate::attribution::callgraph`]): the functions with
//! the most inclusive D1 misses for the table, the calling contexts for the flame graph.

use super::model::{CallGraphContext, CallGraphFunction, CallGraphSummary};
use crate::attribution::callgraph::CallGraphReport;

/// Functions in the report's table.
const FUNCTIONS: usize = 20;

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
