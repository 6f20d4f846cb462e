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
//! - A PLT stub is no function: its frame carries its caller's, and the call the stub jumps
//!   on to is its caller's, from the site of the call into the stub (Callgrind's
//!   `--skip-plt=yes`). The stub's own references are charged to that call site's line, as
//!   Callgrind charges them (the stub has no line of its own).

use super::costs::Costs;
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

/// One frame of a thread's stack.
#[derive(Debug)]
pub(super) struct Frame {
    f: FnId,
    /// The context below this frame, restored when it is left.
    node_below: NodeId,
    /// The arc it was entered by, and (for the callee's outermost activation) the running
    /// total and the signal costs then.
    arc: Option<(usize, Option<(Costs, Costs)>)>,
    /// A signal boundary: the running total and the signal costs when it began.
    signal: Option<(Costs, Costs)>,
    /// A PLT stub (not a function: `f` is its caller's): the site of the call into it, which
    /// its jump into the library is charged to.
    plt: Option<u64>,
}

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
    /// Running total of its references' costs; what of it was charged to a node.
    pub cum: Costs,
    charged: Costs,
    /// Costs spent in signal handlers.
    signals: Costs,
    node: NodeId,
    top: FnId,
    /// Frames of each function on its stack (since the innermost signal boundary); the
    /// counts outside that boundary wait in `saved`.
    active: Map<FnId, u32>,
    saved: Vec<Map<FnId, u32>>,
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
            charged: Costs::default(),
            signals: Costs::default(),
            node: ROOT,
            top: NO_FN,
            active: Map::default(),
            saved: Vec::new(),
            last_pc: NO_PC,
            plt_site: None,
            memo: ((NO_FN, u64::MAX), 0),
        }
    }

    /// Charges what the thread spent since the last charge to its current node.
    fn charge(&mut self) {
        let spent = self.cum.since(&self.charged);
        if spent.is_zero() {
            return;
        }
        let n = self.node as usize;
        let costs = &mut self.account.node_costs;
        if costs.len() <= n {
            costs.resize(n + 1, Costs::default());
        }
        costs[n].add(&spent);
        self.charged = self.cum;
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

    /// Charges every thread's last costs (at the end, after leaving every frame).
    pub(super) fn charge_all(&mut self) {
        for t in &mut self.threads {
            t.charge();
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
        let caller = below.map_or(NO_FN, |b| b.f);
        let t = self.thread(thread);
        t.charge();
        let node_below = t.node;
        t.plt_site = (kind == EnterKind::Plt).then_some(t.last_pc);
        if kind == EnterKind::Plt {
            return Frame {
                f: caller,
                node_below,
                arc: None,
                signal: None,
                plt: Some(t.last_pc),
            };
        }
        let site = below.and_then(|b| b.plt).unwrap_or(t.last_pc);
        let t_index = self.last;
        let signal = kind == EnterKind::Signal;
        let f = self.function(if signal { SIGNAL_KEY | key } else { key });
        if signal {
            let t = &mut self.threads[t_index];
            let active = std::mem::take(&mut t.active);
            t.saved.push(active);
            t.active.insert(f, 1);
            t.top = f;
            let began = (t.cum, t.signals);
            let node = self.child(ROOT, f);
            self.threads[t_index].node = node;
            return Frame {
                f,
                node_below,
                arc: None,
                signal: Some(began),
                plt: None,
            };
        }
        let outer = {
            let t = &mut self.threads[t_index];
            let n = t.active.entry(f).or_insert(0);
            *n += 1;
            *n == 1
        };
        let node = if outer {
            self.child(node_below, f)
        } else {
            node_below
        };
        let t = &mut self.threads[t_index];
        t.node = node;
        t.top = f;
        let arc = if kind == EnterKind::Root {
            None
        } else {
            let next = t.account.arc_counts.len();
            let i = *t.account.arcs.entry((caller, f, site)).or_insert(next);
            if i == next {
                t.account.arc_counts.push(ArcCounts::default());
            }
            t.account.arc_counts[i].calls += 1;
            Some((i, outer.then_some((t.cum, t.signals))))
        };
        Frame {
            f,
            node_below,
            arc,
            signal: None,
            plt: None,
        }
    }

    fn leave(&mut self, thread: ThreadId, frame: Frame, below: Option<&Frame>) {
        let t = self.thread(thread);
        t.charge();
        t.node = frame.node_below;
        t.top = below.map_or(NO_FN, |b| b.f);
        t.plt_site = below.and_then(|b| b.plt);
        if frame.plt.is_some() {
            return;
        }
        if let Some((cum, signals)) = frame.signal {
            // What this handler spent, less its nested handlers' (already counted).
            let spent = t.cum.since(&cum).since(&t.signals.since(&signals));
            t.signals.add(&spent);
            t.active = t.saved.pop().unwrap_or_default();
            return;
        }
        if let Some(n) = t.active.get_mut(&frame.f) {
            *n -= 1;
            if *n == 0 {
                t.active.remove(&frame.f);
            }
        }
        if let Some((i, Some((cum, signals)))) = frame.arc {
            let mut spent = t.cum.since(&cum);
            let in_handlers = t.signals.since(&signals);
            for (s, h) in spent.0.iter_mut().zip(in_handlers.0) {
                *s -= h;
            }
            t.account.arc_counts[i].inclusive.add(&spent);
        }
    }
}
