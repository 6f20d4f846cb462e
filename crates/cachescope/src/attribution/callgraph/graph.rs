//! The accounting: what each thread's references cost, charged to its stack as the call
//! events unfold ([`Frames`], replayed by [`crate::calls::Stacks`]).
//!
//! Per reference, one add into the thread's running total and one into its (function,
//! instruction) line: the self costs. Inclusive costs never walk the stack:
//! - Each thread has a *context*: a node of a tree whose path from the root is the functions
//!   on its stack, each once, in the order of their outermost activations (a recursive call
//!   adds nothing). The running total is charged to the current node whenever the stack
//!   changes; a function's inclusive cost is then the sum over the nodes whose path holds it
//!   (`report.rs`), so recursion counts once, and so does anything else.
//! - A call arc (caller, callee, call site) counts every call; its inclusive cost adds, over
//!   the calls that were the callee's outermost activation, the running total at the return
//!   minus at the call: the sum over a callee's arcs is its inclusive cost, which is how
//!   `callgrind_annotate --inclusive=yes` reads a Callgrind file.
//! - A signal handler starts a new root (its costs are not its interrupted callers'), and
//!   its costs are kept out of the arcs it interrupted.
//!
//! A frame's meaning depends on its path only (`paths.rs`): a call event is one lookup of
//! the path it enters, costs are charged to the path, and the nodes' and arcs' costs are
//! summed from the paths at the end.
//! - A PLT stub is no function: its frame carries its caller's, and the call the stub jumps
//!   on to is its caller's, from the site of the call into the stub (Callgrind's
//!   `--skip-plt=yes`). The stub's own references are charged to that call site's line, as
//!   Callgrind charges them (the stub has no line of its own).

use super::costs::Costs;
use super::paths::{NO_FRAMES, Path, PathId, Paths};
use crate::access::ThreadId;
use crate::batch::{EnterKind, NO_PC};
use crate::calls::Frames;

/// A function: its key (the address entered), dense.
pub(super) type FnId = u32;
/// A context node.
pub(super) type NodeId = u32;

/// "No function": references before a thread's first frame, or of a trace without calls.
pub(super) const NO_FN: FnId = u32::MAX;
/// The tree's root: no function.
pub(super) const ROOT: NodeId = 0;

/// Keys of signal boundaries: the signal number with the top bit set (no code address has it).
pub(super) const SIGNAL_KEY: u64 = 1 << 63;

type Map<K, V> = hashbrown::HashMap<K, V, foldhash::fast::FixedState>;

/// One frame of a thread's stack: the path it made ([`Paths`]).
pub(super) type Frame = PathId;

/// A call arc's counts.
#[derive(Clone, Debug, Default)]
pub(super) struct ArcCounts {
    pub calls: u64,
    pub inclusive: Costs,
}

/// What one thread's references cost, by function line, context node and call arc.
#[derive(Debug, Default)]
pub(super) struct Account {
    /// (function, instruction address) → index in `line_costs`.
    pub lines: Map<(FnId, u64), usize>,
    pub line_costs: Vec<Costs>,
    /// By context node.
    pub node_costs: Vec<Costs>,
    /// (caller, callee, call site) → index in `arc_counts`.
    pub arcs: Map<(FnId, FnId, u64), usize>,
    pub arc_counts: Vec<ArcCounts>,
    /// (context node, bucket) → D1 misses, LL misses of data.
    pub buckets: Map<(NodeId, u32), [u64; 2]>,
}

/// A thread's state beside its stack.
#[derive(Debug)]
pub(super) struct ThreadState {
    pub thread: ThreadId,
    pub account: Account,
    /// The costs of its references since the last charge to its path.
    pub cum: Costs,
    paths: Paths,
    /// The path it is on, and that path's context node, function and PLT site.
    path: PathId,
    node: NodeId,
    top: FnId,
    last_pc: u64,
    /// While a PLT stub runs: the site of the call into it, whose line its costs go to.
    plt_site: Option<u64>,
    /// The last line charged and its index (an instruction and its data references share
    /// one).
    memo: ((FnId, u64), usize),
}

impl ThreadState {
    fn new(thread: ThreadId) -> ThreadState {
        ThreadState {
            thread,
            account: Account::default(),
            cum: Costs::default(),
            paths: Paths::default(),
            path: NO_FRAMES,
            node: ROOT,
            top: NO_FN,
            last_pc: NO_PC,
            plt_site: None,
            memo: ((NO_FN, u64::MAX), 0),
        }
    }

    /// Charges what the thread spent since the last charge to its current path.
    #[inline]
    fn charge(&mut self) {
        if self.cum.is_zero() {
            return;
        }
        self.paths.nodes[self.path as usize].costs.add(&self.cum);
        self.cum = Costs::default();
    }

    /// Moves the thread onto `path`.
    #[inline]
    fn on(&mut self, path: PathId) {
        let p = &self.paths.nodes[path as usize];
        self.path = path;
        self.node = p.node;
        self.top = p.f;
        self.plt_site = p.plt;
    }

    /// The costs of `pc`'s line in the top function.
    #[inline]
    pub(super) fn line(&mut self, pc: u64) -> &mut Costs {
        let key = (self.top, self.plt_site.unwrap_or(pc));
        let i = if self.memo.0 == key {
            self.memo.1
        } else {
            let next = self.account.line_costs.len();
            let i = *self.account.lines.entry(key).or_insert(next);
            if i == next {
                self.account.line_costs.push(Costs::default());
            }
            self.memo = (key, i);
            i
        };
        &mut self.account.line_costs[i]
    }

    /// The current context node, for bucket misses.
    pub(super) fn node(&self) -> NodeId {
        self.node
    }

    /// The address of the thread's last instruction fetch.
    #[inline]
    pub(super) fn last_pc(&self) -> u64 {
        self.last_pc
    }

    /// Records an instruction fetch's address: the site of a call that follows.
    #[inline]
    pub(super) fn fetched(&mut self, pc: u64) {
        self.last_pc = pc;
    }
}

/// Every thread's state, the function keys and the context tree.
#[derive(Debug, Default)]
pub(super) struct Graph {
    pub threads: Vec<ThreadState>,
    last: usize,
    /// Function keys by id, and ids by key.
    pub keys: Vec<u64>,
    ids: Map<u64, FnId>,
    /// Context nodes: (parent, function); node 0 is the root.
    pub nodes: Vec<(NodeId, FnId)>,
    children: Map<(NodeId, FnId), NodeId>,
}

impl Graph {
    pub(super) fn new() -> Graph {
        Graph {
            nodes: vec![(ROOT, NO_FN)],
            ..Graph::default()
        }
    }

    /// The index of `thread`'s state in `threads` (made on first use).
    #[inline]
    pub(super) fn thread_index(&mut self, thread: ThreadId) -> usize {
        self.thread(thread);
        self.last
    }

    /// `thread`'s state (made on first use).
    #[inline]
    pub(super) fn thread(&mut self, thread: ThreadId) -> &mut ThreadState {
        if self
            .threads
            .get(self.last)
            .is_none_or(|t| t.thread != thread)
        {
            self.last = match self.threads.iter().position(|t| t.thread == thread) {
                Some(i) => i,
                None => {
                    self.threads.push(ThreadState::new(thread));
                    self.threads.len() - 1
                }
            };
        }
        &mut self.threads[self.last]
    }

    fn function(&mut self, key: u64) -> FnId {
        let next = self.keys.len() as FnId;
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.keys.push(key);
        }
        id
    }

    fn child(&mut self, parent: NodeId, f: FnId) -> NodeId {
        let next = self.nodes.len() as NodeId;
        let id = *self.children.entry((parent, f)).or_insert(next);
        if id == next {
            self.nodes.push((parent, f));
        }
        id
    }

    /// The path thread `t` (an index) makes entering `key` by `kind` from `parent` at
    /// `site`, first entered now: its function, context node and arc.
    fn new_path(&mut self, t: usize, parent: PathId, key: u64, kind: EnterKind, site: u64) -> Path {
        let below = &self.threads[t].paths.nodes[parent as usize];
        let (caller, node_below) = (below.f, below.node);
        let mut path = Path::new(parent, caller, node_below);
        match kind {
            EnterKind::Plt => path.plt = Some(site),
            EnterKind::Signal => {
                path.f = self.function(SIGNAL_KEY | key);
                path.node = self.child(ROOT, path.f);
                path.signal = true;
            }
            _ => {
                let f = self.function(key);
                path.f = f;
                path.outer = !self.threads[t].paths.active(parent, f);
                if path.outer {
                    path.node = self.child(node_below, f);
                }
                if kind != EnterKind::Root {
                    let a = &mut self.threads[t].account;
                    let next = a.arc_counts.len();
                    let i = *a.arcs.entry((caller, f, site)).or_insert(next);
                    if i == next {
                        a.arc_counts.push(ArcCounts::default());
                    }
                    path.arc = i as u32;
                }
            }
        }
        path
    }

    /// Charges every thread's last costs and sums its paths into its account (once, at the
    /// end, after leaving every frame).
    pub(super) fn charge_all(&mut self) {
        for t in &mut self.threads {
            t.charge();
            t.paths.sum_into(&mut t.account);
        }
    }
}

impl Frames for Graph {
    type Frame = Frame;

    fn enter(
        &mut self,
        thread: ThreadId,
        key: u64,
        kind: EnterKind,
        below: Option<&Frame>,
    ) -> Frame {
        let t = self.thread_index(thread);
        let state = &mut self.threads[t];
        state.charge();
        let parent = below.copied().unwrap_or(NO_FRAMES);
        // The site a call arc is keyed by: a call out of a PLT stub is its caller's, from
        // the site of the call into the stub.
        let site = match kind {
            EnterKind::Root | EnterKind::Signal => 0,
            EnterKind::Plt => state.last_pc,
            _ => state.paths.nodes[parent as usize]
                .plt
                .unwrap_or(state.last_pc),
        };
        let path = match state.paths.child(parent, key, kind, site) {
            Some(p) => p,
            None => {
                let p = self.new_path(t, parent, key, kind, site);
                self.threads[t].paths.push(key, kind, site, p)
            }
        };
        let state = &mut self.threads[t];
        state.paths.nodes[path as usize].calls += 1;
        state.on(path);
        path
    }

    fn leave(&mut self, thread: ThreadId, frame: Frame, _below: Option<&Frame>) {
        let t = self.thread(thread);
        t.charge();
        let parent = t.paths.nodes[frame as usize].parent;
        t.on(parent);
    }
}
