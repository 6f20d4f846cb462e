//! From the accounts to the report: function keys named (the function a key's address lies
//! in, as its symbols name it, so two entries of one function are one), lines placed, each
//! function's inclusive costs summed over the context nodes whose path holds it, calls merged
//! by caller, callee and site line.

use std::collections::BTreeMap;

use serde::Serialize;

use super::costs::{CostModel, Costs, EVENTS};
use super::graph::{Account, Graph, SIGNAL_KEY};
use super::names::Names;
use super::rows::{contexts, rows};
use crate::attribution::buckets::{BucketKind, BucketMap};
use crate::attribution::symbols::Symbolizer;

/// The share of the D1 misses (or instructions) a calling context needs to be listed.
pub const CONTEXT_SHARE: f64 = 0.002;

/// A source position: the file (as DWARF names it, usually an absolute path) and line; no
/// file and line 0 when unknown.
pub type Position = (Option<String>, u32);

/// A structure a function's subtree missed on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StructureRow {
    /// The variable, heap allocation site, stack or other, as `attribute` names it.
    pub structure: String,
    /// Its kind.
    pub kind: BucketKind,
    /// D1 misses of the subtree's data references on it.
    pub d1_misses: u64,
    /// LL misses of them.
    pub ll_misses: u64,
}

/// One function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionRow {
    /// Its name (demangled), or `module+0xOFFSET` / `0xADDRESS` without symbols; a signal
    /// handler's boundary is `<signal N>`.
    pub function: String,
    /// Its source file, when known.
    pub file: Option<String>,
    /// The object (executable or library) it is in, when known.
    pub object: Option<String>,
    /// Times it was called or jumped into (0 without call events).
    pub calls: u64,
    /// Its own costs: references made while it was the top frame.
    #[serde(rename = "self")]
    pub self_cost: Costs,
    /// Its costs with everything it called: references made while it was on the stack,
    /// counted once however deep it recurs. `None` without call events.
    pub inclusive: Option<Costs>,
    /// The structures its subtree missed on most (D1 misses), with an event log.
    pub structures: Vec<StructureRow>,
    /// Its first instruction's position (a call's target line).
    #[serde(skip)]
    pub entry: Position,
    /// Self costs by source position.
    #[serde(skip)]
    pub lines: BTreeMap<Position, Costs>,
}

/// Calls from one function to another at one source line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallRow {
    /// The calling function.
    pub caller: String,
    /// The function called.
    pub callee: String,
    /// Where: `file:line` of the call (or of the jump, for a tail call), when known.
    pub site: Option<String>,
    /// Calls made.
    pub calls: u64,
    /// Their inclusive cost, recursive calls adding nothing (their costs are their outer
    /// call's): the sum over a function's callers is its inclusive cost.
    pub inclusive: Costs,
    /// Index of the caller and callee in `functions`, and the site, for writers.
    #[serde(skip)]
    pub ends: (usize, usize, Position),
}

/// One calling context: a path of functions from a thread's bottom frame, each once (a
/// recursive call adds no context), with what was spent below it. The contexts form a tree
/// (a flame graph's boxes: a context's width is its inclusive cost, its children stacked on
/// it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextRow {
    /// The context it extends (`None` for a bottom frame or a signal handler's boundary).
    pub parent: Option<usize>,
    /// The function it adds.
    pub function: String,
    /// The costs of the references made in it or below it.
    pub inclusive: Costs,
}

/// One thread's call graph (`--per-thread`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadGraph {
    /// The thread.
    pub thread: u32,
    /// Its references' costs.
    pub totals: Costs,
    /// Its functions, as in [`CallGraphReport::functions`].
    pub functions: Vec<FunctionRow>,
    /// Its calls.
    pub calls: Vec<CallRow>,
}

/// The call graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallGraphReport {
    /// The caches simulated: I1, D1, LL (`SIZE,ASSOC,LINE`).
    pub caches: [String; 3],
    /// The event names of every cost, in column order.
    pub events: Vec<&'static str>,
    /// True when the trace had call events (else no inclusive costs, no calls).
    pub call_events: bool,
    /// True when two or more threads made references (coherence misses are counted).
    pub threaded: bool,
    /// Every reference's costs.
    pub totals: Costs,
    /// Every function that made a reference or was called, most inclusive D1 misses first
    /// (most self D1 misses, without call events).
    pub functions: Vec<FunctionRow>,
    /// Every (caller, callee, site line), most calls first.
    pub calls: Vec<CallRow>,
    /// The calling contexts with at least [`CONTEXT_SHARE`] of the D1 misses (or of the
    /// instructions, when nothing missed), parents before children: a flame graph's boxes.
    pub contexts: Vec<ContextRow>,
    /// Per thread, with `per_thread`.
    pub threads: Vec<ThreadGraph>,
    /// What is missing and why.
    pub notes: Vec<String>,
    /// A sampled stream's (`--sampled`): the rate its misses were scaled by (estimates; the
    /// references and calls are exact). `None` for a full stream.
    pub sampled: Option<f64>,
}

/// The report of `graph`: `named` when an event log gave the buckets.
pub(super) fn build(
    graph: &Graph,
    buckets: &BucketMap,
    named: bool,
    call_events: bool,
    model: &CostModel,
    per_thread: bool,
) -> CallGraphReport {
    let mut names = Names::default();
    for &key in &graph.keys {
        let i = if key & SIGNAL_KEY != 0 {
            names.named(format!("<signal {}>", key & !SIGNAL_KEY), (None, 0), None)
        } else {
            names.function_of(buckets, key)
        };
        names.of_key.push(i);
    }
    let mut sym = Symbolizer::default();
    let bucket_names = if named {
        buckets.finish_names(&mut sym)
    } else {
        Vec::new()
    };
    let mut merged = Account::default();
    let mut threads = Vec::new();
    for t in &graph.threads {
        if per_thread {
            let (totals, functions, calls) = rows(
                &t.account,
                graph,
                buckets,
                &mut names,
                call_events,
                &bucket_names,
            );
            threads.push(ThreadGraph {
                thread: t.thread,
                totals,
                functions,
                calls,
            });
        }
        merge(&mut merged, &t.account);
    }
    let (totals, functions, calls) = rows(
        &merged,
        graph,
        buckets,
        &mut names,
        call_events,
        &bucket_names,
    );
    let contexts = contexts(&merged, graph, &names, &totals);
    let mut notes = Vec::new();
    if !call_events {
        notes.push(
            "the trace has no call events (a format or recording without them; `record` \
             writes them unless given --no-calls): self costs only, by the function holding \
             each instruction"
                .into(),
        );
    }
    if !named {
        notes.push(
            "no event log: no structures, and only the --exe program's functions named".into(),
        );
    }
    let [i1, d1, ll] = model.geometries();
    CallGraphReport {
        caches: [i1, d1, ll].map(|g| g.to_string()),
        events: EVENTS.to_vec(),
        call_events,
        threaded: model.threaded(),
        totals,
        functions,
        calls,
        contexts,
        threads,
        notes,
        sampled: None,
    }
}

/// Adds `a`'s counts to `into` (line and arc indexes are remapped by key).
fn merge(into: &mut Account, a: &Account) {
    for (key, &i) in &a.lines {
        let next = into.line_costs.len();
        let j = *into.lines.entry(*key).or_insert(next);
        if j == next {
            into.line_costs.push(Costs::default());
        }
        into.line_costs[j].add(&a.line_costs[i]);
    }
    if into.node_costs.len() < a.node_costs.len() {
        into.node_costs.resize(a.node_costs.len(), Costs::default());
    }
    for (n, c) in a.node_costs.iter().enumerate() {
        into.node_costs[n].add(c);
    }
    for (key, &i) in &a.arcs {
        let next = into.arc_counts.len();
        let j = *into.arcs.entry(*key).or_insert(next);
        if j == next {
            into.arc_counts.push(Default::default());
        }
        into.arc_counts[j].calls += a.arc_counts[i].calls;
        into.arc_counts[j].inclusive.add(&a.arc_counts[i].inclusive);
    }
    for (key, m) in &a.buckets {
        let e = into.buckets.entry(*key).or_default();
        e[0] += m[0];
        e[1] += m[1];
    }
}
