//! TLB throughput, in references per second: Skylake's TLBs (`--tlb skylake`) over 4 M data
//! loads of two workloads, `zipf` over 1 Mi lines (16 Ki pages: locality within pages and
//! across them) and `random` over 1 Mi lines (every reference to another page, most of them a
//! walk); the TLBs alone (`TlbSim`), with 2 MiB pages, and in front of a 32 KiB 8-way cache
//! fed the walks (`Walked`, what `simulate --tlb skylake --cache 32K,8,64` runs); and the
//! report's page-level curve (`PageCurves`).
//!
//! Run: `cargo bench -p cachescope --bench tlb -- --warm-up-time 1 --measurement-time 3`.

use cachescope::LineSize;
use cachescope::sim::{Geometry, Policy, SimAnalysis, SimOptions};
use cachescope::tlb::{PageCurves, PageMap, TlbConfig, TlbPreset, TlbSim, Walked};
use cachescope::workloads::Workload;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

const REFS: u64 = 4_000_000;

fn tlbs(c: &mut Criterion) {
    let skylake = TlbConfig::preset(TlbPreset::Skylake);
    let huge = PageMap::uniform(LineSize::new(2 << 20).unwrap());
    let mut g = c.benchmark_group("tlb");
    g.throughput(Throughput::Elements(REFS));
    for w in [Workload::Zipf, Workload::Random] {
        let batches = workload::loads(w, 1 << 20, REFS);
        let name = w.name();
        g.bench_with_input(BenchmarkId::new("skylake", name), &batches, |b, batches| {
            b.iter(|| {
                let mut t = TlbSim::new(&skylake, PageMap::default(), false).unwrap();
                workload::feed(&mut t, batches);
                t.finish().page_walks
            })
        });
        g.bench_with_input(
            BenchmarkId::new("skylake-2M", name),
            &batches,
            |b, batches| {
                b.iter(|| {
                    let mut t = TlbSim::new(&skylake, huge.clone(), false).unwrap();
                    workload::feed(&mut t, batches);
                    t.finish().page_walks
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("walked-32K", name),
            &batches,
            |b, batches| {
                b.iter(|| {
                    let t = TlbSim::new(&skylake, PageMap::default(), false).unwrap();
                    let g = Geometry::parse("32K,8,64").unwrap();
                    let mut s = SimAnalysis::cache(g, Policy::Lru, SimOptions::default()).unwrap();
                    s.count_walks();
                    let mut w = Walked::new(t, s);
                    workload::feed(&mut w, batches);
                    w.finish().0.walk_refs
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("page-curves", name),
            &batches,
            |b, batches| {
                b.iter(|| {
                    let mut p = PageCurves::new(LineSize::PAGE_4K);
                    workload::feed(&mut p, batches);
                    p.finish().len()
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, tlbs);
criterion_main!(benches);
