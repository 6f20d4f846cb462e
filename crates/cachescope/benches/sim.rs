//! Cache simulator throughput, in references per second.
//!
//! Inputs are built in memory from the built-in workloads:
//! - `mixed`: three kernels one after the other, 1.5 M data references each: mgrid's 27-point
//!   stencil on a 48³ grid, a 96×96 tiled matrix multiply (tile 16) and Zipf(1.0) loads over
//!   32 Ki lines. Instruction fetches are woven in at the density of real programs (Valgrind on
//!   `ls -la /usr/bin`: 2.6 fetches per data reference; here 2.77, x86-like sizes of 1 to 7
//!   bytes, a 64-instruction loop body per kernel plus a 40-instruction call after every 100 data
//!   references, see [`with_fetches`]), 16.95 M references in all. A 32 KiB 8-way L1D misses
//!   17.6% of the 4.5 M data references (the Zipf phase's 2 MiB working set does not fit), the
//!   I1 18 of the 12.45 M fetches.
//! - `zipf-4M` and `random-2M`: 8 M data loads, Zipf(0.8) over 4 Mi lines and uniform over
//!   2 Mi lines, for a fully associative LRU cache of 1 Mi lines (64 MiB): the first has locality,
//!   the second defeats every CPU cache (its hash-map probes miss).
//!
//! Groups:
//! - `l1`: a 32 KiB, 8-way, 64 B L1 over the 4.5 M data lines of `mixed`, per policy (`Cache`),
//!   and the same LRU cache as a `SimAnalysis` over the data references' batches (the path
//!   `simulate` takes).
//! - `hierarchy`: `CachegrindSim` (I1 and D1 32 KiB 8-way, LL 8 MiB 16-way) over all of `mixed`,
//!   and the same caches as a straddling `SimAnalysis` hierarchy, with and without 3C.
//! - `fully`: 1 Mi lines, LRU, over `zipf-4M` and `random-2M`.
//! - `hardware`: what the models of docs/hardware.md cost, over the data references of `mixed`
//!   (their instruction addresses woven in as PCs): a 32 KiB 8-way LRU `SimAnalysis` as
//!   `simulate` runs it by default (`plain`), with write-backs tracked, with a next-line and a
//!   stride prefetcher (degree 1, distance 1); a 48 KiB cache of 64 sets of 12 ways (indexed by
//!   a mask) against 48 sets of 16 ways (by the remainder); with line utilization tracked
//!   (`utilization`: `Touched` and its memo); and the `hierarchy` group's
//!   `SimAnalysis` hierarchy with write-backs (throughput in all references there).
//! - `one_set`: the choice behind `SCAN_MAX_WAYS`: a one-set `SetAssoc` against `FullyAssoc` at
//!   8 to 128 ways on uniform loads over twice the cache's lines.
//!
//! Measured on one core of a shared 2-core VM: `l1` LRU 240 M references/s, FIFO 181 M, random
//! 102 M, tree-PLRU 112 M, `SimAnalysis` 181 M; `hierarchy` `CachegrindSim` 113 M, the
//! `SimAnalysis` hierarchy 87 M, with 3C 40 M; `fully` 11.5 M (Zipf) and 8.7 M (uniform): about
//! three DRAM misses per reference (the hash probe, the list neighbours), O(1) all the same.
//!
//! `hardware`, measured on 29 Nov under load from other builds (the same run's
//! `sim_analysis_lru`: 122 M/s): plain 52 M data references/s, write-backs 24 M, next-line
//! 14 M, stride 25 M, both 20 M; 64 sets by mask 54 M, 48 sets by remainder 61 M; the
//! hierarchy 16 M references/s, with write-backs 14.5 M (docs/hardware.md). `utilization`,
//! added later (load about 3): 21 M data references/s, plain 94 M in the same runs.
//!
//! Run: `cargo bench -p cachescope --bench sim -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::analysis::Analysis;
use cachescope::sim::{
    Cache, CachegrindSim, FullyAssoc, Geometry, HierarchyConfig, LineMapping, Policy,
    PrefetchPolicy, SetAssoc, SimAnalysis, SimOptions, Writes,
};
use cachescope::workloads::{Params, Workload};
use cachescope::{AccessKind, Batch};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

/// Instruction sizes of the woven-in fetches, cycled (x86-like: 1 to 7 bytes, 4 on average).
const SIZES: [u32; 11] = [3, 4, 2, 5, 7, 4, 3, 6, 1, 4, 5];

/// Appends the fetch of the instruction at `pc` and moves on; a loop body of 64 instructions
/// starts again at `code`.
fn fetch(b: &mut Batch, pc: &mut u64, slot: &mut u64, code: u64) {
    let size = SIZES[(*slot % 11) as usize];
    b.push_raw(*pc, size, AccessKind::Instr, *pc);
    *slot += 1;
    *pc += u64::from(size);
    if *slot % 64 == 0 {
        *pc = code;
    }
}

/// `data` (data references only) with instruction fetches woven in: before the j-th data
/// reference 1 + [j even] + [5 divides j] + 2·[3 divides j] fetches (2.37 on average) from a
/// 64-instruction loop body at `code`, and after every 100th a 40-instruction call elsewhere:
/// 2.77 fetches per data reference.
fn with_fetches(data: Vec<Batch>, code: u64) -> Vec<Batch> {
    let (mut pc, mut slot, mut j) = (code, 0u64, 0u64);
    let mut out = Vec::new();
    let mut b = Batch::new();
    for a in data.iter().flat_map(Batch::iter) {
        let n = 1 + u64::from(j % 2 == 0) + u64::from(j % 5 == 0) + u64::from(j % 3 == 0) * 2;
        for _ in 0..n {
            fetch(&mut b, &mut pc, &mut slot, code);
        }
        if j % 100 == 99 {
            let (callee, mut call_slot) = (0x7f00_0000_1000, 0);
            let mut call_pc = callee;
            for _ in 0..40 {
                fetch(&mut b, &mut call_pc, &mut call_slot, callee);
            }
        }
        b.push_raw(a.addr, a.size, a.kind, pc);
        j += 1;
        if b.is_full() {
            out.push(std::mem::replace(&mut b, Batch::new()));
        }
    }
    out.push(b);
    out
}

/// The data references of the three kernels of `mixed`, each kernel's batches apart.
fn kernels() -> [Vec<Batch>; 3] {
    let base = Params {
        refs: Some(1_500_000),
        ..Params::default()
    };
    [
        workload::batches(
            Workload::Stencil,
            &Params {
                n: 48,
                ..base.clone()
            },
        ),
        workload::batches(
            Workload::MatmulTiled,
            &Params {
                n: 96,
                tile: 16,
                ..base.clone()
            },
        ),
        workload::batches(
            Workload::Zipf,
            &Params {
                lines: 1 << 15,
                ..base
            },
        ),
    ]
}

/// `mixed`: the kernels' data references with instruction fetches.
fn mixed(kernels: [Vec<Batch>; 3]) -> Vec<Batch> {
    kernels
        .into_iter()
        .zip([0x40_1000, 0x40_2000, 0x40_3000])
        .flat_map(|(k, code)| with_fetches(k, code))
        .collect()
}

fn data_lines(batches: &[Batch]) -> Vec<u64> {
    batches
        .iter()
        .flat_map(|b| b.addrs.iter().zip(&b.kinds))
        .filter(|(_, k)| k.is_data())
        .map(|(a, _)| a >> 6)
        .collect()
}

fn loads(w: Workload, lines: u64, zipf_s: f64) -> Vec<u64> {
    let p = Params {
        refs: Some(8_000_000),
        lines,
        zipf_s,
        ..Params::default()
    };
    data_lines(&workload::batches(w, &p))
}

fn geo(s: &str) -> Geometry {
    Geometry::parse(s).expect("valid geometry")
}

fn bench_l1(c: &mut Criterion, data: &[Batch]) {
    let lines = data_lines(data);
    let mut group = c.benchmark_group("l1");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.sample_size(10);
    for policy in [
        Policy::Lru,
        Policy::Fifo,
        Policy::Random { seed: 1 },
        Policy::Plru,
    ] {
        group.bench_function(BenchmarkId::new("cache", policy.name()), |b| {
            b.iter(|| {
                let mut cache = Cache::new(geo("32K,8,64"), policy).unwrap();
                cache.access_all(black_box(&lines).iter().copied())
            })
        });
    }
    group.bench_function("sim_analysis_lru", |b| {
        b.iter(|| {
            let mut sim =
                SimAnalysis::cache(geo("32K,8,64"), Policy::Lru, SimOptions::default()).unwrap();
            for batch in data {
                sim.observe(black_box(batch));
            }
            sim.finish().levels[0].stats.misses
        })
    });
    group.finish();
}

fn bench_hierarchy(c: &mut Criterion, mixed: &[Batch]) {
    let refs: usize = mixed.iter().map(Batch::len).sum();
    let instrs: usize = mixed
        .iter()
        .map(|b| b.kinds.iter().filter(|&&k| k == AccessKind::Instr).count())
        .sum();
    eprintln!("mixed: {refs} references, {instrs} instruction fetches");
    let mut group = c.benchmark_group("hierarchy");
    group.throughput(Throughput::Elements(refs as u64));
    group.sample_size(10);
    group.bench_function("cachegrind", |b| {
        b.iter(|| {
            let mut sim =
                CachegrindSim::new(geo("32K,8,64"), geo("32K,8,64"), geo("8M,16,64")).unwrap();
            for batch in mixed {
                sim.observe(black_box(batch));
            }
            sim.finish().ll_misses
        })
    });
    let config = HierarchyConfig::new(geo("32K,8,64"), geo("32K,8,64"), geo("8M,16,64"));
    for three_c in [false, true] {
        let name = if three_c { "sim_3c" } else { "sim" };
        group.bench_function(name, |b| {
            b.iter(|| {
                let opts = SimOptions {
                    mapping: LineMapping::Straddle,
                    three_c,
                    ..SimOptions::default()
                };
                let mut sim = SimAnalysis::hierarchy(&config, opts).unwrap();
                for batch in mixed {
                    sim.observe(black_box(batch));
                }
                sim.finish().levels[2].stats.misses
            })
        });
    }
    group.finish();
}

/// One `SimAnalysis` over `batches`: the last level's misses.
fn simulate(sim: &mut SimAnalysis, batches: &[Batch]) -> u64 {
    for batch in batches {
        sim.observe(black_box(batch));
    }
    sim.finish().levels.last().map_or(0, |l| l.stats.misses)
}

fn bench_hardware(c: &mut Criterion, mixed: &[Batch]) {
    let data: usize = mixed
        .iter()
        .map(|b| b.kinds.iter().filter(|k| k.is_data()).count())
        .sum();
    let mut group = c.benchmark_group("hardware");
    group.throughput(Throughput::Elements(data as u64));
    group.sample_size(10);
    let tracked = Some(Writes::default());
    let next_line = PrefetchPolicy::NextLine { degree: 1 };
    let stride = PrefetchPolicy::Stride {
        degree: 1,
        distance: 1,
    };
    for (name, spec, writes, prefetch) in [
        ("plain", "32K,8,64", None, PrefetchPolicy::None),
        ("writebacks", "32K,8,64", tracked, PrefetchPolicy::None),
        ("next_line", "32K,8,64", None, next_line),
        ("stride", "32K,8,64", None, stride),
        ("writebacks_stride", "32K,8,64", tracked, stride),
        ("mask_64_sets", "48K,12,64", None, PrefetchPolicy::None),
        ("modulo_48_sets", "48K,16,64", None, PrefetchPolicy::None),
    ] {
        let opts = SimOptions {
            writes,
            prefetch,
            ..SimOptions::default()
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                simulate(
                    &mut SimAnalysis::cache(geo(spec), Policy::Lru, opts).unwrap(),
                    mixed,
                )
            })
        });
    }
    let opts = SimOptions {
        utilization: true,
        ..SimOptions::default()
    };
    group.bench_function("utilization", |b| {
        b.iter(|| {
            simulate(
                &mut SimAnalysis::cache(geo("32K,8,64"), Policy::Lru, opts).unwrap(),
                mixed,
            )
        })
    });
    let refs: usize = mixed.iter().map(Batch::len).sum();
    group.throughput(Throughput::Elements(refs as u64));
    let config = HierarchyConfig::new(geo("32K,8,64"), geo("32K,8,64"), geo("8M,16,64"));
    for (name, writes) in [("hierarchy", None), ("hierarchy_writebacks", tracked)] {
        let opts = SimOptions {
            mapping: LineMapping::Straddle,
            writes,
            ..SimOptions::default()
        };
        group.bench_function(name, |b| {
            b.iter(|| simulate(&mut SimAnalysis::hierarchy(&config, opts).unwrap(), mixed))
        });
    }
    group.finish();
}

fn bench_fully(c: &mut Criterion) {
    let mut group = c.benchmark_group("fully");
    group.sample_size(10);
    for (name, trace) in [
        ("zipf-4M", loads(Workload::Zipf, 1 << 22, 0.8)),
        ("random-2M", loads(Workload::Random, 1 << 21, 1.0)),
    ] {
        group.throughput(Throughput::Elements(trace.len() as u64));
        group.bench_function(BenchmarkId::new("lru_1M_lines", name), |b| {
            b.iter(|| {
                let mut cache = Cache::new(geo("64M,full,64"), Policy::Lru).unwrap();
                cache.access_all(black_box(&trace).iter().copied())
            })
        });
    }
    group.finish();
}

fn bench_one_set(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_set");
    group.sample_size(10);
    for ways in [8u32, 16, 32, 64, 128] {
        let trace = loads(Workload::Random, 2 * u64::from(ways), 1.0);
        let trace = &trace[..1_000_000];
        group.throughput(Throughput::Elements(trace.len() as u64));
        let g = Geometry::new(u64::from(ways) * 64, ways, 64).unwrap();
        group.bench_function(BenchmarkId::new("scan", ways), |b| {
            b.iter(|| {
                let mut c = SetAssoc::new(g, Policy::Lru).unwrap();
                trace.iter().filter(|&&l| !c.access(l)).count()
            })
        });
        group.bench_function(BenchmarkId::new("hash", ways), |b| {
            b.iter(|| {
                let mut c = FullyAssoc::new(g, Policy::Lru).unwrap();
                trace.iter().filter(|&&l| !c.access(l)).count()
            })
        });
    }
    group.finish();
}

fn bench_sim(c: &mut Criterion) {
    let kernels = kernels();
    let data: Vec<Batch> = kernels.iter().flatten().cloned().collect();
    bench_l1(c, &data);
    let mixed = mixed(kernels);
    bench_hierarchy(c, &mixed);
    bench_hardware(c, &mixed);
    bench_fully(c);
    bench_one_set(c);
}

criterion_group!(benches, bench_sim);
criterion_main!(benches);
