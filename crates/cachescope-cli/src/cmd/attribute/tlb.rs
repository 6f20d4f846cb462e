//! `attribute`'s TLB tables: first-level misses and page walks by structure and by code line
//! (`--dtlb …`, `--tlb skylake`; docs/tlb.md).

use std::fmt::Write as _;

use cachescope::attribution::tlb::TlbAttribution;
use cachescope::units::thousands;

use super::table::cut;

/// The TLB tables, `top` rows each.
pub(super) fn render(t: &TlbAttribution, top: usize) -> String {
    let mut o = String::new();
    let l1: u64 = t.buckets.iter().map(|b| b.dtlb_misses).sum();
    let _ = writeln!(
        o,
        "\nTLB misses by structure ({} DTLB misses, {} page walks):",
        thousands(l1),
        thousands(t.page_walks)
    );
    let _ = writeln!(
        o,
        "{:<48} {:>12} {:>12}",
        "structure", "DTLB misses", "page walks"
    );
    for b in t.buckets.iter().take(top) {
        let _ = writeln!(
            o,
            "{:<48} {:>12} {:>12}",
            cut(&b.name, 48),
            thousands(b.dtlb_misses),
            thousands(b.page_walks)
        );
    }
    let _ = writeln!(o, "\nTLB misses by code line:");
    let _ = writeln!(
        o,
        "{:<48} {:>12} {:>12}",
        "code", "DTLB misses", "page walks"
    );
    for l in t.lines.iter().take(top) {
        let _ = writeln!(
            o,
            "{:<48} {:>12} {:>12}",
            cut(&l.location, 48),
            thousands(l.dtlb_misses),
            thousands(l.page_walks)
        );
    }
    o
}
