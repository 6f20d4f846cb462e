//! Cachegrind's model on hand traces: straddles, modifies, the LL feed, size cuts, line 0.

use super::batch;
use crate::access::AccessKind::{Instr, Load, Modify, Store};
use crate::analysis::Analysis;
use crate::sim::{CachegrindCounts, CachegrindSim, Geometry};

/// I1 and D1: 4 KiB, 2-way, 64 B (32 sets); LL: 16 KiB, 4-way, 64 B (64 sets).
fn sim() -> CachegrindSim {
    let g = |s: &str| Geometry::parse(s).unwrap();
    CachegrindSim::new(g("4K,2,64"), g("4K,2,64"), g("16K,4,64")).unwrap()
}

fn has(c: &crate::sim::Cache, line: u64) -> bool {
    c.contains(line)
}

#[test]
fn a_straddling_access_is_one_reference_with_at_most_one_miss_per_level() {
    let mut s = sim();
    // Bytes 0x103c..0x1044 straddle lines 0x40 and 0x41: both miss D1 and LL, one miss each.
    s.observe(&batch(&[(Load, 0x103c, 8)]));
    let c = s.finish();
    assert_eq!((c.d_refs, c.d1_misses, c.lld_misses), (1, 1, 1));
    let [_, d1, ll] = s.caches();
    assert!(has(d1, 0x40) && has(d1, 0x41) && has(ll, 0x40) && has(ll, 0x41));
    // Both lines were filled: each now hits alone.
    s.observe(&batch(&[(Load, 0x1000, 8), (Store, 0x1040, 8)]));
    let c = s.finish();
    assert_eq!((c.d_refs, c.d1_misses, c.d_writes), (3, 1, 1));
}

#[test]
fn an_l1_miss_sends_both_lines_to_ll() {
    let mut s = sim();
    // Line 0x40 is in D1 and LL. Evict it from LL only: lines 0x80, 0xc0, 0x100, 0x140 share
    // its LL set (64 sets) and come in as instruction fetches (I1 is separate from D1).
    s.observe(&batch(&[(Load, 0x1000, 4)]));
    for l in [0x80u64, 0xc0, 0x100, 0x140] {
        s.observe(&batch(&[(Instr, l * 64, 4)]));
    }
    let [_, d1, ll] = s.caches();
    assert!(has(d1, 0x40) && !has(ll, 0x40));
    // A straddle over 0x40 (D1 hit) and 0x41 (D1 miss) is a D1 miss, so LL sees the whole
    // access: 0x40 is back in LL although D1 hit it.
    s.observe(&batch(&[(Load, 0x103e, 4)]));
    let [_, _, ll] = s.caches();
    assert!(has(ll, 0x40) && has(ll, 0x41));
    let c = s.finish();
    assert_eq!((c.d1_read_misses, c.lld_read_misses), (2, 2));
    assert_eq!((c.i_refs, c.i1_misses, c.lli_misses), (4, 4, 4));
    assert_eq!((c.ll_refs, c.ll_misses), (6, 6));
}

#[test]
fn a_modify_is_one_read() {
    let mut s = sim();
    s.observe(&batch(&[
        (Modify, 0x2000, 8),
        (Modify, 0x2000, 8),
        (Store, 0x3000, 4),
    ]));
    let c = s.finish();
    assert_eq!(
        c,
        CachegrindCounts {
            d_refs: 3,
            d_reads: 2,
            d_writes: 1,
            d1_misses: 2,
            d1_read_misses: 1,
            d1_write_misses: 1,
            lld_misses: 2,
            lld_read_misses: 1,
            lld_write_misses: 1,
            ll_refs: 2,
            ll_misses: 2,
            ..CachegrindCounts::default()
        }
    );
}

#[test]
fn instruction_fetches_straddle_too() {
    let mut s = sim();
    // A 7-byte instruction at 0x403c spans lines 0x100 and 0x101.
    s.observe(&batch(&[
        (Instr, 0x403c, 7),
        (Instr, 0x4040, 3),
        (Instr, 0x4000, 2),
    ]));
    let c = s.finish();
    assert_eq!((c.i_refs, c.i1_misses, c.lli_misses), (3, 1, 1));
}

#[test]
fn large_data_accesses_are_cut_to_the_smallest_line() {
    let mut s = sim();
    // 512 bytes from 0x1030 would touch 9 lines; cut to 64 bytes it touches 0x40 and 0x41 only.
    s.observe(&batch(&[(Load, 0x1030, 512), (Load, 0x1080, 8)]));
    let c = s.finish();
    assert_eq!((c.d_refs, c.d1_misses), (2, 2));
    let [_, d1, _] = s.caches();
    assert!(has(d1, 0x41) && !has(d1, 0x43));
}

#[test]
fn line_zero_starts_cached_as_in_cachegrind() {
    let mut s = sim();
    s.observe(&batch(&[(Load, 8, 8), (Instr, 0, 4), (Load, 64 * 32, 8)]));
    let c = s.finish();
    // Line 0 hits in D1 and I1; line 32 shares set 0 with it and misses.
    assert_eq!((c.d1_misses, c.i1_misses, c.lld_misses), (1, 0, 1));
}

#[test]
fn cachegrind_limits_are_enforced() {
    let g = |s: &str| Geometry::parse(s).unwrap();
    let e = CachegrindSim::new(g("4K,2,8"), g("4K,2,64"), g("16K,4,64")).unwrap_err();
    assert!(
        e.to_string()
            .contains("I1 (4 KiB, 2-way, 8 B lines): Cachegrind needs lines of at least 16 B"),
        "{e}"
    );
    let e = CachegrindSim::new(g("4K,2,64"), g("4K,2,64"), g("64,1,64")).unwrap_err();
    assert!(e.to_string().contains("larger than one line"), "{e}");
}
