//! The report's pages section: each thread's TLB miss ratio for every entry count, from the
//! page-level stack distances the pass measured ([`crate::tlb::PageCurves`]).

use super::model::{PageThreadCurve, PagesReport};
use crate::Result;
use crate::reuse::sizes_log_range;
use crate::tlb::{MAX_ENTRIES, PageCurves, page_points};

/// Fewest entries a curve goes up to: the Skylake DTLB's 64 stay on the axis.
const MIN_TOP: u64 = 64;

/// The section of `curves`; `None` when no thread made a data reference.
pub(super) fn section(curves: &PageCurves) -> Result<Option<PagesReport>> {
    let threads = curves.finish();
    if threads.iter().all(|(_, d)| d.refs == 0) {
        return Ok(None);
    }
    // Past a thread's distinct pages every TLB holds them all: the curves stop at twice the
    // most pages of any thread, so that they share one axis.
    let most = threads.iter().map(|(_, d)| d.cold).max().unwrap_or(0);
    let top = (2 * most).next_power_of_two().clamp(MIN_TOP, MAX_ENTRIES);
    let entries = sizes_log_range(1, top, 8)?;
    let page_size = threads.first().map_or(4096, |(_, d)| d.line_size);
    let threads = threads
        .iter()
        .map(|(thread, d)| PageThreadCurve {
            thread: *thread,
            refs: d.refs,
            pages: d.cold,
            points: page_points(d, &entries),
        })
        .collect();
    Ok(Some(PagesReport { page_size, threads }))
}
