//! The call graph against brute force: every reference's costs (from the same cache model,
//! which does not depend on stacks) added to each function on its thread's stack, once, by
//! replaying the events on plain vectors; calls counted per (caller, callee).

use std::collections::{BTreeMap, BTreeSet};

use super::costs::CostModel;
use super::*;
use crate::access::{Access, AccessKind, ThreadId};
use crate::batch::{CallOp, EnterKind};

/// A deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The function keys: code addresses whose names (no symbols) are `0x…`, one per key.
const KEYS: [u64; 6] = [
    0x40_1000, 0x40_2000, 0x40_3000, 0x40_4000, 0x40_5000, 0x40_6000,
];

fn name(key: u64) -> String {
    format!("0x{key:x}")
}

/// A random trace: two threads, calls (some recursive), jumps, returns of one or several
/// frames, signal boundaries, references over a few arrays.
fn random_trace(seed: u64, len: usize) -> Vec<Batch> {
    let mut r = Rng(seed | 1);
    let mut batches = Vec::new();
    let mut b = Batch::new();
    let mut depth: BTreeMap<ThreadId, u32> = BTreeMap::new();
    let mut thread = 1;
    for t in [1, 2] {
        b.set_thread(t);
        b.push_call(
            t,
            CallOp::Enter {
                key: 0x40_0000 + u64::from(t),
                kind: EnterKind::Root,
            },
        );
        depth.insert(t, 1);
    }
    b.set_thread(1);
    for i in 0..len {
        if r.below(50) == 0 {
            thread = 3 - thread;
            b.set_thread(thread);
        }
        let d = depth.get_mut(&thread).unwrap();
        match r.below(40) {
            0..=2 => {
                let kind = [
                    EnterKind::Call,
                    EnterKind::Call,
                    EnterKind::Jump,
                    EnterKind::Plt,
                ][r.below(4) as usize];
                let key = KEYS[r.below(KEYS.len() as u64) as usize];
                b.push_call(thread, CallOp::Enter { key, kind });
                *d += 1;
            }
            3 if *d > 1 => {
                let frames = 1 + r.below(u64::from((*d - 1).min(3))) as u32;
                b.push_call(thread, CallOp::Leave { frames });
                *d -= frames;
            }
            4 if r.below(10) == 0 => {
                b.push_call(
                    thread,
                    CallOp::Enter {
                        key: 10,
                        kind: EnterKind::Signal,
                    },
                );
                *d += 1;
            }
            _ => {}
        }
        let pc = 0x40_0000 + 4 * r.below(4096);
        b.push(Access {
            addr: pc,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(pc),
        });
        if r.below(2) == 0 {
            let kind =
                [AccessKind::Load, AccessKind::Store, AccessKind::Modify][r.below(3) as usize];
            let addr = 0x10_0000 + 8 * r.below(1 << 14);
            b.push(Access {
                addr,
                size: 8,
                kind,
                pc: Some(pc),
            });
        }
        if b.len() > 500 && i % 7 == 0 {
            batches.push(std::mem::take(&mut b));
            b.set_thread(thread);
        }
    }
    batches.push(b);
    batches
}

fn options() -> Options {
    let g = |s: &str| crate::sim::Geometry::parse(s).unwrap();
    Options {
        caches: [g("1K,2,32"), g("2K,2,32"), g("16K,4,32")],
        ..Options::default()
    }
}

/// Brute force: (self by function, inclusive by function, calls by (caller, callee)).
type Expected = (
    BTreeMap<String, Costs>,
    BTreeMap<String, Costs>,
    BTreeMap<(String, String), u64>,
);

fn brute_force(batches: &[Batch]) -> Expected {
    let [i1, d1, ll] = options().caches;
    let mut model = CostModel::new(i1, d1, ll).unwrap();
    let mut stacks: BTreeMap<ThreadId, Vec<(u64, EnterKind)>> = BTreeMap::new();
    let (mut own, mut incl, mut calls) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let fname = |k: u64, kind: EnterKind| {
        if kind == EnterKind::Signal {
            format!("<signal {k}>")
        } else {
            name(k)
        }
    };
    for b in batches {
        for step in b.steps() {
            match step {
                crate::batch::Step::Call(e) => {
                    let s = stacks.entry(e.thread).or_default();
                    match e.op {
                        CallOp::Enter { key, kind } => {
                            if matches!(kind, EnterKind::Call | EnterKind::Jump) {
                                // A PLT stub's call is its caller's.
                                let &(k, kk) =
                                    s.iter().rev().find(|f| f.1 != EnterKind::Plt).unwrap();
                                *calls.entry((fname(k, kk), name(key))).or_insert(0) += 1;
                            }
                            s.push((key, kind));
                        }
                        CallOp::Leave { frames } => {
                            s.truncate(s.len().saturating_sub(frames as usize))
                        }
                        CallOp::Reset => stacks.clear(),
                    }
                }
                crate::batch::Step::Accesses(range, t) => {
                    for j in range {
                        let mut c = Costs::default();
                        model.access(t, b.kinds[j], b.addrs[j], b.sizes[j], &mut c);
                        let s = stacks.entry(t).or_default();
                        let &(k, kk) = s.iter().rev().find(|f| f.1 != EnterKind::Plt).unwrap();
                        own.entry(fname(k, kk))
                            .or_insert_with(Costs::default)
                            .add(&c);
                        // The functions on the stack from the innermost signal boundary up
                        // (a handler's costs are not its interrupted callers'), each once.
                        let from = s
                            .iter()
                            .rposition(|f| f.1 == EnterKind::Signal)
                            .unwrap_or(0);
                        let on: BTreeSet<String> = s[from..]
                            .iter()
                            .filter(|f| f.1 != EnterKind::Plt)
                            .map(|&(k, kk)| fname(k, kk))
                            .collect();
                        for f in on {
                            incl.entry(f).or_insert_with(Costs::default).add(&c);
                        }
                    }
                }
            }
        }
    }
    (own, incl, calls)
}

#[test]
fn self_inclusive_and_calls_match_brute_force() {
    for seed in [1, 2, 3, 7, 42] {
        let batches = random_trace(seed, 20_000);
        let (own, incl, calls) = brute_force(&batches);
        let mut g = CallGraph::new(options(), None).unwrap();
        for b in &batches {
            g.observe(b);
        }
        let r = g.finish().unwrap();
        assert!(r.call_events && r.threaded);
        let got_self: BTreeMap<String, Costs> = r
            .functions
            .iter()
            .filter(|f| !f.self_cost.is_zero())
            .map(|f| (f.function.clone(), f.self_cost))
            .collect();
        assert_eq!(got_self, own, "seed {seed}: self");
        let got_incl: BTreeMap<String, Costs> = r
            .functions
            .iter()
            .filter_map(|f| Some((f.function.clone(), f.inclusive?)))
            .filter(|(_, c)| !c.is_zero())
            .collect();
        assert_eq!(got_incl, incl, "seed {seed}: inclusive");
        let mut got_calls: BTreeMap<(String, String), u64> = BTreeMap::new();
        for c in &r.calls {
            *got_calls
                .entry((c.caller.clone(), c.callee.clone()))
                .or_default() += c.calls;
        }
        assert_eq!(got_calls, calls, "seed {seed}: calls");
        // A function entered only by calls: its calls' inclusive costs add up to its own.
        for key in KEYS {
            let f = r
                .functions
                .iter()
                .find(|f| f.function == name(key))
                .unwrap();
            let mut sum = Costs::default();
            for c in r.calls.iter().filter(|c| c.callee == f.function) {
                sum.add(&c.inclusive);
            }
            assert_eq!(
                Some(sum),
                f.inclusive,
                "seed {seed}: calls into {}",
                f.function
            );
        }
        let mut total = Costs::default();
        r.functions.iter().for_each(|f| total.add(&f.self_cost));
        assert_eq!(total, r.totals);
    }
}

#[test]
fn per_thread_graphs_add_up_to_the_whole() {
    let batches = random_trace(5, 10_000);
    let mut g = CallGraph::new(
        Options {
            per_thread: true,
            ..options()
        },
        None,
    )
    .unwrap();
    for b in &batches {
        g.observe(b);
    }
    let r = g.finish().unwrap();
    assert_eq!(r.threads.len(), 2);
    let mut total = Costs::default();
    for t in &r.threads {
        total.add(&t.totals);
    }
    assert_eq!(total, r.totals);
    for f in &r.functions {
        let mut incl = Costs::default();
        for t in &r.threads {
            if let Some(tf) = t.functions.iter().find(|x| x.function == f.function) {
                incl.add(&tf.inclusive.unwrap());
            }
        }
        assert_eq!(Some(incl), f.inclusive, "{}", f.function);
    }
}

#[test]
fn without_call_events_self_costs_go_by_instruction() {
    let mut b = Batch::new();
    for i in 0..100u64 {
        let pc = if i % 2 == 0 { 0x40_1000 } else { 0x40_2000 };
        b.push(Access {
            addr: pc,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(pc),
        });
        b.push(Access {
            addr: 0x9000 + 64 * i,
            size: 8,
            kind: AccessKind::Load,
            pc: Some(pc),
        });
    }
    let mut g = CallGraph::new(options(), None).unwrap();
    g.observe(&b);
    let r = g.finish().unwrap();
    assert!(!r.call_events && r.calls.is_empty());
    assert!(r.notes[0].contains("no call events"));
    assert_eq!(r.functions.len(), 2);
    for f in &r.functions {
        assert_eq!(f.inclusive, None);
        assert_eq!(
            (f.self_cost.0[costs::IR], f.self_cost.0[costs::DR]),
            (50, 50)
        );
    }
    let text = render(&r, "prog", None);
    assert!(text.contains("desc: No call events"));
    assert!(!text.contains("calls="));
}

#[test]
fn the_callgrind_file_has_the_calls_and_totals() {
    let batches = random_trace(9, 5_000);
    let mut g = CallGraph::new(options(), None).unwrap();
    for b in &batches {
        g.observe(b);
    }
    let r = g.finish().unwrap();
    let text = render(&r, "prog a b", None);
    assert!(text.starts_with("# callgrind format\nversion: 1\n"));
    assert!(text.contains("\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw D1ev D1wb D1mc\n"));
    let calls: u64 = text
        .lines()
        .filter_map(|l| l.strip_prefix("calls="))
        .map(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(calls, r.calls.iter().map(|c| c.calls).sum::<u64>());
    let summary = text.lines().find(|l| l.starts_with("summary:")).unwrap();
    let values: Vec<u64> = summary[8..]
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(values, r.totals.0);
}

#[test]
fn a_plt_stubs_costs_go_to_the_line_of_the_call_into_it() {
    // main calls through a stub at 0x40_1030, which jumps into puts (0x7f00_0000).
    let (call_site, stub, puts) = (0x40_1010u64, 0x40_1030u64, 0x7f00_0000u64);
    let fetch = |b: &mut Batch, pc: u64| {
        b.push(Access {
            addr: pc,
            size: 4,
            kind: AccessKind::Instr,
            pc: Some(pc),
        })
    };
    let enter = |b: &mut Batch, key: u64, kind: EnterKind| {
        b.push_call(1, CallOp::Enter { key, kind });
    };
    let mut b = Batch::new();
    enter(&mut b, 0x40_1000, EnterKind::Root);
    fetch(&mut b, call_site);
    enter(&mut b, stub, EnterKind::Plt);
    fetch(&mut b, stub);
    enter(&mut b, puts, EnterKind::Jump);
    fetch(&mut b, puts);
    fetch(&mut b, puts + 4);
    // puts returns past the stub's frame to main.
    b.push_call(1, CallOp::Leave { frames: 2 });
    fetch(&mut b, call_site + 5);
    let mut g = CallGraph::new(options(), None).unwrap();
    g.observe(&b);
    let t = &g.graph.threads[0];
    let ir = |f: u64, pc: u64| {
        let id = g.graph.keys.iter().position(|&k| k == f).unwrap() as graph::FnId;
        t.account
            .lines
            .get(&(id, pc))
            .map(|&i| t.account.line_costs[i].0[costs::IR])
    };
    // The stub's fetch is main's, at the call's line; puts' are its own; main's next its own.
    assert_eq!(ir(0x40_1000, call_site), Some(2));
    assert_eq!(ir(0x40_1000, stub), None);
    assert_eq!(ir(puts, puts), Some(1));
    assert_eq!(ir(0x40_1000, call_site + 5), Some(1));
}

/// The random threaded trace (signals, PLT stubs, tail calls) read as a sampled stream: the
/// call graph's references and calls are the full stream's at any rate, per function, self
/// and inclusive; at rate 1 its data misses, evictions, write-backs and coherence misses are
/// too (the LL differs: code shares it in the full stream).
#[test]
fn a_sampled_stream_keeps_references_and_calls_exact() {
    use crate::spatial::SpatialOptions;
    use crate::trace::{AccessReader, Trace};

    struct Batches(std::vec::IntoIter<Batch>);
    impl AccessReader for Batches {
        fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
            *batch = self.0.next().unwrap_or_default();
            Ok(batch.len())
        }
    }
    /// Function → (calls, self, inclusive), each cut to `events`.
    type Rows = BTreeMap<String, (u64, Vec<u64>, Vec<u64>)>;
    let rows = |r: &CallGraphReport, events: &[&str]| -> Rows {
        let cut = |c: &Costs| {
            events
                .iter()
                .map(|e| c.get(e).unwrap())
                .collect::<Vec<u64>>()
        };
        r.functions
            .iter()
            .map(|f| {
                let incl = f.inclusive.unwrap();
                (f.function.clone(), (f.calls, cut(&f.self_cost), cut(&incl)))
            })
            .filter(|(_, (calls, own, incl))| {
                *calls > 0 || own.iter().chain(incl.iter()).any(|&v| v > 0)
            })
            .collect()
    };
    let batches = random_trace(11, 20_000);
    let mut exact = CallGraph::new(options(), None).unwrap();
    for b in &batches {
        exact.observe(b);
    }
    let exact = exact.finish().unwrap();
    let counts = ["Ir", "Dr", "Dw"];
    assert!(rows(&exact, &counts).len() >= KEYS.len() && exact.threaded);
    let data = ["Ir", "Dr", "Dw", "D1mr", "D1mw", "D1ev", "D1wb", "D1mc"];
    for rate in [1.0, 0.3] {
        let mut trace = Trace::from_reader(
            Box::new(Batches(batches.clone().into_iter())),
            crate::error::Source::Workload("test".into()),
        );
        let spatial = SpatialOptions {
            rate,
            seed: 3,
            max_lines: None,
            line_size: options().caches[1].line_size(),
        };
        trace.sampled(spatial, None).unwrap();
        // At rate 0.3 the caches as they are (no miniatures): only the counts are compared.
        let opts = Options {
            sampled: Some(Miniatures {
                rate,
                caches: options().caches,
            }),
            ..options()
        };
        let mut g = CallGraph::new(opts, None).unwrap();
        let mut b = Batch::new();
        while trace.read_batch(&mut b).unwrap() > 0 {
            g.observe(&b);
        }
        let r = g.finish().unwrap();
        assert_eq!(r.sampled, Some(rate));
        assert_eq!(rows(&r, &counts), rows(&exact, &counts), "rate {rate}");
        let calls = |r: &CallGraphReport| -> BTreeMap<(String, String), (u64, u64)> {
            r.calls
                .iter()
                .map(|c| {
                    let k = (c.caller.clone(), c.callee.clone());
                    (k, (c.calls, c.inclusive.get("Ir").unwrap()))
                })
                .fold(BTreeMap::new(), |mut m, (k, (n, ir))| {
                    let e: &mut (u64, u64) = m.entry(k).or_default();
                    e.0 += n;
                    e.1 += ir;
                    m
                })
        };
        assert_eq!(calls(&r), calls(&exact), "rate {rate}");
        if rate == 1.0 {
            assert_eq!(rows(&r, &data), rows(&exact, &data));
        }
    }
}
