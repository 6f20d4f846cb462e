//! The attribution against brute force: a naive LRU cache (a list per set) and a naive bucket
//! lookup (a scan of the live blocks), on random traces with allocations, frees and address
//! reuse; the per-bucket curves against naive fully-associative caches.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::events::{Event, EventKind};
use super::*;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::sim::{Cache, Geometry, Policy};
use crate::{Access, AccessKind};

const HEAP: u64 = 0x10_000;
const STACK_ADDR: u64 = 0x1f_ff00_0000;
const OTHER_ADDR: u64 = 0x900_000;

/// One step of a generated program.
#[derive(Clone, Debug)]
enum Step {
    Ref(u64, bool),
    Alloc(u64, u64, u64),
    Free(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0u64..3, 0u64..2048, any::<bool>()).prop_map(|(r, off, instr)| {
            let base = [HEAP, STACK_ADDR, OTHER_ADDR][r as usize];
            Step::Ref(base + off, instr)
        }),
        1 => (0u64..2048, 1u64..256, 0u64..3).prop_map(|(a, s, site)| Step::Alloc(HEAP + a, s, site)),
        1 => (0usize..8).prop_map(Step::Free),
    ]
}

/// Site `k`'s call path: two frames, so its name is `0x…-0x…` (no symbols).
fn path(site: u64) -> Vec<u64> {
    vec![0x1000 + site * 16 + 1, 0x2000 + site * 16 + 1]
}

fn site_name(site: u64) -> String {
    format!("0x{:x}-0x{:x}", 0x1000 + site * 16, 0x2000 + site * 16)
}

struct Built {
    batch: Batch,
    events: Vec<Event>,
}

fn build(steps: &[Step]) -> Built {
    let mut batch = Batch::with_capacity(0);
    let mut events = Vec::new();
    let mut live: Vec<u64> = Vec::new();
    for s in steps {
        let pos = batch.len() as u64;
        match *s {
            Step::Ref(addr, instr) => {
                if instr {
                    batch.push(Access {
                        kind: AccessKind::Instr,
                        ..Access::load(0x40_0000, 4)
                    });
                }
                batch.push(Access {
                    pc: Some(0x40_0000 + addr % 3),
                    ..Access::load(addr, 8)
                });
            }
            Step::Alloc(addr, size, site) => {
                live.push(addr);
                events.push(Event {
                    position: pos,
                    kind: EventKind::Alloc {
                        addr,
                        size,
                        stack: path(site),
                    },
                });
            }
            Step::Free(i) if !live.is_empty() => {
                let addr = live.swap_remove(i % live.len());
                events.push(Event {
                    position: pos,
                    kind: EventKind::Free { addr },
                });
            }
            Step::Free(_) => {}
        }
    }
    Built { batch, events }
}

/// Brute force: (misses by bucket name, evictions by (victim, evictor) names, total misses).
type Naive = (BTreeMap<String, u64>, BTreeMap<(String, String), u64>, u64);

fn naive(b: &Built, g: Geometry) -> Naive {
    let mut sets: Vec<Vec<(u64, String)>> = vec![Vec::new(); g.sets() as usize];
    let mut live: Vec<(u64, u64, String)> = Vec::new();
    let mut events = b.events.iter().peekable();
    let (mut misses, mut evictions, mut total) = (BTreeMap::new(), BTreeMap::new(), 0);
    for i in 0..b.batch.len() {
        while let Some(e) = events.next_if(|e| e.position <= i as u64) {
            match &e.kind {
                EventKind::Alloc { addr, size, stack } => {
                    let end = addr + size;
                    live.retain(|l| l.1 <= *addr || l.0 >= end);
                    let site = (stack[0] - 0x1001) / 16;
                    live.push((*addr, end, site_name(site)));
                }
                EventKind::Free { addr } => live.retain(|l| l.0 != *addr),
                EventKind::Map(_) | EventKind::HugePages { .. } => {}
            }
        }
        let a = b.batch.get(i);
        if a.kind == AccessKind::Instr {
            continue;
        }
        let bucket = match live.iter().find(|l| a.addr >= l.0 && a.addr < l.1) {
            Some(l) => l.2.clone(),
            None if a.addr >= STACK_ADDR => "stack".into(),
            None => "other".into(),
        };
        let line = a.addr >> g.line_size().shift();
        let set = &mut sets[g.set_of(line) as usize];
        if let Some(p) = set.iter().position(|x| x.0 == line) {
            let x = set.remove(p);
            set.push(x);
            continue;
        }
        total += 1;
        *misses.entry(bucket.clone()).or_default() += 1;
        if set.len() == g.assoc() as usize {
            let (_, victim) = set.remove(0);
            *evictions.entry((victim, bucket.clone())).or_default() += 1;
        }
        set.push((line, bucket));
    }
    (misses, evictions, total)
}

fn attribute(b: &Built, g: Geometry, sample_every: u64) -> Report {
    let opts = Options {
        geometry: g,
        sample_every,
        per_instruction: true,
        ..Options::default()
    };
    let events: Vec<crate::Result<Event>> = b.events.iter().cloned().map(Ok).collect();
    let mut a = Attribution::new(opts, Some(Box::new(events.into_iter()))).unwrap();
    // Odd-sized batches: events must land at their positions across batch boundaries.
    let all: Vec<Access> = b.batch.iter().collect();
    for chunk in all.chunks(37) {
        a.observe(&chunk.iter().copied().collect());
    }
    a.finish().unwrap()
}

/// A live event source, as the recorder's channel is: an event becomes visible only once the
/// "decoder" has read the records before it, and `None` means none yet.
struct Live {
    events: std::sync::Arc<Vec<Event>>,
    next: usize,
    visible: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Iterator for Live {
    type Item = crate::Result<Event>;
    fn next(&mut self) -> Option<Self::Item> {
        let visible = self.visible.load(std::sync::atomic::Ordering::SeqCst);
        (self.next < visible).then(|| {
            self.next += 1;
            Ok(self.events[self.next - 1].clone())
        })
    }
}

/// [`attribute`] with the events fed live: before each batch, only the events positioned
/// before its last record are visible (the trailing ones at `finish`).
fn attribute_live(b: &Built, g: Geometry, chunk: usize) -> Report {
    use std::sync::{Arc, atomic::AtomicUsize, atomic::Ordering};
    let opts = Options {
        geometry: g,
        per_instruction: true,
        ..Options::default()
    };
    let events = Arc::new(b.events.clone());
    let visible = Arc::new(AtomicUsize::new(0));
    let live = Live {
        events: events.clone(),
        next: 0,
        visible: visible.clone(),
    };
    let mut a = Attribution::new(opts, Some(Box::new(live))).unwrap();
    let all: Vec<Access> = b.batch.iter().collect();
    let mut end = 0u64;
    for part in all.chunks(chunk) {
        end += part.len() as u64;
        let decoded = events.iter().take_while(|e| e.position < end).count();
        visible.store(decoded, Ordering::SeqCst);
        a.observe(&part.iter().copied().collect());
    }
    visible.store(events.len(), Ordering::SeqCst);
    a.finish().unwrap()
}

/// [`attribute_live`] without per-instruction counts, each batch's data references indexed
/// by the pass (`indexed`) or not.
fn attribute_batches(b: &Built, chunk: usize, indexed: bool) -> Report {
    let opts = Options {
        geometry: Geometry::parse("256,2,32").unwrap(),
        utilization: true,
        loads: true,
        ..Options::default()
    };
    let events: Vec<crate::Result<Event>> = b.events.iter().cloned().map(Ok).collect();
    let mut a = Attribution::new(opts, Some(Box::new(events.into_iter()))).unwrap();
    let all: Vec<Access> = b.batch.iter().collect();
    for part in all.chunks(chunk) {
        let mut batch: Batch = part.iter().copied().collect();
        if indexed {
            batch.index_data();
        }
        a.observe(&batch);
    }
    a.finish().unwrap()
}

/// [`attribute`] under [`Attribution::per_structure`] at `rate` with `budget`.
fn attribute_per_structure(b: &Built, g: Geometry, rate: f64, budget: StructureBudget) -> Report {
    per_structure_report(b, g, (rate, budget), true)
}

/// [`attribute_per_structure`], with or without the estimator's `shortcuts`.
fn per_structure_report(
    b: &Built,
    g: Geometry,
    (rate, budget): (f64, StructureBudget),
    shortcuts: bool,
) -> Report {
    let opts = Options {
        geometry: g,
        cost: None,
        mrc: false,
        loads: false,
        ..Options::default()
    };
    let events: Vec<crate::Result<Event>> = b.events.iter().cloned().map(Ok).collect();
    let mut a = Attribution::new(opts, Some(Box::new(events.into_iter())))
        .unwrap()
        .per_structure(rate, budget, 7)
        .unwrap();
    if !shortcuts {
        a = a.without_shortcuts();
    }
    let all: Vec<Access> = b.batch.iter().collect();
    for chunk in all.chunks(37) {
        a.observe(&chunk.iter().copied().collect());
    }
    a.finish().unwrap()
}

fn tables(r: &Report) -> Naive {
    let misses = r
        .buckets
        .iter()
        .filter(|b| b.misses > 0)
        .map(|b| (b.name.clone(), b.misses))
        .collect();
    let evictions = r
        .evictions
        .iter()
        .filter(|e| e.evictions > 0)
        .map(|e| ((e.victim.clone(), e.evictor.clone()), e.evictions))
        .collect();
    (misses, evictions, r.misses)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn counts_equal_brute_force(steps in prop::collection::vec(step(), 1..600), g in 0usize..3) {
        let g = Geometry::parse(["256,2,32", "128,1,16", "512,4,64"][g]).unwrap();
        let b = build(&steps);
        let r = attribute(&b, g, 25_000);
        prop_assert_eq!(tables(&r), naive(&b, g));
        // The total equals the plain simulator's count on the same references.
        let mut c = Cache::new(g, Policy::Lru).unwrap();
        let lines = b.batch.iter().filter(|a| a.kind.is_data()).map(|a| a.addr >> g.line_size().shift());
        prop_assert_eq!(r.misses, c.access_all(lines));
        // The Cachegrind-format counts add up to the same totals.
        let mut sum = LineCounts::default();
        for l in &r.source_lines {
            sum.add(&l.counts);
        }
        prop_assert_eq!(sum.ir, r.instructions);
        prop_assert_eq!(sum.dr + sum.dw, r.data_refs);
        prop_assert_eq!(sum.d1mr + sum.d1mw, r.misses);
        prop_assert_eq!(sum.sd1mr + sum.sd1mw, r.samples);
    }

    #[test]
    fn indexed_batches_give_the_same_report(
        steps in prop::collection::vec(step(), 1..400),
        chunk in 1usize..50,
    ) {
        let b = build(&steps);
        prop_assert_eq!(attribute_batches(&b, chunk, true), attribute_batches(&b, chunk, false));
    }

    #[test]
    fn live_events_give_the_reports_of_a_complete_log(
        steps in prop::collection::vec(step(), 1..400),
        chunk in 1usize..50,
    ) {
        let g = Geometry::parse("256,2,32").unwrap();
        let b = build(&steps);
        let whole = attribute(&b, g, 25_000);
        let live = attribute_live(&b, g, chunk);
        prop_assert_eq!(tables(&live), tables(&whole));
        prop_assert_eq!(live.source_lines.len(), whole.source_lines.len());
    }

    #[test]
    fn sampling_every_miss_is_exact(steps in prop::collection::vec(step(), 1..300)) {
        let g = Geometry::parse("256,2,32").unwrap();
        let r = attribute(&build(&steps), g, 1);
        prop_assert_eq!(r.samples, r.misses);
        for b in &r.buckets {
            prop_assert_eq!(b.sampled, b.misses);
            prop_assert_eq!(b.sampled_rank, b.actual_rank);
        }
        for e in &r.evictions {
            prop_assert_eq!(e.sampled, e.evictions);
        }
        for l in &r.lines {
            prop_assert_eq!(l.sampled, l.evictions);
        }
    }

    #[test]
    fn per_structure_sample_at_rate_one_is_exact(
        steps in prop::collection::vec(step(), 1..400),
        per_bucket in 0u64..40,
        total in 0u64..100,
        g in 0usize..3,
    ) {
        // At rate 1 every line weighs one way, whether the budget holds it or the hash: the
        // weighted miniature is the cache itself.
        let g = Geometry::parse(["256,2,32", "128,1,16", "512,4,64"][g]).unwrap();
        let b = build(&steps);
        let r = attribute_per_structure(&b, g, 1.0, StructureBudget { per_bucket, total });
        prop_assert_eq!(tables(&r), naive(&b, g));
        let data = b.batch.iter().filter(|a| a.kind.is_data()).count() as u64;
        prop_assert_eq!(r.data_refs, data);
    }

    #[test]
    fn per_structure_sample_within_budget_is_exact_at_any_rate(
        steps in prop::collection::vec(step(), 1..400),
        g in 0usize..3,
        rate in prop::sample::select(vec![0.5, 0.25, 0.01]),
    ) {
        // A budget that holds every line: each line at rate 1 is simulated in its own set of
        // the cache, whatever the miniature's rate.
        let g = Geometry::parse(["256,2,32", "128,1,16", "512,4,64"][g]).unwrap();
        let b = build(&steps);
        let all = StructureBudget { per_bucket: u64::MAX, total: u64::MAX };
        let r = attribute_per_structure(&b, g, rate, all);
        prop_assert_eq!(tables(&r), naive(&b, g));
    }

    #[test]
    fn per_structure_shortcuts_change_nothing(
        steps in prop::collection::vec((step(), 1usize..4), 1..400),
        per_bucket in 0u64..40,
        total in 0u64..100,
        g in 0usize..3,
        rate in prop::sample::select(vec![1.0, 0.5, 0.25, 0.01]),
    ) {
        // Any budget and rate, each reference repeated up to 3 times (the last line's hit):
        // the report of the estimator that looks every class up and accesses the miniature on
        // every reference, to the count and the code line.
        let steps: Vec<Step> = steps
            .into_iter()
            .flat_map(|(s, n)| {
                let n = if matches!(s, Step::Ref(..)) { n } else { 1 };
                std::iter::repeat_n(s, n)
            })
            .collect();
        let g = Geometry::parse(["256,2,32", "128,1,16", "512,4,64"][g]).unwrap();
        let b = build(&steps);
        let budget = StructureBudget { per_bucket, total };
        let fast = per_structure_report(&b, g, (rate, budget), true);
        let plain = per_structure_report(&b, g, (rate, budget), false);
        prop_assert_eq!(fast, plain);
    }

    #[test]
    fn bucket_curves_equal_naive_fully_associative(steps in prop::collection::vec(step(), 1..400)) {
        let g = Geometry::parse("256,2,32").unwrap();
        let b = build(&steps);
        let r = attribute(&b, g, 25_000);
        // A fully-associative LRU cache of 1 KiB (32 lines of 32 bytes), bucket by bucket.
        let full = Geometry::fully_associative(1024, 32).unwrap();
        let (want, _, _) = naive(&b, full);
        for c in &r.mrc {
            let p = c.points.iter().find(|p| p.size_bytes == 1024).unwrap();
            prop_assert_eq!(p.misses, *want.get(&c.name).unwrap_or(&0) as f64, "{}", c.name);
        }
    }
}

#[test]
fn per_structure_sample_refuses_what_it_does_not_count() {
    let a = Attribution::new(Options::default(), None).unwrap();
    let e = a
        .per_structure(0.01, StructureBudget::default(), 1)
        .err()
        .unwrap();
    assert!(e.to_string().contains("per-structure sample"), "{e}");
    let quiet = Options {
        cost: None,
        mrc: false,
        loads: false,
        ..Options::default()
    };
    for rate in [0.0, -1.0, 1.5, f64::NAN] {
        let a = Attribution::new(quiet.clone(), None).unwrap();
        let e = a.per_structure(rate, StructureBudget::default(), 1).err();
        assert!(e.is_some_and(|e| e.to_string().contains("rate")), "{rate}");
    }
}

#[test]
fn address_reused_after_free_goes_to_the_new_owner() {
    // Block A at HEAP (site 0), freed; block B at the same address (site 1). A direct-mapped
    // cache of one 32-byte line: every new line misses and evicts the previous one.
    let g = Geometry::parse("32,1,32").unwrap();
    let steps = [
        Step::Alloc(HEAP, 64, 0),
        Step::Ref(HEAP, false),
        Step::Ref(OTHER_ADDR, false),
        Step::Free(0),
        Step::Alloc(HEAP, 64, 1),
        Step::Ref(HEAP, false),
        Step::Ref(STACK_ADDR, false),
    ];
    let r = attribute(&build(&steps), g, 1);
    let (misses, evictions, total) = tables(&r);
    assert_eq!(total, 4);
    assert_eq!(misses[&site_name(0)], 1);
    assert_eq!(misses[&site_name(1)], 1);
    assert_eq!(evictions[&(site_name(0), "other".into())], 1);
    assert_eq!(evictions[&("other".into(), site_name(1))], 1);
    assert_eq!(evictions[&(site_name(1), "stack".into())], 1);
    // Shares: each victim's evictions are all by one evictor.
    assert!(r.evictions.iter().all(|e| e.actual_pct == 100.0));
}

#[test]
fn events_error_is_reported_by_finish() {
    let events: Vec<crate::Result<Event>> = vec![Err(crate::Error::Corrupt {
        source_name: crate::Source::Memory,
        message: "bad".into(),
    })];
    let a = Attribution::new(Options::default(), Some(Box::new(events.into_iter()))).unwrap();
    assert!(a.finish().is_err());
}

/// The paper's accuracy bound on a long trace: every bucket above 10 % of misses has its
/// sampled share within 5 percentage points, with about 1000 samples (1 in 1000 misses).
#[test]
fn sampled_shares_within_five_points_with_a_thousand_samples() {
    use rand::Rng;
    let mut rng = rand_pcg::Pcg64::new(42, 54);
    // Three heap blocks taking 50 %, 30 % and 20 % of uniform references over 4 MiB.
    let sizes = [2u64 << 20, 1228800, 838_861];
    let mut events = Vec::new();
    let mut start = HEAP;
    for (i, &s) in sizes.iter().enumerate() {
        events.push(Event {
            position: 0,
            kind: EventKind::Alloc {
                addr: start,
                size: s,
                stack: path(i as u64),
            },
        });
        start += s;
    }
    let span = start - HEAP;
    let mut batch = Batch::with_capacity(0);
    for _ in 0..1_100_000 {
        let off = ((u128::from(rng.next_u64()) * u128::from(span)) >> 64) as u64;
        batch.push(Access::load(HEAP + (off & !7), 8));
    }
    let b = Built { batch, events };
    let r = attribute(&b, Geometry::parse(PAPER_CACHE).unwrap(), 1000);
    assert!(r.samples > 900, "{} samples", r.samples);
    let big: Vec<_> = r.buckets.iter().filter(|b| b.actual_pct > 10.0).collect();
    assert_eq!(big.len(), 3);
    for b in big {
        assert!(
            (b.sampled_pct - b.actual_pct).abs() < 5.0,
            "{}: actual {:.1} %, sampled {:.1} %",
            b.name,
            b.actual_pct,
            b.sampled_pct
        );
    }
}

/// Static data no variable covers falls in its module's region bucket; a variable inside the
/// region keeps its own bucket, before and after a region hit is cached.
#[test]
fn unnamed_static_data_is_its_modules_region_bucket() {
    // The test binary itself, at its link addresses: it has variables and data segments.
    let exe = std::env::current_exe().unwrap();
    let mut m = BucketMap::new(Some(&exe));
    let module = &m.modules()[0];
    let (start, end) = *module
        .data_segments
        .iter()
        .max_by_key(|r| r.1 - r.0)
        .expect("a writable segment");
    let vars: Vec<(u64, u64, String)> = module
        .variables
        .iter()
        .filter(|v| v.start >= start && v.end <= end)
        .map(|v| (v.start, v.end, v.name.clone()))
        .collect();
    let file = exe.file_name().unwrap().to_string_lossy().into_owned();
    let region = format!("{file} static data (no symbol)");
    let mut sym = Symbolizer::default();
    let names = |m: &BucketMap, sym: &mut Symbolizer| m.finish_names(sym);
    // Brute force over the segment's addresses (every 8th byte): a variable's own bucket
    // inside a variable, the region elsewhere; alternating far lookups defeat the cache.
    let all = names(&m, &mut sym);
    let mut saw_region = false;
    for addr in (start..end).step_by(8).take(200_000) {
        let i = vars.partition_point(|v| v.0 <= addr);
        let want = i
            .checked_sub(1)
            .map(|i| &vars[i])
            .filter(|v| addr < v.1)
            .map(|v| v.2.clone());
        let got = &all[m.lookup(addr) as usize].0;
        match want {
            Some(name) => assert_eq!(got, &name, "{addr:#x}"),
            None => {
                assert_eq!(got, &region, "{addr:#x}");
                saw_region = true;
            }
        }
    }
    assert!(saw_region);
}

#[test]
fn code_lines_name_modules_and_offsets_when_no_line_is_known() {
    let bare = CodeLine {
        address: 0x7f00_1234,
        module: Some("libc.so.6".into()),
        offset: 0x1234,
        ..CodeLine::default()
    };
    assert_eq!(bare.label(), "libc.so.6+0x1234");
    assert_eq!(bare.site(), "libc.so.6+0x1234");
    let named = CodeLine {
        function: Some("memcpy".into()),
        ..bare.clone()
    };
    assert_eq!(named.label(), "memcpy libc.so.6+0x1234");
    let line = CodeLine {
        function: Some("main".into()),
        file: Some("a.c".into()),
        line: Some(7),
        ..CodeLine::default()
    };
    assert_eq!(
        (line.label(), line.site()),
        ("main a.c:7".into(), "main(a.c:7)".into())
    );
    let unknown = CodeLine {
        address: 0x42,
        ..CodeLine::default()
    };
    assert_eq!(unknown.label(), "0x42");
}

#[test]
fn cachegrind_out_counts_per_instruction_and_renders_exactly() {
    // Two sets of one 32-byte line. Fetch, load A (miss), fetch, store B in A's set (miss,
    // evicts A), modify A (miss, a read): every miss sampled.
    let opts = Options {
        geometry: Geometry::parse("64,1,32").unwrap(),
        sample_every: 1,
        cost: None,
        mrc: false,
        per_instruction: true,
        ..Options::default()
    };
    let mut a = Attribution::new(opts, None).unwrap();
    let at = |addr, kind, pc| Access {
        addr,
        size: 4,
        kind,
        pc: Some(pc),
    };
    let batch: Batch = [
        at(0x40_0000, AccessKind::Instr, 0x40_0000),
        at(0x1000, AccessKind::Load, 0x40_0000),
        at(0x40_0004, AccessKind::Instr, 0x40_0004),
        at(0x1040, AccessKind::Store, 0x40_0004),
        at(0x1000, AccessKind::Modify, 0x40_0004),
    ]
    .into_iter()
    .collect();
    a.observe(&batch);
    let mut r = a.finish().unwrap();
    // No program: both instructions are unknown source, one line.
    let counts = |v: [u64; 7]| LineCounts {
        ir: v[0],
        dr: v[1],
        d1mr: v[2],
        dw: v[3],
        d1mw: v[4],
        sd1mr: v[5],
        sd1mw: v[6],
    };
    assert_eq!(
        r.source_lines,
        vec![SourceLine {
            counts: counts([2, 2, 2, 1, 1, 2, 1]),
            ..SourceLine::default()
        }]
    );

    // Hand-made lines: sorted by file (unknown last), function, line; unknown source at
    // line 0 whatever its line says; equal keys merged.
    let line = |file: Option<&str>, function: Option<&str>, line, v| SourceLine {
        file: file.map(Into::into),
        function: function.map(Into::into),
        line,
        counts: counts(v),
    };
    r.source_lines = vec![
        line(Some("/src/b.c"), Some("g"), 7, [5, 2, 1, 0, 0, 0, 0]),
        line(Some("/src/a.c"), Some("main"), 12, [3, 0, 0, 1, 1, 0, 1]),
        line(Some("/src/a.c"), Some("main"), 3, [1, 1, 0, 0, 0, 0, 0]),
        line(Some("/src/a.c"), Some("helper"), 30, [0, 4, 2, 0, 0, 1, 0]),
        line(None, Some("memcpy"), 0, [2, 2, 2, 0, 0, 0, 0]),
        line(None, None, 0, [1, 0, 0, 0, 0, 0, 0]),
        line(None, None, 5, [1, 0, 0, 0, 0, 0, 0]),
    ];
    let want = "\
desc: D1 cache:         64 B, 32 B, 1-way associative
desc: Simulated by:     cachescope attribute: exact LRU, data references only, each on the line of its first byte; a modify is one read
desc: Sampled events:   SD1mr SD1mw, the D1 misses a monitor sampling 1 in 1 misses picked (seed 1): 3 samples
cmd: ./prog a b
events: Ir Dr D1mr Dw D1mw SD1mr SD1mw
fl=/src/a.c
fn=helper
30 0 4 2 0 0 1 0
fn=main
3 1 1 0 0 0 0 0
12 3 0 0 1 1 0 1
fl=/src/b.c
fn=g
7 5 2 1 0 0 0 0
fl=???
fn=???
0 2 0 0 0 0 0 0
fn=memcpy
0 2 2 2 0 0 0 0
summary: 13 9 5 1 1 1 1
";
    assert_eq!(cachegrind_out::render(&r, "./prog a b"), want);

    // Without instruction fetches the Ir column is left out.
    r.instructions = 0;
    let text = cachegrind_out::render(&r, "prog\nline");
    assert!(text.contains("cmd: prog line\nevents: Dr D1mr Dw D1mw SD1mr SD1mw\n"));
    assert!(text.contains("\n30 4 2 0 0 1 0\n"));
    assert!(text.ends_with("summary: 9 5 1 1 1 1\n"));
}
