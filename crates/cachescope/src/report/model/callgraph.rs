//! The call graph's summary: functions and the flame graph's contexts (part of `report.json`'s contract, [`super`]).

use serde::{Deserialize, Serialize};

/// The call graph's summary (`attribute --callgraph` has all of it): the functions with the
/// most inclusive D1 misses, and the calling contexts a flame graph draws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallGraphSummary {
    /// The I1, D1 and LL simulated (Cachegrind's model), `SIZE,ASSOC,LINE`.
    pub caches: Vec<String>,
    /// D1 misses of every data reference.
    pub d1_misses: u64,
    /// The functions with the most inclusive D1 misses, most first.
    pub functions: Vec<CallGraphFunction>,
    /// Calling contexts with at least 0.2 % of the D1 misses, parents before children.
    pub contexts: Vec<CallGraphContext>,
}

/// One function's costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallGraphFunction {
    /// Its name.
    pub function: String,
    /// Times called.
    pub calls: u64,
    /// Instructions it executed itself, and with its callees.
    pub instructions_self: u64,
    /// Instructions executed while it was on the stack.
    pub instructions_inclusive: u64,
    /// D1 misses of its own data references.
    pub d1_self: u64,
    /// D1 misses while it was on the stack.
    pub d1_inclusive: u64,
    /// LL misses of data while it was on the stack.
    pub ll_inclusive: u64,
    /// The structure its subtree missed on most, if known.
    pub structure: Option<String>,
}

/// One calling context: a box of the flame graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallGraphContext {
    /// The context it extends (an index in `contexts`), or none at the bottom.
    pub parent: Option<usize>,
    /// The function it adds.
    pub function: String,
    /// D1 misses in it and below it.
    pub d1_misses: u64,
}
