//! From the accounts to the report: function keys named (the function a key's address lies
//! in, as its symbols name it, so two entries of one function are one), lines placed, each
//! function's inclusive costs summed over the context nodes whose path holds it, calls merged
//! by caller, callee and site line.

use std::collections::BTreeMap;

use serde::Serialize;

use super::costs::{CostModel, Costs, EVENTS};
use super::graph::{Account, Graph, NO_FN, NodeId, ROOT, SIGNAL_KEY};
use crate::attribution::buckets::{BucketKind, BucketMap};
use crate::attribution::symbols::Symbolizer;

/// Structures listed per function.
const STRUCTURES: usize = 5;

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
}

/// Names, files and objects of the function keys, merged by name and object.
struct Names {
    /// Per report function: name, file, object, entry position.
    functions: Vec<(String, Option<String>, Option<String>, Position)>,
    by_name: BTreeMap<(String, Option<String>), usize>,
    /// FnId → report function.
    of_key: Vec<usize>,
    /// Instruction address → (report function, position), for lines.
    by_pc: hashbrown::HashMap<u64, (usize, Position), foldhash::fast::FixedState>,
    sym: Symbolizer,
}

impl Names {
    fn function_of(&mut self, buckets: &BucketMap, addr: u64) -> usize {
        let frames = self.sym.frames(addr, buckets.module_of(addr));
        let outer = frames.last().expect("never empty");
        let name = match &outer.function {
            Some(f) => f.clone(),
            None => outer.label(),
        };
        let object = buckets
            .module_of(addr)
            .and_then(|m| m.path.file_name())
            .map(|f| f.to_string_lossy().into_owned());
        let entry = (buckets.source_path(addr), frames[0].line.unwrap_or(0));
        self.named(name, entry, object)
    }

    fn named(&mut self, name: String, entry: Position, object: Option<String>) -> usize {
        let next = self.functions.len();
        let i = *self
            .by_name
            .entry((name.clone(), object.clone()))
            .or_insert(next);
        if i == next {
            self.functions.push((name, entry.0.clone(), object, entry));
        }
        i
    }

    fn position(&mut self, buckets: &BucketMap, pc: u64) -> Position {
        let line = self.sym.code_line(pc, buckets.module_of(pc)).line;
        match line {
            Some(l) => (buckets.source_path(pc), l),
            None => (None, 0),
        }
    }
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
    let mut names = Names {
        functions: Vec::new(),
        by_name: BTreeMap::new(),
        of_key: Vec::new(),
        by_pc: Default::default(),
        sym: Symbolizer::default(),
    };
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
    }
}

/// The contexts worth a box: their inclusive costs summed up the tree, the small ones left
/// out, in tree order (a parent before its children, children by cost).
fn contexts(a: &Account, graph: &Graph, names: &Names, totals: &Costs) -> Vec<ContextRow> {
    let n = graph.nodes.len();
    let mut incl = vec![Costs::default(); n];
    for (i, c) in a.node_costs.iter().enumerate() {
        incl[i] = *c;
    }
    // Children have higher ids than their parents: one backward sweep sums subtrees.
    for i in (1..n).rev() {
        let (parent, _) = graph.nodes[i];
        let c = incl[i];
        incl[parent as usize].add(&c);
    }
    let by_misses = totals.d1_misses() > 0;
    let weight = |c: &Costs| {
        if by_misses {
            c.d1_misses()
        } else {
            c.0[super::costs::IR]
        }
    };
    let floor = (CONTEXT_SHARE * weight(totals) as f64).ceil().max(1.0) as u64;
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 1..n {
        if weight(&incl[i]) >= floor {
            children[graph.nodes[i].0 as usize].push(i);
        }
    }
    let mut rows = Vec::new();
    let mut todo: Vec<(usize, Option<usize>)> = Vec::new();
    let push_children =
        |todo: &mut Vec<(usize, Option<usize>)>, node: usize, row: Option<usize>| {
            let mut kids = children[node].clone();
            kids.sort_by_key(|&k| std::cmp::Reverse(weight(&incl[k])));
            todo.extend(kids.into_iter().rev().map(|k| (k, row)));
        };
    push_children(&mut todo, 0, None);
    while let Some((node, parent)) = todo.pop() {
        let f = graph.nodes[node].1;
        rows.push(ContextRow {
            parent,
            function: names.functions[names.of_key[f as usize]].0.clone(),
            inclusive: incl[node],
        });
        push_children(&mut todo, node, Some(rows.len() - 1));
    }
    rows
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

/// The distinct report functions on `node`'s path.
fn path_functions(graph: &Graph, names: &Names, mut node: NodeId, out: &mut Vec<usize>) {
    out.clear();
    while node != ROOT {
        let (parent, f) = graph.nodes[node as usize];
        let i = names.of_key[f as usize];
        if !out.contains(&i) {
            out.push(i);
        }
        node = parent;
    }
}

type Rows = (Costs, Vec<FunctionRow>, Vec<CallRow>);

/// One account's totals, functions and calls.
fn rows(
    a: &Account,
    graph: &Graph,
    buckets: &BucketMap,
    names: &mut Names,
    call_events: bool,
    bucket_names: &[(String, BucketKind)],
) -> Rows {
    let mut self_costs: BTreeMap<usize, (Costs, BTreeMap<Position, Costs>)> = BTreeMap::new();
    let mut totals = Costs::default();
    for (&(f, pc), &i) in &a.lines {
        let c = &a.line_costs[i];
        totals.add(c);
        let (func, pos) = match names.by_pc.get(&pc) {
            Some((func, pos)) if f == NO_FN => (*func, pos.clone()),
            _ => {
                let pos = names.position(buckets, pc);
                let func = if f == NO_FN {
                    let func = names.function_of(buckets, pc);
                    names.by_pc.insert(pc, (func, pos.clone()));
                    func
                } else {
                    names.of_key[f as usize]
                };
                (func, pos)
            }
        };
        let e = self_costs.entry(func).or_default();
        e.0.add(c);
        e.1.entry(pos).or_default().add(c);
    }
    let mut inclusive: BTreeMap<usize, Costs> = BTreeMap::new();
    let mut path = Vec::new();
    for (n, c) in a.node_costs.iter().enumerate().skip(1) {
        if c.is_zero() {
            continue;
        }
        path_functions(graph, names, n as NodeId, &mut path);
        for &i in &path {
            inclusive.entry(i).or_default().add(c);
        }
    }
    let mut structures: BTreeMap<(usize, u32), [u64; 2]> = BTreeMap::new();
    for (&(n, b), m) in &a.buckets {
        path_functions(graph, names, n, &mut path);
        for &i in &path {
            let e = structures.entry((i, b)).or_default();
            e[0] += m[0];
            e[1] += m[1];
        }
    }
    // Calls, merged by caller, callee and site line.
    let mut calls: BTreeMap<(usize, usize, Position), (u64, Costs)> = BTreeMap::new();
    for (&(caller, callee, site), &i) in &a.arcs {
        if caller == NO_FN {
            continue;
        }
        let pos = names.position(buckets, site);
        let key = (
            names.of_key[caller as usize],
            names.of_key[callee as usize],
            pos,
        );
        let e = calls.entry(key).or_default();
        e.0 += a.arc_counts[i].calls;
        e.1.add(&a.arc_counts[i].inclusive);
    }
    let mut called: BTreeMap<usize, u64> = BTreeMap::new();
    for ((_, callee, _), (n, _)) in &calls {
        *called.entry(*callee).or_default() += n;
    }
    // Every function with costs or calls, in report order.
    let mut ids: Vec<usize> = self_costs
        .keys()
        .chain(inclusive.keys())
        .chain(called.keys())
        .copied()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut functions: Vec<FunctionRow> = ids
        .iter()
        .map(|&i| {
            let (name, file, object, entry) = names.functions[i].clone();
            let (self_cost, lines) = self_costs.remove(&i).unwrap_or_default();
            let mut rows: Vec<StructureRow> = structures
                .range((i, 0)..=(i, u32::MAX))
                .filter_map(|(&(_, b), m)| {
                    let (name, kind) = bucket_names.get(b as usize)?;
                    Some(StructureRow {
                        structure: name.clone(),
                        kind: *kind,
                        d1_misses: m[0],
                        ll_misses: m[1],
                    })
                })
                .collect();
            rows.sort_by(|x, y| {
                y.d1_misses
                    .cmp(&x.d1_misses)
                    .then_with(|| x.structure.cmp(&y.structure))
            });
            rows.truncate(STRUCTURES);
            FunctionRow {
                function: name,
                file,
                object,
                calls: called.get(&i).copied().unwrap_or(0),
                self_cost,
                inclusive: call_events.then(|| inclusive.get(&i).copied().unwrap_or_default()),
                structures: rows,
                entry,
                lines,
            }
        })
        .collect();
    let rank = |f: &FunctionRow| f.inclusive.unwrap_or(f.self_cost).d1_misses();
    let mut order: Vec<usize> = (0..functions.len()).collect();
    order.sort_by(|&x, &y| {
        let (fx, fy) = (&functions[x], &functions[y]);
        rank(fy)
            .cmp(&rank(fx))
            .then_with(|| fx.function.cmp(&fy.function))
    });
    // Report index of each function id, for the calls' ends.
    let mut at = BTreeMap::new();
    for (k, &o) in order.iter().enumerate() {
        at.insert(ids[o], k);
    }
    let mut sorted = Vec::with_capacity(functions.len());
    for &o in &order {
        sorted.push(std::mem::replace(&mut functions[o], placeholder()));
    }
    let mut call_rows: Vec<CallRow> = calls
        .into_iter()
        .map(|((caller, callee, site), (n, inclusive))| CallRow {
            caller: names.functions[caller].0.clone(),
            callee: names.functions[callee].0.clone(),
            site: site.0.as_ref().map(|f| format!("{}:{}", short(f), site.1)),
            calls: n,
            inclusive,
            ends: (at[&caller], at[&callee], site),
        })
        .collect();
    call_rows.sort_by(|x, y| {
        y.calls
            .cmp(&x.calls)
            .then_with(|| x.caller.cmp(&y.caller))
            .then_with(|| x.callee.cmp(&y.callee))
            .then_with(|| x.site.cmp(&y.site))
    });
    (totals, sorted, call_rows)
}

/// A file's last component.
fn short(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn placeholder() -> FunctionRow {
    FunctionRow {
        function: String::new(),
        file: None,
        object: None,
        calls: 0,
        self_cost: Costs::default(),
        inclusive: None,
        structures: Vec::new(),
        entry: (None, 0),
        lines: BTreeMap::new(),
    }
}
