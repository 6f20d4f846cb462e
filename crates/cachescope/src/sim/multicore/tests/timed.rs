//! The dealing in modelled time (`interleave::Timed` driving the model's clocks) against
//! plain rules on random threaded traces: every reference dealt once, each thread's in its
//! order; each core's clock equal to its instructions plus the latencies of its references'
//! outcomes (found by the brute-force machine replaying the order dealt, priced by the
//! latency table written out here) plus the time it sat idle; and no core starting a reference
//! a slice or more past another running core's clock.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use super::brute::{Machine, Where};
use crate::access::{Access, AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::interleave::tests::batches;
use crate::interleave::{Clocked, Interleaver};
use crate::sim::{Geometry, Latencies, LevelSpec, MultiCore, MultiCoreConfig};
use crate::trace::AccessReader;

/// What the dealing asked of the machine.
#[derive(Clone, Debug)]
enum Call {
    /// A step: its thread, core, the access, every core's clock before, whether it was
    /// ahead, whether it ran, and the core's clock after.
    Step {
        thread: ThreadId,
        core: u32,
        access: Access,
        clocks: Vec<u64>,
        ahead: bool,
        ran: bool,
        after: u64,
    },
    /// A core's clock moved on to a thread's start.
    Idle { core: u32, before: u64, after: u64 },
}

/// The model, every call logged.
struct Logged {
    m: MultiCore,
    cores: u32,
    log: Vec<Call>,
}

impl Clocked for Logged {
    fn core_of(&mut self, thread: ThreadId) -> u32 {
        self.m.core_of(thread)
    }

    fn clock(&self, core: u32) -> u64 {
        self.m.clock(core)
    }

    fn idle_until(&mut self, core: u32, time: u64) {
        let before = self.m.clock(core);
        self.m.idle_until(core, time);
        let after = self.m.clock(core);
        self.log.push(Call::Idle {
            core,
            before,
            after,
        });
    }

    fn step(&mut self, core: u32, thread: ThreadId, batch: &Batch, i: usize, ahead: bool) -> bool {
        let clocks = (0..self.cores).map(|c| self.m.clock(c)).collect();
        let ran = self.m.step(core, thread, batch, i, ahead);
        let after = self.m.clock(core);
        self.log.push(Call::Step {
            thread,
            core,
            access: batch.get(i),
            clocks,
            ahead,
            ran,
            after,
        });
        ran
    }
}

#[derive(Clone, Debug)]
struct Case {
    cores: u32,
    split: bool,
    l2_shared: Option<bool>,
    quantum: u64,
    memory: usize,
    trace: Vec<(ThreadId, Access)>,
}

fn case() -> impl Strategy<Value = Case> {
    let kinds = prop_oneof![
        3 => Just(AccessKind::Load),
        3 => Just(AccessKind::Store),
        1 => Just(AccessKind::Modify),
        3 => Just(AccessKind::Instr)
    ];
    let runs = prop::collection::vec(
        (1u32..5, prop::collection::vec((kinds, 0u64..24), 1..30)),
        1..30,
    );
    (
        1u32..6,
        any::<bool>(),
        prop_oneof![Just(None), Just(Some(false)), Just(Some(true))],
        1u64..400,
        0usize..40,
        runs,
    )
        .prop_map(|(cores, split, l2_shared, quantum, memory, runs)| {
            let trace = runs
                .into_iter()
                .flat_map(|(t, accesses)| {
                    accesses.into_iter().map(move |(kind, line)| {
                        let a = Access {
                            addr: line * 16,
                            size: 4,
                            kind,
                            pc: None,
                        };
                        (t, a)
                    })
                })
                .collect();
            Case {
                cores,
                split,
                l2_shared,
                quantum,
                memory,
                trace,
            }
        })
}

/// The machine of `c`: a private L1 of 4 lines (and an L1I when split), then an L2 of 16
/// lines, shared or not, when asked; 16-byte lines.
fn levels(c: &Case) -> (Option<Geometry>, Vec<(Geometry, bool)>) {
    let l1 = Geometry::parse("64,2,16").unwrap();
    let l2 = Geometry::parse("256,4,16").unwrap();
    let mut levels = vec![(l1, false)];
    levels.extend(c.l2_shared.map(|shared| (l2, shared)));
    (c.split.then_some(l1), levels)
}

/// The cycles of an access found at `place`, by the rules of docs/threads.md: an
/// instruction 1 (plus, with a split L1, what its fetch's miss costs), a data reference the
/// latency of where it was found, plus the invalidation when it took the line from other
/// cores without a transfer.
fn cycles(t: &Latencies, instr: bool, place: Where, took: bool) -> u64 {
    let found = match place {
        Where::NotSimulated => 0,
        Where::Level(0) if instr => 0,
        Where::Level(k) => t.levels[k],
        Where::Transfer => t.transfer,
        Where::Memory => t.memory,
    };
    let base = if instr { t.instruction } else { 0 };
    let invalidation = if took && place != Where::Transfer {
        t.invalidate
    } else {
        0
    };
    base + found + invalidation
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let (l1i, lv) = levels(c);
    let specs = lv
        .iter()
        .enumerate()
        .map(|(k, &(g, shared))| {
            let name = format!("L{}", k + 1);
            if shared {
                LevelSpec::shared(&name, g)
            } else {
                LevelSpec::private(&name, g)
            }
        })
        .collect();
    let mut config = MultiCoreConfig::new(c.cores, specs);
    config.l1i = l1i;
    let model = MultiCore::new(&config).unwrap();
    let latencies = model.finish().latencies;
    let machine = Arc::new(Mutex::new(Logged {
        m: model,
        cores: c.cores,
        log: Vec::new(),
    }));
    let mut split = Interleaver::with_memory(std::num::NonZeroU64::MIN, c.memory);
    batches(&c.trace, 5).iter().for_each(|b| split.observe(b));
    let q = std::num::NonZeroU64::new(c.quantum).unwrap();
    let mut timed = split.finish_timed(q, machine.clone()).unwrap();
    let mut dealt: Vec<(ThreadId, Access)> = Vec::new();
    let mut b = Batch::new();
    while timed.read_batch(&mut b).unwrap() > 0 {
        dealt.extend(b.iter_threaded());
    }
    drop(timed);
    let logged = Arc::try_unwrap(machine).ok().unwrap().into_inner().unwrap();

    // Every reference once, each thread's in its order.
    let mut threads: Vec<ThreadId> = c.trace.iter().map(|&(t, _)| t).collect();
    threads.sort_unstable();
    threads.dedup();
    for &t in &threads {
        let want: Vec<Access> = c.trace.iter().filter(|x| x.0 == t).map(|x| x.1).collect();
        let got: Vec<Access> = dealt.iter().filter(|x| x.0 == t).map(|x| x.1).collect();
        prop_assert_eq!(got, want, "thread {}", t);
    }

    // The steps that ran are the order dealt; replay it through the brute force.
    let ran: Vec<&Call> = logged
        .log
        .iter()
        .filter(|call| matches!(call, Call::Step { ran: true, .. }))
        .collect();
    prop_assert_eq!(ran.len(), dealt.len());
    // The threads on the cores the model put them on (by first appearance in the recording,
    // which the order dealt need not keep).
    let placement = logged.m.placement.threads().to_vec();
    let pins: Vec<(ThreadId, u32)> = placement.iter().map(|p| (p.thread, p.core)).collect();
    let mut brute = Machine::new(c.cores, l1i, &lv, &pins, None);
    let mut expected = vec![0u64; c.cores as usize];
    let mut waited = vec![0u64; c.cores as usize];
    // Each core's last reference in the order dealt.
    let core_of = |t: ThreadId| placement.iter().find(|p| p.thread == t).map(|p| p.core);
    let mut last_on = vec![None; c.cores as usize];
    for (i, &(t, _)) in dealt.iter().enumerate() {
        if let Some(core) = core_of(t) {
            last_on[core as usize] = Some(i);
        }
    }
    let mut done = 0usize;
    let mut started: Vec<Option<usize>> = vec![None; c.cores as usize];
    for call in &logged.log {
        match *call {
            Call::Idle {
                core,
                before,
                after,
            } => {
                prop_assert!(after >= before);
                expected[core as usize] += after - before;
            }
            Call::Step {
                thread,
                core,
                access,
                ref clocks,
                ahead,
                ran,
                after,
            } => {
                let k = core as usize;
                started[k].get_or_insert(done);
                let before = clocks[k];
                // `ahead` is true exactly when another running core's clock is behind.
                if c.cores as usize >= threads.len() {
                    for (d, &clock) in clocks.iter().enumerate() {
                        let running =
                            d != k && started[d].is_some() && last_on[d].is_some_and(|l| l >= done);
                        if running {
                            // No core starts a reference a slice past a running core.
                            prop_assert!(before < clock + c.quantum, "{} vs {}", before, clock);
                        }
                    }
                }
                if !ran {
                    // A reference that waits for another core does so only when it is not
                    // ahead, and its wait is that core's clock moving on.
                    prop_assert!(after >= before);
                    if after > before {
                        prop_assert!(!ahead);
                        waited[k] += after - before;
                        expected[k] += after - before;
                    }
                    continue;
                }
                prop_assert_eq!((thread, access), dealt[done]);
                let (place, took) = brute.access(thread, access.kind, access.addr / 16);
                let cost = cycles(&latencies, access.kind == AccessKind::Instr, place, took);
                // The access costs its outcome's latency; what it waited counts toward it.
                let paid = std::mem::take(&mut waited[k]);
                prop_assert_eq!(after - before, cost.saturating_sub(paid));
                expected[k] += cost.saturating_sub(paid);
                done += 1;
            }
        }
    }
    let clocks = logged.m.clocks();
    for (k, clock) in clocks.iter().enumerate() {
        prop_assert_eq!(clock.cycles, expected[k], "core {}", k);
        prop_assert_eq!(
            clock.cycles,
            clock.instructions * latencies.instruction + clock.stall_cycles + clock.idle_cycles
        );
    }
    // The dealt order through the model's own counts: the brute force's.
    let counts: Vec<_> = logged.m.finish().caches.iter().map(|x| x.counts).collect();
    prop_assert_eq!(counts, brute.counts());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn clocks_are_instructions_plus_latencies_and_no_core_runs_a_slice_ahead(c in case()) {
        check(&c)?;
    }
}

/// Two threads incrementing counters in one line (false sharing): the line changes hands at
/// the pace of the transfer latency, whatever the slice.
#[test]
fn false_sharing_costs_the_same_for_slices_of_10_to_1000_cycles() {
    // `for (...) (*counter)++` on a volatile counter, as examples/threads/false_sharing.c
    // compiles: five instructions, a load and a store of the counter.
    let mut trace = Vec::new();
    for _ in 0..20_000u64 {
        for (t, addr) in [(1, 0x1000u64), (2, 0x1008)] {
            let access = |addr: u64, kind| Access {
                addr,
                size: if kind == AccessKind::Instr { 4 } else { 8 },
                kind,
                pc: None,
            };
            trace.push((t, access(0x400, AccessKind::Instr)));
            trace.push((t, access(addr, AccessKind::Load)));
            trace.push((t, access(0x404, AccessKind::Instr)));
            trace.push((t, access(0x408, AccessKind::Instr)));
            trace.push((t, access(addr, AccessKind::Store)));
            trace.push((t, access(0x40c, AccessKind::Instr)));
            trace.push((t, access(0x410, AccessKind::Instr)));
        }
    }
    let coherence = |quantum: u64| {
        let l1 = LevelSpec::private("L1", Geometry::parse("32K,8,64").unwrap());
        let ll = LevelSpec::shared("LL", Geometry::parse("8M,16,64").unwrap());
        let model = MultiCore::new(&MultiCoreConfig::new(2, vec![l1, ll])).unwrap();
        let machine = Arc::new(Mutex::new(model));
        let mut split = Interleaver::new(std::num::NonZeroU64::MIN);
        batches(&trace, 4096).iter().for_each(|b| split.observe(b));
        let q = std::num::NonZeroU64::new(quantum).unwrap();
        let mut timed = split.finish_timed(q, machine.clone()).unwrap();
        let mut b = Batch::new();
        while timed.read_batch(&mut b).unwrap() > 0 {}
        let r = machine.lock().unwrap().finish();
        r.totals[0].counts.coherence
    };
    let counts: Vec<u64> = [10, 30, 100, 300, 1000].map(coherence).to_vec();
    let (lo, hi) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    assert!(hi <= 2 * lo, "{counts:?}");
    // At least 5 % of the 40,000 falsely shared writes move the line.
    assert!(lo >= 2_000, "{counts:?}");
}
