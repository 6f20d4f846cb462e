//! `stats`: reference counts by kind, distinct lines, bytes touched and address range.
//!
//! Data references are loads, stores and modifies; instruction fetches are counted apart. A
//! reference counts toward the line of its first byte (docs/definitions.md); accesses that
//! straddle a line boundary are counted separately so a Cachegrind-style view can be derived.
//! Memory grows with the number of distinct lines, not with the trace length.

use hashbrown::HashSet;

use crate::access::{AccessKind, LineSize};
use crate::analysis::Analysis;
use crate::batch::Batch;

pub(crate) type LineSet = HashSet<u64, foldhash::fast::RandomState>;

/// Accumulates [`TraceStats`] over a trace.
#[derive(Debug)]
pub struct StatsAnalysis {
    pub(crate) line_size: LineSize,
    /// References by [`AccessKind`] index.
    pub(crate) by_kind: [u64; 4],
    pub(crate) data_lines: LineSet,
    pub(crate) instr_lines: LineSet,
    /// The two sets' memory, charged to the [`crate::budget`].
    charge: crate::budget::Charge,
    pub(crate) data_bytes: u64,
    pub(crate) straddling: u64,
    pub(crate) min_addr: u64,
    pub(crate) max_addr: u64,
}

/// What `cachescope stats` reports. Field names are a public contract (`--json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceStats {
    /// Data references: loads + stores + modifies.
    pub refs: u64,
    /// Loads.
    pub loads: u64,
    /// Stores.
    pub stores: u64,
    /// Modifies (read-modify-write; one reference each).
    pub modifies: u64,
    /// Instruction fetches.
    pub instructions: u64,
    /// Distinct cache lines touched by data references (line of the first byte).
    pub distinct_lines: u64,
    /// Distinct cache lines touched by instruction fetches.
    pub distinct_instruction_lines: u64,
    /// `distinct_lines × line_size`: the data footprint in bytes at this line size.
    pub bytes_touched: u64,
    /// Bytes accessed by data references (sum of their sizes).
    pub data_bytes_accessed: u64,
    /// Data references that straddle a line boundary (touch two lines).
    pub straddling_refs: u64,
    /// The line size in bytes.
    pub line_size: u64,
    /// Lowest data byte address, as `0x…` (absent when there are no data references).
    pub address_min: Option<String>,
    /// Highest data byte address touched (last byte of an access), as `0x…`.
    pub address_max: Option<String>,
}

/// The `stats` report: the statistics plus where they come from and what reading noticed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StatsReport {
    /// The trace (file name, `<stdin>` or `<workload NAME>`).
    pub source: String,
    /// The format read (`workload` for generated traces).
    pub format: String,
    /// The compression detected.
    pub compression: String,
    /// The statistics.
    #[serde(flatten)]
    pub stats: TraceStats,
    /// Lines skipped under `--skip-bad-lines`.
    pub skipped_lines: u64,
    /// What detection assumed where the input was ambiguous.
    pub notes: Vec<String>,
    /// Each thread's share, in thread order (one entry for a single-threaded trace); their
    /// references add up to the trace's, their distinct lines need not.
    pub threads: Vec<ThreadStats>,
}

/// One thread's references in a [`StatsReport`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ThreadStats {
    /// The thread (docs/threads.md).
    pub thread: crate::access::ThreadId,
    /// Its data references.
    pub refs: u64,
    /// Its loads, stores and modifies.
    pub loads: u64,
    /// Stores.
    pub stores: u64,
    /// Modifies.
    pub modifies: u64,
    /// Its instruction fetches.
    pub instructions: u64,
    /// Distinct lines its data references touch.
    pub distinct_lines: u64,
}

impl ThreadStats {
    /// Thread `thread`'s entry from the statistics of its references alone.
    pub fn new(thread: crate::access::ThreadId, s: &TraceStats) -> ThreadStats {
        ThreadStats {
            thread,
            refs: s.refs,
            loads: s.loads,
            stores: s.stores,
            modifies: s.modifies,
            instructions: s.instructions,
            distinct_lines: s.distinct_lines,
        }
    }
}

impl StatsReport {
    /// The report for `stats` computed over `trace`, with the statistics of each thread's
    /// references (a [`PerThreadPlan`](crate::parallel::PerThreadPlan) of the same pass).
    pub fn new(
        trace: &crate::trace::Trace,
        stats: TraceStats,
        threads: &[(crate::access::ThreadId, TraceStats)],
    ) -> StatsReport {
        StatsReport {
            source: trace.source().to_string(),
            format: trace.format_name().to_string(),
            compression: trace.compression().name().to_string(),
            threads: threads
                .iter()
                .map(|(t, s)| ThreadStats::new(*t, s))
                .collect(),
            stats,
            skipped_lines: trace.diagnostics().skipped_lines,
            notes: trace
                .notes()
                .iter()
                .cloned()
                .chain(trace.diagnostics().notes)
                .collect(),
        }
    }
}

impl StatsAnalysis {
    /// Statistics at line size `line_size`.
    pub fn new(line_size: LineSize) -> Self {
        StatsAnalysis {
            line_size,
            by_kind: [0; 4],
            data_lines: LineSet::default(),
            instr_lines: LineSet::default(),
            charge: crate::budget::Charge::default(),
            data_bytes: 0,
            straddling: 0,
            min_addr: u64::MAX,
            max_addr: 0,
        }
    }

    /// Adds what `other` saw (another part of the same trace, at the same line size): counts
    /// add, line sets unite, address ranges widen. The chunk merge of `crate::parallel`.
    pub fn merge(&mut self, other: StatsAnalysis) {
        for (a, b) in self.by_kind.iter_mut().zip(other.by_kind) {
            *a += b;
        }
        self.data_lines.extend(other.data_lines);
        self.instr_lines.extend(other.instr_lines);
        self.data_bytes += other.data_bytes;
        self.straddling += other.straddling;
        self.min_addr = self.min_addr.min(other.min_addr);
        self.max_addr = self.max_addr.max(other.max_addr);
        self.recharge();
    }

    /// Charges the line sets' memory to the [`crate::budget`] (after they were filled other
    /// than by [`Analysis::observe`], e.g. decoded from another process); false once the
    /// budget is exceeded.
    pub(crate) fn recharge(&mut self) -> bool {
        let bytes = self.data_lines.allocation_size() + self.instr_lines.allocation_size();
        self.charge.set(bytes)
    }

    /// The totals.
    pub fn finish(&self) -> TraceStats {
        let [loads, stores, modifies, instructions] = self.by_kind;
        let refs = loads + stores + modifies;
        let distinct_lines = self.data_lines.len() as u64;
        TraceStats {
            refs,
            loads,
            stores,
            modifies,
            instructions,
            distinct_lines,
            distinct_instruction_lines: self.instr_lines.len() as u64,
            bytes_touched: distinct_lines * self.line_size.bytes(),
            data_bytes_accessed: self.data_bytes,
            straddling_refs: self.straddling,
            line_size: self.line_size.bytes(),
            address_min: (refs > 0).then(|| format!("{:#x}", self.min_addr)),
            address_max: (refs > 0).then(|| format!("{:#x}", self.max_addr)),
        }
    }
}

impl Analysis for StatsAnalysis {
    fn observe(&mut self, b: &Batch) {
        let shift = self.line_size.shift();
        for ((&addr, &size), &kind) in b.addrs.iter().zip(&b.sizes).zip(&b.kinds) {
            self.by_kind[kind as usize] += 1;
            if kind == AccessKind::Instr {
                self.instr_lines.insert(addr >> shift);
                continue;
            }
            let last = addr.saturating_add(u64::from(size.max(1)) - 1);
            self.data_lines.insert(addr >> shift);
            self.straddling += u64::from((last >> shift) != (addr >> shift));
            self.data_bytes += u64::from(size);
            self.min_addr = self.min_addr.min(addr);
            self.max_addr = self.max_addr.max(last);
        }
        self.recharge();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;

    #[test]
    fn counts_a_hand_made_trace() {
        let ls = LineSize::new(64).unwrap();
        let mut s = StatsAnalysis::new(ls);
        let batch: Batch = [
            Access {
                addr: 0x400,
                size: 3,
                kind: AccessKind::Instr,
                pc: Some(0x400),
            },
            Access::load(0x1000, 8),
            Access::store(0x103c, 8), // straddles 0x1000-line and 0x1040-line
            Access {
                addr: 0x2000,
                size: 4,
                kind: AccessKind::Modify,
                pc: None,
            },
            Access::load(0x1008, 8),
        ]
        .into_iter()
        .collect();
        s.observe(&batch);
        let t = s.finish();
        assert_eq!(
            (t.refs, t.loads, t.stores, t.modifies, t.instructions),
            (4, 2, 1, 1, 1)
        );
        assert_eq!(t.distinct_lines, 2); // 0x1000>>6 (three refs) and 0x2000>>6
        assert_eq!(t.distinct_instruction_lines, 1);
        assert_eq!(t.straddling_refs, 1);
        assert_eq!(t.bytes_touched, 128);
        assert_eq!(t.data_bytes_accessed, 28);
        assert_eq!(t.address_min.as_deref(), Some("0x1000"));
        assert_eq!(t.address_max.as_deref(), Some("0x2003"));
    }

    #[test]
    fn empty_trace_has_no_address_range() {
        let t = StatsAnalysis::new(LineSize::DEFAULT).finish();
        assert_eq!(t.refs, 0);
        assert_eq!(t.address_min, None);
    }
}
