//! The call graph of a sampled stream (`attribute --callgraph --sampled`, docs/callgraph.md):
//! the call events come complete, each with its place in its thread's full stream
//! ([`CallPlace`]), so the stacks are exact; only the references of the sampled lines run
//! through the cache model, a miniature of each cache standing for the whole at the rate its
//! sets allow (as `attribute --sampled` measures: Waldspurger et al.'s miniature simulation).
//!
//! - `Ir`, `Dr` and `Dw` are the stream's own counts: between two call events of a thread,
//!   its references are all charged to the stack it had then, so self and inclusive counts
//!   per function and per call are exact (by source line they sit at the instruction before
//!   the call event that ends them).
//! - The misses of each sampled reference are charged to its stack when it is made, and
//!   scaled by the inverse of the rate at the end: estimates.
//! - A sampled stream has no instruction fetches: `I1mr` and `ILmr` are not measured (0).

use super::costs::{Costs, DR, DW, IR, N};
use super::graph::{Account, Graph};
use super::{CallGraphReport, Options};
use crate::batch::{Batch, CallPlace, NO_PC, Sampling, Step, ThreadSpan};
use crate::error::{Error, Result};
use crate::sim::Geometry;
use crate::spatial::Limit;

/// The caches a sampled stream runs through: miniatures of the call graph's caches (the
/// caller makes them, as `attribute --sampled` does: `crate::report::sampled::miniature`),
/// and the rate at which they stand for the caches.
#[derive(Clone, Copy, Debug)]
pub struct Miniatures {
    /// The share of lines the miniatures stand for: their sets over the caches' (at most the
    /// stream's rate). Only the stream's lines under this rate are measured.
    pub rate: f64,
    /// I1 (unused: a sampled stream has no fetches), D1, LL.
    pub caches: [Geometry; 3],
}

/// How a sampled stream is measured: the rate its misses stand for, and the lower limit its
/// lines are kept under so that the miniatures stand for the caches exactly.
#[derive(Clone, Copy, Debug)]
pub(super) struct SampledCosts {
    rate: f64,
    sub: Limit,
    shift: u32,
}

impl SampledCosts {
    /// The measure of `mini`, the stream sampled by lines of D1's size. D1 and LL need
    /// lines of one size (the stream's).
    pub(super) fn new(options: &Options, mini: &Miniatures) -> Result<SampledCosts> {
        let [_, d1, ll] = options.caches;
        if d1.line_size() != ll.line_size() {
            return Err(Error::InvalidParameter {
                name: "--sampled",
                message: format!(
                    "a sampled call graph needs D1 and LL lines of one size (D1 {d1}, LL {ll})"
                ),
            });
        }
        Ok(SampledCosts {
            rate: mini.rate,
            sub: Limit::from_rate(mini.rate)?,
            shift: d1.line_size().shift(),
        })
    }

    /// The rate the misses stand for.
    pub(super) fn rate(&self) -> f64 {
        self.rate
    }

    /// True when the sampled reference at `addr` is measured (its line under the lower
    /// limit).
    #[inline]
    pub(super) fn admits(&self, s: &Sampling, addr: u64) -> bool {
        self.sub.admits(s.hash().of(addr >> self.shift))
    }
}

/// Each thread's full-stream counts: what its call events said so far, and the spans' total.
#[derive(Debug, Default)]
pub(super) struct Counted {
    threads: Vec<(ThreadSpan, ThreadSpan)>,
}

impl Counted {
    fn entry(&mut self, thread: u32) -> &mut (ThreadSpan, ThreadSpan) {
        let i = match self.threads.iter().position(|(c, _)| c.thread == thread) {
            Some(i) => i,
            None => {
                let s = ThreadSpan {
                    thread,
                    ..ThreadSpan::default()
                };
                self.threads.push((s, s));
                self.threads.len() - 1
            }
        };
        &mut self.threads[i]
    }

    /// Adds a batch's spans.
    pub(super) fn spans(&mut self, s: &Sampling) {
        for span in &s.span {
            self.entry(span.thread).1.add(span);
        }
    }

    /// Charges `place.before`'s references since the last place of its thread to the
    /// thread's current stack, at `place.pc`'s line (a call event's place).
    pub(super) fn charge(&mut self, graph: &mut Graph, place: &CallPlace) {
        let t = place.before.thread;
        let charged = &mut self.entry(t).0;
        let spent = counts_since(&place.before, charged);
        *charged = place.before;
        let state = graph.thread(t);
        if place.pc != NO_PC {
            state.fetched(place.pc);
        }
        if spent.is_zero() {
            return;
        }
        state.cum.add(&spent);
        let pc = state.last_pc();
        state.line(pc).add(&spent);
    }

    /// Charges every thread's references after its last call event (at the end).
    pub(super) fn charge_rest(&mut self, graph: &mut Graph) {
        let rest: Vec<CallPlace> = self
            .threads
            .iter()
            .map(|(_, total)| CallPlace {
                before: *total,
                pc: NO_PC,
            })
            .collect();
        for p in &rest {
            self.charge(graph, p);
        }
    }
}

/// The `Ir`, `Dr`, `Dw` of `now` less `before` (a modify is a read, as the cache model
/// counts it).
fn counts_since(now: &ThreadSpan, before: &ThreadSpan) -> Costs {
    let mut c = Costs::default();
    c.0[IR] = now.instrs.saturating_sub(before.instrs);
    c.0[DR] = (now.loads + now.modifies).saturating_sub(before.loads + before.modifies);
    c.0[DW] = now.stores.saturating_sub(before.stores);
    c
}

/// A sampled reference's costs: its misses only (its count is in the places').
#[inline]
pub(super) fn misses_only(c: &mut Costs) {
    c.0[IR] = 0;
    c.0[DR] = 0;
    c.0[DW] = 0;
}

/// Scales every miss count of `graph` by `1 / rate` (the references counted stay).
pub(super) fn scale(graph: &mut Graph, rate: f64) {
    let f = 1.0 / rate;
    let one = |c: &mut Costs| {
        for (i, v) in c.0.iter_mut().enumerate() {
            if !matches!(i, IR | DR | DW) {
                *v = (*v as f64 * f).round() as u64;
            }
        }
    };
    for t in &mut graph.threads {
        let a: &mut Account = &mut t.account;
        a.line_costs.iter_mut().for_each(one);
        a.node_costs.iter_mut().for_each(one);
        a.arc_counts
            .iter_mut()
            .for_each(|arc| one(&mut arc.inclusive));
        for m in a.buckets.values_mut() {
            for v in m.iter_mut() {
                *v = (*v as f64 * f).round() as u64;
            }
        }
    }
    debug_assert_eq!(N, 12);
}

impl super::CallGraph {
    /// [`crate::analysis::Analysis::observe`] of a sampled batch: each call event's counts
    /// charged before it is applied, each measured reference's misses to its stack.
    pub(super) fn observe_sampled(&mut self, batch: &Batch, s: &Sampling) {
        let super::CallGraph {
            model,
            graph,
            stacks,
            places,
            position,
            next_event,
            sampled,
            ..
        } = self;
        let Some((measure, counted)) = sampled.as_mut() else {
            return;
        };
        let mut call = 0;
        for step in batch.steps() {
            let (range, thread) = match step {
                Step::Accesses(range, thread) => (range, thread),
                Step::Call(e) => {
                    if let Some(p) = s.calls.get(call) {
                        counted.charge(graph, p);
                    }
                    call += 1;
                    super::apply_call(stacks, graph, places, batch, e);
                    continue;
                }
            };
            let t = graph.thread_index(thread);
            let state = &mut graph.threads[t];
            for j in range {
                let addr = batch.addrs[j];
                if !measure.admits(s, addr) {
                    continue;
                }
                // The event log is due by full-stream positions.
                *position = s.data_before[j] + s.instrs_before[j];
                if let (Some(p), Some(due)) = (places.as_mut(), *next_event) {
                    if due <= *position {
                        *next_event = p.advance(*position);
                    }
                }
                let (kind, mut size) = (batch.kinds[j], batch.sizes[j]);
                // Only sampled lines enter the miniatures: a reference that runs into a line
                // left out is cut at its own line's end (else that line would take a
                // miniature's place, and its misses count as a sampled line's).
                let end = ((addr >> measure.shift) + 1) << measure.shift;
                if addr.saturating_add(u64::from(size)) > end && !measure.admits(s, end) {
                    size = (end - addr) as u32;
                }
                let mut c = Costs::default();
                model.access(thread, kind, addr, size, &mut c);
                misses_only(&mut c);
                let pc = match batch.pcs[j] {
                    NO_PC => state.last_pc(),
                    pc => pc,
                };
                super::charge(state, places, addr, pc, &c);
            }
        }
        counted.spans(s);
        if let Some(p) = places.as_mut() {
            p.buckets.batch_done(batch);
        }
    }

    /// The report of a sampled stream: the caches it stands for, the rate, a note.
    pub(super) fn sampled_report(&self, mut r: CallGraphReport) -> CallGraphReport {
        if let Some((m, _)) = &self.sampled {
            r.caches = self.options.caches.map(|g| g.to_string());
            r.sampled = Some(m.rate());
            if !r.call_events {
                r.notes.push(
                    "without call events a sampled stream's Ir, Dr and Dw are known in total \
                     only (the row `0x0`): nothing places the references left out by function"
                        .into(),
                );
            }
            r.notes.push(format!(
                "sampled at rate {}: Ir, Dr, Dw and calls are the stream's exact counts; the \
                 misses are estimates, those of the sampled lines in miniature caches scaled \
                 by {:.0}; I1mr and ILmr are not measured (a sampled stream has no fetches)",
                m.rate(),
                1.0 / m.rate()
            ));
        }
        r
    }
}
