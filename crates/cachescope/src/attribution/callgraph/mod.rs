//! The call graph: each function's misses, its own and inclusive of everything it calls, and
//! the calls between functions, as Callgrind counts them (`attribute --callgraph`,
//! `--callgrind-out`; definitions in docs/callgraph.md).
//!
//! A recording with call events ([`crate::batch::CallEvent`]) gives each thread's stack at
//! every reference ([`crate::calls::Stacks`]). Every reference runs through Cachegrind's cache
//! model (I1, D1, LL: `costs.rs`, with D1 evictions, write-backs and coherence misses), and
//! its costs are charged:
//! - **self** to the function on top of its thread's stack, by instruction (so by source
//!   line): the function Callgrind charges, the one the thread last entered;
//! - **inclusive** to every function on the stack, once however often it recurs: the costs of
//!   all references made while the function is active (`graph.rs`, without a walk of the stack
//!   per reference);
//! - a **call** (caller, callee, site) counts every call, recursive ones too, with the
//!   inclusive cost of the calls that were not recursive, so a function's calls add up to its
//!   inclusive cost;
//! - with an event log, every D1 and LL miss is also counted against its **structure**
//!   (variable, heap allocation site, stack) for each function on the stack: the structures
//!   a function's subtree misses on.
//!
//! A trace without call events (lackey, other formats, `record --no-calls`) gives self costs
//! by the function holding each instruction, and says that inclusive costs need call events.
//!
//! | file | concern |
//! | --- | --- |
//! | `costs.rs` | the events and the cache model each reference runs through |
//! | `coherence.rs` | private D1s per thread, for coherence misses |
//! | `graph.rs` | the accounting beside each thread's stack |
//! | `paths.rs` | each thread's call paths, costs charged to them and summed at the end |
//! | `places.rs` | the event log, by position, for the structures |
//! | `report.rs` | the report's types, and its making from every thread's account |
//! | `names.rs` | function keys named and merged, instructions placed on source lines |
//! | `rows.rs` | an account's functions (inclusive costs summed), calls, contexts |
//! | `callgrind_out.rs` | the report as a `callgrind.out` file |

mod callgrind_out;
mod coherence;
mod costs;
mod graph;
mod names;
mod paths;
mod places;
mod report;
mod rows;
mod sampled;
#[cfg(test)]
mod tests;

pub use callgrind_out::render;
pub use costs::{Costs, EVENT_NAMES, EVENTS};
pub use places::Places;
pub use report::{
    CONTEXT_SHARE, CallGraphReport, CallRow, ContextRow, FunctionRow, StructureRow, ThreadGraph,
};
pub use sampled::Miniatures;

use costs::{CostModel, D1MR, D1MW, DLMR, DLMW};
use graph::{Frame, Graph};

use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::attribution::buckets::BucketMap;
use crate::attribution::measure::EventSource;
use crate::batch::{Batch, NO_PC, Step};
use crate::calls::Stacks;
use crate::error::Result;
use crate::sim::Geometry;

/// What to simulate and keep.
#[derive(Clone, Debug)]
pub struct Options {
    /// I1, D1 and LL, as Cachegrind's `--I1`, `--D1`, `--LL` (an LL of another set count is
    /// reshaped as Cachegrind reshapes it). Default: 32 KiB 8-way, 32 KiB 8-way, 8 MiB 16-way,
    /// 64-byte lines.
    pub caches: [Geometry; 3],
    /// Keep each thread's graph too ([`CallGraphReport::threads`]; Callgrind's
    /// `--separate-threads`). Default: off.
    pub per_thread: bool,
    /// The program, for a trace without an event log: its functions named at their link
    /// addresses (a non-PIE executable).
    pub exe: Option<std::path::PathBuf>,
    /// Do nothing for a trace without call events (a recording with them has one before its
    /// first reference): for a pass that runs it beside others, whatever the trace. Default:
    /// off.
    pub only_with_calls: bool,
    /// A sampled stream (`--sampled`): the miniature caches its sampled lines run through;
    /// its misses are scaled to the caches above. Default: none (a full stream).
    pub sampled: Option<Miniatures>,
}

impl Default for Options {
    fn default() -> Self {
        let g = |s: &str| Geometry::parse(s).expect("valid");
        Options {
            caches: [g("32K,8,64"), g("32K,8,64"), g("8M,16,64")],
            per_thread: false,
            exe: None,
            only_with_calls: false,
            sampled: None,
        }
    }
}

/// Whether `batch`, a trace's first with an access, says the trace has call events: a
/// recording with call events enters its first thread's root before any reference.
pub fn starts_with_calls(batch: &Batch) -> bool {
    batch.calls().first().is_some_and(|e| e.at == 0)
}

/// Whether a trace has call events ([`starts_with_calls`]), and nothing more: for a report
/// that leaves its call-graph section out unless asked and says how to get it, without the
/// cost of a graph.
#[derive(Debug, Default)]
pub struct CallsSeen {
    /// The answer, once a batch with an access came.
    seen: Option<bool>,
}

impl CallsSeen {
    /// True when the trace had call events (or nothing yet came), as
    /// [`CallGraph::has_calls`] with [`Options::only_with_calls`].
    pub fn has_calls(&self) -> bool {
        self.seen.unwrap_or(true)
    }
}

impl Analysis for CallsSeen {
    fn observe(&mut self, batch: &Batch) {
        if self.seen.is_none() && !batch.is_empty() {
            self.seen = Some(starts_with_calls(batch));
        }
    }
}

/// The call graph over one trace, as an [`Analysis`]; [`CallGraph::finish`] gives the report.
pub struct CallGraph {
    options: Options,
    model: CostModel,
    graph: Graph,
    stacks: Stacks<Frame>,
    places: Option<Places>,
    /// Records seen (every kind, every thread): the event log's positions.
    position: u64,
    next_event: Option<u64>,
    /// Off for the rest of the trace ([`Options::only_with_calls`] and none came first).
    idle: bool,
    /// The first batch was seen (whether the trace has call events is known).
    seen: bool,
    /// A sampled stream's measure and each thread's counts ([`Options::sampled`]).
    sampled: Option<(sampled::SampledCosts, sampled::Counted)>,
}

impl CallGraph {
    /// A call graph; `events` (an event log) names the structures misses fall on, and the
    /// functions of position-independent code.
    pub fn new(options: Options, events: Option<EventSource<'static>>) -> Result<CallGraph> {
        let sampled = match &options.sampled {
            Some(m) => Some((sampled::SampledCosts::new(&options, m)?, Default::default())),
            None => None,
        };
        let [i1, d1, ll] = options.sampled.map_or(options.caches, |m| m.caches);
        let mut places = events.map(|e| Places::new(e, BucketMap::new(options.exe.as_deref())));
        let next_event = places.as_mut().and_then(|p| p.advance(0));
        Ok(CallGraph {
            model: CostModel::new(i1, d1, ll)?,
            graph: Graph::new(),
            stacks: Stacks::default(),
            places,
            position: 0,
            next_event,
            options,
            idle: false,
            seen: false,
            sampled,
        })
    }

    /// True when the trace had call events (or nothing yet came).
    pub fn has_calls(&self) -> bool {
        !self.idle
    }

    /// The report, its functions named from `names` (another analysis's map of the same
    /// trace: the attribution's, in the report) rather than from an event log of its own.
    /// `None` when [`Options::only_with_calls`] kept it idle.
    pub fn finish_named(mut self, names: &BucketMap) -> Result<Option<CallGraphReport>> {
        if self.idle {
            return Ok(None);
        }
        self.close();
        let r = report::build(
            &self.graph,
            names,
            false,
            self.stacks.events() > 0,
            &self.model,
            self.options.per_thread,
        );
        Ok(Some(self.sampled_report(r)))
    }

    /// The report: every frame still on a stack is left, functions are named (from the
    /// event log's memory map, or `exe`), inclusive costs summed.
    pub fn finish(mut self) -> Result<CallGraphReport> {
        self.close();
        let buckets = match self.places.take() {
            Some(p) => Some(p.finish()?),
            None => None,
        };
        let named = buckets.is_some();
        let buckets = buckets.unwrap_or_else(|| BucketMap::new(self.options.exe.as_deref()));
        let r = report::build(
            &self.graph,
            &buckets,
            named,
            self.stacks.events() > 0,
            &self.model,
            self.options.per_thread,
        );
        Ok(self.sampled_report(r))
    }

    /// Every frame still on a stack left, every cost charged (a sampled stream's misses
    /// scaled).
    fn close(&mut self) {
        if let Some((_, counted)) = &mut self.sampled {
            counted.charge_rest(&mut self.graph);
        }
        self.stacks.leave_all(&mut self.graph);
        self.graph.charge_all();
        if let Some((m, _)) = &self.sampled {
            sampled::scale(&mut self.graph, m.rate());
        }
    }
}

impl Analysis for CallGraph {
    fn observe(&mut self, batch: &Batch) {
        if self.idle {
            return;
        }
        if self.options.only_with_calls && !self.seen && !batch.is_empty() {
            // A recording with call events enters its first thread's root before any
            // reference.
            self.seen = true;
            self.idle = !starts_with_calls(batch);
            if self.idle {
                return;
            }
        }
        // Events that came since (a running program's, sent as its stream is read).
        if let (Some(p), None) = (self.places.as_mut(), self.next_event) {
            self.next_event = p.advance(self.position);
        }
        if let (Some(s), Some(_)) = (batch.sampling(), &self.sampled) {
            self.observe_sampled(batch, s);
            return;
        }
        let CallGraph {
            model,
            graph,
            stacks,
            places,
            position,
            next_event,
            ..
        } = self;
        for step in batch.steps() {
            let (range, thread) = match step {
                Step::Accesses(range, thread) => (range, thread),
                Step::Call(e) => {
                    apply_call(stacks, graph, places, batch, e);
                    continue;
                }
            };
            let t = graph.thread_index(thread);
            let state = &mut graph.threads[t];
            for j in range {
                if let (Some(p), Some(due)) = (places.as_mut(), *next_event) {
                    if due <= *position {
                        *next_event = p.advance(*position);
                    }
                }
                *position += 1;
                let (kind, addr, size) = (batch.kinds[j], batch.addrs[j], batch.sizes[j]);
                let mut c = Costs::default();
                model.access(thread, kind, addr, size, &mut c);
                let pc = if kind == AccessKind::Instr {
                    state.fetched(addr);
                    addr
                } else if batch.pcs[j] != NO_PC {
                    batch.pcs[j]
                } else {
                    state.last_pc()
                };
                charge(state, places, addr, pc, &c);
            }
        }
        if let Some(p) = places.as_mut() {
            p.buckets.batch_done(batch);
        }
    }
}

/// Applies call event `e` of `batch` to the stacks, and to the event log's map: the same
/// event places and takes away the frames' locals (`function:local`), as the attribution's
/// map does.
fn apply_call(
    stacks: &mut Stacks<Frame>,
    graph: &mut Graph,
    places: &mut Option<Places>,
    batch: &Batch,
    e: &crate::batch::CallEvent,
) {
    stacks.apply(e, graph);
    if let Some(p) = places.as_mut() {
        p.buckets.apply_call(batch, e);
    }
}

/// Charges a reference's costs `c` to its thread's stack (`state`) and `pc`'s line, and its
/// data misses to the structure at `addr` (with an event log).
#[inline]
fn charge(
    state: &mut graph::ThreadState,
    places: &mut Option<Places>,
    addr: u64,
    pc: u64,
    c: &Costs,
) {
    state.cum.add(c);
    state.line(pc).add(c);
    let misses = [c.0[D1MR] + c.0[D1MW], c.0[DLMR] + c.0[DLMW]];
    if let (Some(p), true) = (places.as_mut(), misses[0] > 0) {
        let b = p.bucket(addr);
        let e = state.account.buckets.entry((state.node(), b)).or_default();
        e[0] += misses[0];
        e[1] += misses[1];
    }
}
