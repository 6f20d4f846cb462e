//! Each thread's call paths: a tree whose nodes are the stacks the thread had, frame by
//! frame (function, kind, call site), so that a call event is one child lookup and a return
//! a parent pointer. Costs are charged to the path the thread is on, by index; what the
//! accounts need (each context node's costs, each call arc's calls and inclusive costs) is
//! summed once at the end ([`Paths::sum_into`]).
//!
//! What a frame means (its function, context node, call arc, whether it is the function's
//! outermost activation) depends on its path only, so it is worked out once, when the path
//! is first entered (`graph.rs`). A path's inclusive cost is its subtree's, less the
//! subtrees of signal boundaries (a handler's costs are not the frames' it interrupted):
//! summed over the paths that enter an arc as the callee's outermost activation, that is the
//! arc's inclusive cost as `graph.rs` defines it.
//!
//! The tree grows with the distinct paths (a recursion of depth `d` is `d` paths, one
//! context node), not with the calls.

use super::costs::Costs;
use super::graph::{Account, FnId, NO_FN, NodeId, ROOT};
use crate::batch::EnterKind;

/// A path: an index in [`Paths::nodes`].
pub(super) type PathId = u32;

/// The path of an empty stack.
pub(super) const NO_FRAMES: PathId = 0;

/// "No call arc": a root frame, a signal boundary, a PLT stub.
pub(super) const NO_ARC: u32 = u32::MAX;

type Map<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

/// One path: its last frame's meaning, and what was charged while it was the stack.
#[derive(Clone, Debug)]
pub(super) struct Path {
    pub parent: PathId,
    /// The frame's function (a PLT stub's: its caller's).
    pub f: FnId,
    /// The thread's context node while on this path.
    pub node: NodeId,
    /// The arc the frame was entered by, or [`NO_ARC`].
    pub arc: u32,
    /// The frame is its function's outermost activation (since the innermost signal
    /// boundary): its arc's inclusive cost counts it.
    pub outer: bool,
    pub signal: bool,
    /// A PLT stub: the site of the call into it.
    pub plt: Option<u64>,
    /// Times entered.
    pub calls: u64,
    /// Costs of the references made on this path (self).
    pub costs: Costs,
}

/// A thread's paths; node 0 is the empty stack.
#[derive(Debug)]
pub(super) struct Paths {
    pub nodes: Vec<Path>,
    /// (parent, key entered, kind, call site) → path.
    children: Map<(PathId, u64, EnterKind, u64), PathId>,
}

impl Path {
    /// A path out of `parent` whose frame is `f`'s in context `node`, not yet entered: no
    /// arc, not a signal boundary nor a PLT stub.
    pub(super) fn new(parent: PathId, f: FnId, node: NodeId) -> Path {
        Path {
            parent,
            f,
            node,
            arc: NO_ARC,
            outer: false,
            signal: false,
            plt: None,
            calls: 0,
            costs: Costs::default(),
        }
    }
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            nodes: vec![Path::new(NO_FRAMES, NO_FN, ROOT)],
            children: Map::default(),
        }
    }
}

impl Paths {
    /// The path `parent` enters by `(key, kind, site)`, if it was entered before.
    #[inline]
    pub(super) fn child(
        &self,
        parent: PathId,
        key: u64,
        kind: EnterKind,
        site: u64,
    ) -> Option<PathId> {
        self.children.get(&(parent, key, kind, site)).copied()
    }

    /// Adds the path `parent` enters by `(key, kind, site)`.
    pub(super) fn push(&mut self, key: u64, kind: EnterKind, site: u64, path: Path) -> PathId {
        let id = self.nodes.len() as PathId;
        self.children.insert((path.parent, key, kind, site), id);
        self.nodes.push(path);
        id
    }

    /// True when `f` has a frame on path `from` (since its innermost signal boundary).
    pub(super) fn active(&self, from: PathId, f: FnId) -> bool {
        let mut p = from;
        while p != NO_FRAMES {
            let n = &self.nodes[p as usize];
            if n.plt.is_none() && n.f == f {
                return true;
            }
            if n.signal {
                return false;
            }
            p = n.parent;
        }
        false
    }

    /// Adds every path's costs to its context node, and its calls and (for an outermost
    /// activation) its inclusive costs to its arc.
    pub(super) fn sum_into(&self, account: &mut Account) {
        let mut inclusive: Vec<Costs> = self.nodes.iter().map(|p| p.costs).collect();
        // A child comes after its parent.
        for i in (1..self.nodes.len()).rev() {
            let p = &self.nodes[i];
            if !p.signal {
                let c = inclusive[i];
                inclusive[p.parent as usize].add(&c);
            }
        }
        for (p, incl) in self.nodes.iter().zip(&inclusive) {
            if !p.costs.is_zero() {
                let costs = &mut account.node_costs;
                let n = p.node as usize;
                if costs.len() <= n {
                    costs.resize(n + 1, Costs::default());
                }
                costs[n].add(&p.costs);
            }
            if p.arc != NO_ARC {
                let a = &mut account.arc_counts[p.arc as usize];
                a.calls += p.calls;
                if p.outer {
                    a.inclusive.add(incl);
                }
            }
        }
    }
}
