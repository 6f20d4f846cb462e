//! Line utilization in the multi-core model: one core against the single-core hierarchy,
//! and two cores by hand.

use super::{g, run, workload};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::sim::{HierarchyConfig, LevelSpec, MultiCore, MultiCoreConfig, SimAnalysis, SimOptions};

#[test]
fn one_core_uses_the_bytes_the_single_core_hierarchy_uses() {
    use crate::sim::Writes;
    let mut trace = workload();
    for b in &mut trace {
        for (kind, &addr) in b.kinds.iter_mut().zip(&b.addrs) {
            if *kind == AccessKind::Load && (addr >> 6) % 3 == 0 {
                *kind = AccessKind::Store;
            }
        }
    }
    for writes in [None, Some(Writes { allocate: false })] {
        let mut h = HierarchyConfig::new(g("4K,2,64"), g("8K,4,64"), g("64K,8,64"));
        h.l3 = Some(g("256K,16,64"));
        h.writes = writes;
        let opts = SimOptions {
            utilization: true,
            ..SimOptions::default()
        };
        let mut hier = SimAnalysis::hierarchy(&h, opts).unwrap();
        let mut config = MultiCoreConfig::new(
            1,
            vec![
                LevelSpec::private("L1D", g("8K,4,64")),
                LevelSpec::private("L2", g("64K,8,64")),
                LevelSpec::shared("L3", g("256K,16,64")),
            ],
        );
        config.l1i = Some(g("4K,2,64"));
        config.writes = writes;
        config.utilization = true;
        let mut split = MultiCore::new(&config).unwrap();
        for b in &trace {
            hier.observe(b);
            split.observe(b);
        }
        let (want, got) = (hier.finish(), split.finish());
        for (w, c) in want.levels.iter().zip(&got.caches) {
            assert!(w.stats.fetched_bytes.unwrap() > 0, "{}", w.name);
            assert_eq!(
                (w.stats.used_bytes, w.stats.fetched_bytes),
                (c.counts.used_bytes, c.counts.fetched_bytes),
                "{writes:?}, {}",
                w.name
            );
            assert_eq!(w.stats.utilization(), c.utilization, "{}", w.name);
        }
    }
}

#[test]
fn a_line_a_write_takes_counts_the_bytes_used_before_it_left() {
    use AccessKind::{Load, Store};
    let mut config = MultiCoreConfig::new(2, vec![LevelSpec::private("L1", g("32K,8,64"))]);
    config.utilization = true;
    // Thread 1 (core 0) reads bytes 0-7 of the line; thread 2 (core 1) writes bytes 8-15,
    // taking the line from core 0 with 8 of its bytes used; thread 1 reads bytes 16-23, a
    // coherence miss that fetches the line again (from core 1, whose copy stays).
    let r = run(
        &config,
        &[(1, Load, 0x1000), (2, Store, 0x1008), (1, Load, 0x1010)],
    );
    let used: Vec<_> = r
        .caches
        .iter()
        .map(|c| (c.core, c.counts.used_bytes, c.counts.fetched_bytes))
        .collect();
    assert_eq!(
        used,
        [(Some(0), Some(16), Some(128)), (Some(1), Some(8), Some(64))]
    );
    assert_eq!(r.totals[0].counts.coherence, 1);
    assert_eq!(
        (r.totals[0].counts.used_bytes, r.totals[0].utilization),
        (Some(24), Some(24.0 / 192.0))
    );
    // Without the flag, nothing is tracked or reported.
    config.utilization = false;
    let r = run(&config, &[(1, Load, 0x1000)]);
    assert_eq!(
        (r.caches[0].counts.used_bytes, r.caches[0].utilization),
        (None, None)
    );
}
