//! One account's rows: its functions with their self and inclusive costs and structures, its
//! calls merged by caller, callee and site line, and the calling contexts of a flame graph.

use std::collections::BTreeMap;

use super::costs::Costs;
use super::graph::{Account, Graph, NO_FN, NodeId};
use super::names::{Names, path_functions};
use super::report::{CONTEXT_SHARE, CallRow, ContextRow, FunctionRow, Position, StructureRow};
use crate::attribution::buckets::{BucketKind, BucketMap};

/// Structures listed per function.
const STRUCTURES: usize = 5;

/// The contexts worth a box: their inclusive costs summed up the tree, the small ones left
/// out, in tree order (a parent before its children, children by cost).
pub(super) fn contexts(
    a: &Account,
    graph: &Graph,
    names: &Names,
    totals: &Costs,
) -> Vec<ContextRow> {
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

type Rows = (Costs, Vec<FunctionRow>, Vec<CallRow>);

/// One account's totals, functions and calls.
pub(super) fn rows(
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
